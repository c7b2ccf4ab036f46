#include "shardc/ir/Parser.h"

#include "Lexer.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Verifier.h"
#include "shardc/ops/OpRegistry.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace shardc {
namespace {

constexpr int64_t kMaxSplatBytes = int64_t(1) << 30;

class Parser {
public:
  Parser(std::string_view text, DiagEngine& diags, ParsedAnnotations& annotations)
      : lex_(text), diags_(diags), ann_(annotations) {
    advance();
  }

  std::unique_ptr<Module> parse() {
    auto m = std::make_unique<Module>();
    m->filename = diags_.filename();
    while (tok_.kind != Tok::Eof) {
      if (isIdent("mesh")) {
        if (!m->functions().empty()) return fail("the mesh must be declared before the functions");
        if (!ann_.mesh.empty()) return fail("the mesh is declared twice");
        if (!parseMesh()) return nullptr;
        continue;
      }
      if (!isIdent("func")) return fail("expected 'func'");
      if (!parseFunction(*m)) return nullptr;
    }
    if (failed_) return nullptr;
    return m;
  }

private:
  void advance() {
    tok_ = lex_.next();
    if (tok_.kind == Tok::Error) fail(tok_.text);
  }
  std::nullptr_t fail(const std::string& msg) { return failAt(tok_.loc, msg); }
  std::nullptr_t failAt(Loc loc, const std::string& msg) {
    if (!failed_) diags_.error(loc, msg);
    failed_ = true;
    return nullptr;
  }
  bool isIdent(std::string_view s) const { return tok_.kind == Tok::Ident && tok_.text == s; }
  bool isPunct(char c) const { return tok_.kind == Tok::Punct && tok_.text[0] == c; }
  std::string describe() const {
    switch (tok_.kind) {
    case Tok::Eof:
      return "end of file";
    case Tok::ValueRef:
      return "'%" + tok_.text + "'";
    case Tok::FuncRef:
      return "'@" + tok_.text + "'";
    case Tok::String:
      return "string";
    default:
      return "'" + tok_.text + "'";
    }
  }
  bool expectPunct(char c) {
    if (failed_) return false;
    if (!isPunct(c)) {
      fail(std::string("expected '") + c + "', got " + describe());
      return false;
    }
    advance();
    return !failed_;
  }

  bool parseInt(int64_t& v) {
    if (tok_.kind != Tok::Int) return fail("expected an integer, got " + describe()), false;
    const char* b = tok_.text.data() + (tok_.text[0] == '+');
    auto r = std::from_chars(b, tok_.text.data() + tok_.text.size(), v);
    if (r.ec != std::errc()) return fail("integer " + tok_.text + " is out of range"), false;
    advance();
    return !failed_;
  }

  bool parseNumber(double& v, bool& isInt, int64_t& iv) {
    isInt = tok_.kind == Tok::Int;
    if (isInt) {
      if (!parseInt(iv)) return false;
      v = static_cast<double>(iv);
      return true;
    }
    if (tok_.kind == Tok::Ident && (tok_.text == "inf" || tok_.text == "nan")) {
      v = tok_.text == "inf" ? INFINITY : NAN;
    } else if (tok_.kind == Tok::Float) {
      if (tok_.text == "-inf" || tok_.text == "+inf") {
        v = tok_.text[0] == '-' ? -INFINITY : INFINITY;
      } else {
        const char* b = tok_.text.data() + (tok_.text[0] == '+');
        auto r = std::from_chars(b, tok_.text.data() + tok_.text.size(), v);
        if (r.ec != std::errc()) return fail("number " + tok_.text + " is out of range"), false;
      }
    } else {
      return fail("expected a number, got " + describe()), false;
    }
    advance();
    return !failed_;
  }

