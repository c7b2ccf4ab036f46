#include "shardc/ir/Printer.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace shardc {
namespace {

bool isIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

std::string quote(const std::string& n) {
  std::string q = "\"";
  for (char c : n) {
    if (c == '"' || c == '\\') q += '\\';
    if (c == '\n')
      q += "\\n";
    else
      q += c;
  }
  return q + "\"";
}

template <typename T> std::string shortest(T v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string printElement(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
  case DType::F64:
    return shortest(t.getDouble(i));
  case DType::F32:
  case DType::F16:
  case DType::BF16:
    return shortest(static_cast<float>(t.getDouble(i)));
  default:
    return std::to_string(t.getInt(i));
  }
}

std::string printTensor(const Tensor& t) {
  std::string s = "dense<" + t.type().str() + ", ";
  int64_t n = t.numel();
  bool splat = n > 1;
  size_t es = dtypeSize(t.dtype());
  for (int64_t i = 1; splat && i < n; ++i)
    splat = std::memcmp(t.data(), t.data() + static_cast<size_t>(i) * es, es) == 0;
  if (splat) return s + printElement(t, 0) + ">";
  s += "[";
  for (int64_t i = 0; i < n; ++i)
    s += (i ? ", " : "") + printElement(t, i);
  return s + "]>";
}

class FunctionPrinter {
public:
  FunctionPrinter(const Function& f, const PrintOptions& options) : f_(f), options_(options) {
    assignNames();
    if (options_.named)
      for (const auto& [v, name] : names_)
        options_.named(*v, name);
  }

  std::string print() {
    std::ostringstream os;
    os << "func @" << printName(f_.name()) << "(";
    for (size_t i = 0; i < f_.numArguments(); ++i) {
      Value* a = f_.argument(i);
      os << (i ? ", " : "") << argKindName(a->argKind()) << " " << ref(a) << ": " << a->type().str()
         << annotation(a);
    }
    os << ") -> (";
    for (size_t i = 0; i < f_.results().size(); ++i) {
      const FuncResult& r = f_.results()[i];
      os << (i ? ", " : "") << printName(r.name) << ": " << r.value->type().str();
      if (options_.annotateResult) os << spaced(options_.annotateResult(f_, i));
      if (r.tiedArg >= 0) os << " tied " << ref(f_.argument(static_cast<size_t>(r.tiedArg)));
    }
    os << ") {\n";
    for (const auto& op : f_.ops()) {
      os << "  ";
      for (size_t i = 0; i < op->numResults(); ++i)
        os << (i ? ", " : "") << ref(op->result(i));
      if (op->numResults()) os << " = ";
      os << op->name() << "(";
      for (size_t i = 0; i < op->numOperands(); ++i)
        os << (i ? ", " : "") << ref(op->operand(i));
      os << ")";
      if (!op->attrs().empty()) {
        os << " {";
        bool first = true;
        for (const auto& [k, v] : op->attrs().entries()) {
          os << (first ? "" : ", ") << k << " = " << printAttr(v);
          first = false;
        }
        os << "}";
      }
      os << " : ";
      for (size_t i = 0; i < op->numResults(); ++i)
        os << (i ? ", " : "") << op->result(i)->type().str() << annotation(op->result(i));
      os << "\n";
    }
    os << "  return";
    for (size_t i = 0; i < f_.results().size(); ++i)
      os << (i ? ", " : " ") << ref(f_.results()[i].value);
    os << "\n}\n";
    return os.str();
  }

private:
  std::string ref(const Value* v) { return "%" + printName(names_.at(v)); }
  static std::string spaced(const std::string& s) { return s.empty() ? s : " " + s; }
  std::string annotation(const Value* v) {
    return options_.annotate ? spaced(options_.annotate(*v)) : "";
  }

  // Source names are kept; unnamed values get the smallest unused number; a repeated
  // name gets a numeric suffix so that the text stays in SSA form.
  void assignNames() {
    std::unordered_set<std::string> used;
    std::vector<const Value*> all;
    for (size_t i = 0; i < f_.numArguments(); ++i)
      all.push_back(f_.argument(i));
    for (const auto& op : f_.ops())
      for (size_t i = 0; i < op->numResults(); ++i)
        all.push_back(op->result(i));
    for (const Value* v : all)
      if (!v->name().empty()) used.insert(v->name());
    std::unordered_set<std::string> taken;
    int64_t next = 0;
    for (const Value* v : all) {
      std::string n = v->name();
      if (n.empty() || taken.count(n)) {
        std::string base = n.empty() ? "" : n + "_";
        do
          n = base + std::to_string(next++);
        while (used.count(n) || taken.count(n));
      }
      taken.insert(n);
      names_[v] = n;
    }
  }

  const Function& f_;
  const PrintOptions& options_;
  std::unordered_map<const Value*, std::string> names_;
};

} // namespace

std::string printName(const std::string& n) {
  bool bare = !n.empty();
  bool digits = !n.empty() && std::all_of(n.begin(), n.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  if (!digits) {
    bare = bare && isIdentStart(n[0]);
    for (char c : n)
      bare = bare && isIdentChar(c);
  }
  return bare ? n : quote(n);
}

std::string printAttr(const Attr& a) {
  switch (a.kind()) {
  case AttrKind::Bool:
    return a.asBool() ? "true" : "false";
  case AttrKind::Int:
    return std::to_string(a.asInt());
  case AttrKind::Float:
    return shortest(a.asFloat());
  case AttrKind::String:
    return quote(a.asString());
  case AttrKind::Ints: {
    std::string s = "[";
    for (size_t i = 0; i < a.asInts().size(); ++i)
      s += (i ? ", " : "") + std::to_string(a.asInts()[i]);
    return s + "]";
  }
  case AttrKind::Floats: {
    std::string s = "[";
    for (size_t i = 0; i < a.asFloats().size(); ++i)
      s += (i ? ", " : "") + shortest(a.asFloats()[i]);
    return s + "]";
  }
  case AttrKind::Type:
    return std::string(dtypeName(a.asType()));
  case AttrKind::Tensor:
    return printTensor(a.asTensor());
  }
  return "?";
}

std::string printFunction(const Function& f, const PrintOptions& options) {
  return FunctionPrinter(f, options).print();
}

std::string printModule(const Module& m, const PrintOptions& options) {
  std::string s;
  if (!options.meshLine.empty()) s = options.meshLine + "\n";
  for (size_t i = 0; i < m.functions().size(); ++i)
    s += (i || !s.empty() ? "\n" : "") + printFunction(*m.functions()[i], options);
  return s;
}

} // namespace shardc