  // dtype '[' dims ']'
  bool parseType(TensorType& t) {
    if (tok_.kind != Tok::Ident)
      return fail("expected a tensor type like f32[2,3], got " + describe()), false;
    auto dt = parseDType(tok_.text);
    if (!dt)
      return fail("unknown element type '" + tok_.text +
                  "' (expected f32, f16, bf16, f64, i64, i32 or i1)"),
             false;
    Loc loc = tok_.loc;
    advance();
    t.dtype = *dt;
    t.shape.clear();
    if (!expectPunct('[')) return false;
    while (!isPunct(']')) {
      if (!t.shape.empty() && !expectPunct(',')) return false;
      int64_t d;
      Loc dl = tok_.loc;
      if (!parseInt(d)) return false;
      if (d < 0) return failAt(dl, "dimension " + std::to_string(d) + " is negative"), false;
      t.shape.push_back(d);
    }
    advance();
    if (!checkedNumel(t.shape))
      return failAt(loc, "tensor type " + t.str() + " has too many elements"), false;
    return !failed_;
  }

  // A mesh axis name: an identifier without dots.
  bool parseAxisName(std::string& out) {
    if (tok_.kind != Tok::Ident || tok_.text.find('.') != std::string::npos)
      return fail("expected a mesh axis name, got " + describe()), false;
    out += tok_.text;
    advance();
    return !failed_;
  }

  // 'mesh' axis '=' size (',' axis '=' size)*, kept as "data=2,model=2".
  bool parseMesh() {
    ann_.meshLoc = tok_.loc;
    advance(); // 'mesh'
    std::string text;
    do {
      if (!text.empty()) {
        advance();
        text += ",";
      }
      int64_t size;
      if (!parseAxisName(text) || !expectPunct('=') || !parseInt(size)) return false;
      text += "=" + std::to_string(size);
    } while (isPunct(','));
    ann_.mesh = text;
    return true;
  }

  // '{' (axis (',' axis)*)? '}', appended to `text` as "{a, b}".
  bool parseAxisList(std::string& text) {
    if (!expectPunct('{')) return false;
    text += "{";
    for (bool first = true; !isPunct('}'); first = false) {
      if (!first) {
        if (!expectPunct(',')) return false;
        text += ", ";
      }
      if (!parseAxisName(text)) return false;
    }
    advance();
    text += "}";
    return !failed_;
  }

  // 'sharding' '[' (axes (':' chunks)?, ...) ']' ('partial' axes)?, kept in the form
  // TensorSharding::str() prints; `text` stays empty when there is no annotation.
  bool parseShardingAnnotation(std::string& text, Loc& loc) {
    text.clear();
    if (!isIdent("sharding")) return true;
    loc = tok_.loc;
    advance();
    if (!expectPunct('[')) return false;
    text = "[";
    for (bool first = true; !isPunct(']'); first = false) {
      if (!first) {
        if (!expectPunct(',')) return false;
        text += ", ";
      }
      if (!parseAxisList(text)) return false;
      if (isPunct(':')) {
        advance();
        Loc cl = tok_.loc;
        int64_t chunks;
        if (!parseInt(chunks)) return false;
        if (chunks < 1)
          return failAt(cl, "chunk count " + std::to_string(chunks) + " must be positive"), false;
        text += ":" + std::to_string(chunks);
      }
    }
    advance();
    text += "]";
    if (isIdent("partial")) {
      Loc pl = tok_.loc;
      advance();
      text += " partial";
      if (!parseAxisList(text)) return false;
      if (text.ends_with("{}")) return failAt(pl, "partial{} needs at least one axis"), false;
    }
    return !failed_;
  }

  void annotate(const Function& f, const Value* v, size_t result, std::string text, Loc loc) {
    if (!text.empty()) ann_.shardings.push_back({&f, v, result, std::move(text), loc});
  }

  bool parseName(std::string& name) {
    if (tok_.kind == Tok::Ident || tok_.kind == Tok::String || tok_.kind == Tok::Int) {
      name = tok_.text;
      advance();
      return !failed_;
    }
    return fail("expected a name, got " + describe()), false;
  }

  bool parseDense(Attr& out) {
    advance(); // 'dense'
    if (!expectPunct('<')) return false;
    TensorType t;
    if (!parseType(t)) return false;
    if (!expectPunct(',')) return false;
    Loc loc = tok_.loc;
    std::vector<double> dv;
    std::vector<int64_t> iv;
    bool list = isPunct('[');
    if (list) advance();
    while (!failed_ && !(list && isPunct(']'))) {
      if ((!dv.empty() || !iv.empty()) && !expectPunct(',')) return false;
      double d;
      bool isInt;
      int64_t i;
      if (!parseNumber(d, isInt, i)) return false;
      if (!isFloat(t.dtype)) {
        if (!isInt)
          return failAt(loc, "element type " + std::string(dtypeName(t.dtype)) +
                                 " needs integer elements"),
                 false;
        if ((t.dtype == DType::I32 && (i < INT32_MIN || i > INT32_MAX)) ||
            (t.dtype == DType::I1 && i != 0 && i != 1))
          return failAt(loc, "element " + std::to_string(i) + " does not fit " +
                                 std::string(dtypeName(t.dtype))),
                 false;
      }
      dv.push_back(d);
      iv.push_back(i);
      if (!list) break;
    }
    if (list) advance();
    int64_t n = t.numel();
    bool splat = !list || (dv.size() == 1 && n != 1);
    if (splat && dv.size() != 1) return failAt(loc, "expected one splat value"), false;
    if (!splat && static_cast<int64_t>(dv.size()) != n)
      return failAt(loc, "dense literal has " + std::to_string(dv.size()) + " elements, but " +
                             t.str() + " needs " + std::to_string(n)),
             false;
    // A list is bounded by the text; a splat is not, so cap what it may allocate.
    if (splat && t.bytes() > kMaxSplatBytes)
      return failAt(loc, "splat literal of " + t.str() + " is too large (" +
                             std::to_string(t.bytes()) + " bytes; the limit is 1 GiB)"),
             false;
    auto tensor = std::make_shared<Tensor>(t);
    for (int64_t k = 0; k < n; ++k) {
      size_t e = splat ? 0 : static_cast<size_t>(k);
      if (isFloat(t.dtype))
        tensor->setDouble(k, dv[e]);
      else
        tensor->setInt(k, iv[e]);
    }
    out = Attr(TensorRef(std::move(tensor)));
    return expectPunct('>');
  }

  bool parseAttrValue(Attr& out) {
    if (isIdent("true") || isIdent("false")) {
      out = Attr(tok_.text == "true");
      advance();
      return !failed_;
    }
    if (isIdent("dense")) return parseDense(out);
    if (tok_.kind == Tok::Ident && tok_.text != "inf" && tok_.text != "nan") {
      auto dt = parseDType(tok_.text);
      if (!dt) return fail("unknown attribute value " + describe()), false;
      out = Attr(*dt);
      advance();
      return !failed_;
    }
    if (tok_.kind == Tok::String) {
      out = Attr(tok_.text);
      advance();
      return !failed_;
    }
    if (isPunct('[')) {
      advance();
      std::vector<double> dv;
      std::vector<int64_t> iv;
      bool anyFloat = false;
      while (!isPunct(']')) {
        if (!dv.empty() && !expectPunct(',')) return false;
        double d;
        bool isInt;
        int64_t i;
        if (!parseNumber(d, isInt, i)) return false;
        anyFloat |= !isInt;
        dv.push_back(d);
        iv.push_back(i);
      }
      advance();
      out = anyFloat ? Attr(std::move(dv)) : Attr(std::move(iv));
      return !failed_;
    }
    double d;
    bool isInt;
    int64_t i;
    if (!parseNumber(d, isInt, i)) return false;
    out = isInt ? Attr(i) : Attr(d);
    return true;
  }

  bool parseAttrDict(AttrDict& attrs) {
    advance(); // '{'
    while (!isPunct('}')) {
      if (!attrs.empty() && !expectPunct(',')) return false;
      if (tok_.kind != Tok::Ident)
        return fail("expected an attribute name, got " + describe()), false;
      std::string name = tok_.text;
      if (attrs.has(name)) return fail("attribute '" + name + "' is given twice"), false;
      advance();
      if (!expectPunct('=')) return false;
      Attr value(false);
      if (!parseAttrValue(value)) return false;
      attrs.set(name, std::move(value));
    }
    advance();
    return !failed_;
  }

  Value* lookupValue() {
    if (tok_.kind != Tok::ValueRef) return fail("expected a value like %x, got " + describe());
    auto it = values_.find(tok_.text);
    if (it == values_.end()) return fail("use of undefined value '%" + tok_.text + "'");
    advance();
    return failed_ ? nullptr : it->second;
  }

  bool define(const Token& t, Value* v) {
    if (!values_.emplace(t.text, v).second)
      return failAt(t.loc, "value '%" + t.text + "' is defined twice"), false;
    v->setName(t.text);
    return true;
  }

  bool parseOp(Function& f) {
    Loc opLoc = tok_.loc;
    std::vector<Token> resultToks;
    while (tok_.kind == Tok::ValueRef) {
      resultToks.push_back(tok_);
      advance();
      if (!isPunct(',')) break;
      advance();
      // "%a, = op(...)" is a typo, not a one-result op.
      if (tok_.kind != Tok::ValueRef)
        return fail("expected a value like %x, got " + describe()), false;
    }
    if (resultToks.empty())
      return fail("expected an op like '%r = name(...) : type' or 'return', got " + describe()),
             false;
    if (!expectPunct('=')) return false;
    if (tok_.kind != Tok::Ident) return fail("expected an op name, got " + describe()), false;
    const OpDef* def = OpRegistry::get().lookup(tok_.text);
    if (!def) return fail("unknown op '" + tok_.text + "'"), false;
    advance();
    if (!expectPunct('(')) return false;
    std::vector<Value*> operands;
    while (!isPunct(')')) {
      if (!operands.empty() && !expectPunct(',')) return false;
      Value* v = lookupValue();
      if (!v) return false;
      operands.push_back(v);
    }
    advance();
    AttrDict attrs;
    if (isPunct('{') && !parseAttrDict(attrs)) return false;
    if (!expectPunct(':')) return false;
    std::vector<TensorType> types;
    std::vector<std::pair<std::string, Loc>> shardings;
    do {
      if (!types.empty()) advance();
      TensorType t;
      if (!parseType(t)) return false;
      types.push_back(t);
      shardings.emplace_back();
      if (!parseShardingAnnotation(shardings.back().first, shardings.back().second)) return false;
    } while (isPunct(','));
    if (types.size() != resultToks.size())
      return failAt(opLoc, std::to_string(resultToks.size()) + " result name" +
                               (resultToks.size() == 1 ? "" : "s") + " but " +
                               std::to_string(types.size()) + " result type" +
                               (types.size() == 1 ? "" : "s")),
             false;
    std::vector<TensorType> operandTypes;
    for (Value* v : operands)
      operandTypes.push_back(v->type());
    std::string err = verifyOpSignature(*def, operandTypes, attrs, types);
    if (!err.empty()) return failAt(opLoc, "'" + def->name + "' op " + err), false;
    Op* op = f.insertOp(f.ops().end(), def, operands, types, std::move(attrs), opLoc);
    for (size_t i = 0; i < resultToks.size(); ++i) {
      if (!define(resultToks[i], op->result(i))) return false;
      annotate(f, op->result(i), 0, std::move(shardings[i].first), shardings[i].second);
    }
    return true;
  }

  bool parseFunction(Module& m) {
    Loc loc = tok_.loc;
    advance(); // 'func'
    if (tok_.kind != Tok::FuncRef)
      return fail("expected a function name like @main, got " + describe()), false;
    if (m.findFunction(tok_.text))
      return fail("function '@" + tok_.text + "' is defined twice"), false;
    Function* f = m.addFunction(tok_.text, loc);
    values_.clear();
    advance();
    if (!expectPunct('(')) return false;
    while (!isPunct(')')) {
      if (f->numArguments() && !expectPunct(',')) return false;
      ArgKind kind;
      if (isIdent("input"))
        kind = ArgKind::Input;
      else if (isIdent("param"))
        kind = ArgKind::Param;
      else if (isIdent("opt_state"))
        kind = ArgKind::OptState;
      else
        return fail("expected an argument kind (input, param or opt_state), got " + describe()),
               false;
      advance();
      if (tok_.kind != Tok::ValueRef)
        return fail("expected an argument name like %x, got " + describe()), false;
      Token nameTok = tok_;
      advance();
      if (!expectPunct(':')) return false;
      TensorType t;
      if (!parseType(t)) return false;
      Value* arg = f->addArgument(nameTok.text, t, kind);
      std::string sharding;
      Loc shardingLoc;
      if (!define(nameTok, arg) || !parseShardingAnnotation(sharding, shardingLoc)) return false;
      annotate(*f, arg, 0, std::move(sharding), shardingLoc);
    }
    advance();
    if (tok_.kind != Tok::Arrow)
      return fail("expected '->' and the result list, got " + describe()), false;
    advance();
    if (!expectPunct('(')) return false;
    std::vector<std::pair<std::string, TensorType>> results;
    std::vector<int64_t> tiedArgs;
    std::vector<Loc> resultLocs;
    std::vector<std::pair<std::string, Loc>> shardings;
    while (!isPunct(')')) {
      if (!results.empty() && !expectPunct(',')) return false;
      std::string name;
      resultLocs.push_back(tok_.loc);
      if (!parseName(name)) return false;
      for (const auto& r : results)
        if (r.first == name)
          return failAt(resultLocs.back(), "result name '" + name + "' is used twice"), false;
      if (!expectPunct(':')) return false;
      TensorType t;
      shardings.emplace_back();
      if (!parseType(t) ||
          !parseShardingAnnotation(shardings.back().first, shardings.back().second))
        return false;
      int64_t tied = -1;
      if (isIdent("tied")) {
        advance();
        if (tok_.kind != Tok::ValueRef)
          return fail("expected an argument like %w after 'tied', got " + describe()), false;
        Value* a = f->findArgument(tok_.text);
        if (!a)
          return fail("'tied' names '%" + tok_.text + "', which is not an argument of @" +
                      f->name()),
                 false;
        tied = static_cast<int64_t>(a->index());
        advance();
      }
      results.emplace_back(name, t);
      tiedArgs.push_back(tied);
    }
    advance();
    if (!expectPunct('{')) return false;
    while (!isIdent("return")) {
      if (tok_.kind == Tok::Eof)
        return fail("unexpected end of file in @" + f->name() + ": missing 'return'"), false;
      if (!parseOp(*f)) return false;
    }
    Loc retLoc = tok_.loc;
    advance();
    std::vector<std::pair<Value*, Loc>> returned;
    // After a comma another value must follow.
    while (tok_.kind == Tok::ValueRef || !returned.empty()) {
      Loc l = tok_.loc;
      Value* v = lookupValue();
      if (!v) return false;
      returned.emplace_back(v, l);
      if (!isPunct(',')) break;
      advance();
    }
    if (returned.size() != results.size())
      return failAt(retLoc, "return has " + std::to_string(returned.size()) + " value" +
                                (returned.size() == 1 ? "" : "s") + ", but @" + f->name() +
                                " declares " + std::to_string(results.size()) + " result" +
                                (results.size() == 1 ? "" : "s")),
             false;
    if (results.empty())
      return failAt(retLoc, "@" + f->name() + " must return at least one value"), false;
    for (size_t i = 0; i < results.size(); ++i) {
      if (returned[i].first->type() != results[i].second)
        return failAt(returned[i].second, "returned value has type " +
                                              returned[i].first->type().str() + ", but result '" +
                                              results[i].first + "' is declared " +
                                              results[i].second.str()),
               false;
      f->addResult(results[i].first, returned[i].first, tiedArgs[i]);
      annotate(*f, nullptr, i, std::move(shardings[i].first), shardings[i].second);
    }
    return expectPunct('}');
  }

  Lexer lex_;
  DiagEngine& diags_;
  ParsedAnnotations& ann_;
  Token tok_;
  bool failed_ = false;
  std::unordered_map<std::string, Value*> values_;
};

} // namespace

std::unique_ptr<Module> parseModule(std::string_view text, DiagEngine& diags) {
  ParsedAnnotations dropped;
  return parseModule(text, diags, dropped);
}

std::unique_ptr<Module> parseModule(std::string_view text, DiagEngine& diags,
                                    ParsedAnnotations& annotations) {
  annotations = {};
  std::unique_ptr<Module> m = Parser(text, diags, annotations).parse();
  if (!m) annotations = {};
  return m;
}

} // namespace shardc
