#include "shardc/sharding/Strategy.h"

#include "shardc/ir/IR.h"
#include "shardc/ir/Printer.h"
#include "shardc/sharding/Annotations.h"
#include "shardc/support/Error.h"

#include <cctype>
#include <map>

namespace shardc {
namespace {

bool space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}
bool nameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && space(s.back()))
    s.remove_suffix(1);
  return s;
}

// Drops a '#' comment that is not inside a quoted name.
std::string_view stripComment(std::string_view line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (quoted && line[i] == '\\')
      ++i;
    else if (line[i] == '"')
      quoted = !quoted;
    else if (!quoted && line[i] == '#')
      return line.substr(0, i);
  }
  return line;
}

class StrategyParser {
public:
  explicit StrategyParser(const std::string& filename) : filename_(filename) {}

  Strategy parse(std::string_view text) {
    for (size_t start = 0; start < text.size(); ++line_) {
      size_t end = std::min(text.find('\n', start), text.size());
      parseLine(trim(stripComment(text.substr(start, end - start))));
      start = end + 1;
    }
    return std::move(strategy_);
  }

private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(filename_ + ":" + std::to_string(line_) + ": " + msg);
  }

  void parseLine(std::string_view l) {
    if (l.empty()) return;
    // "mesh: [...]" shards an argument named mesh.
    if (l.starts_with("mesh") && (l.size() == 4 || space(l[4])) &&
        !trim(l.substr(4)).starts_with(":"))
      return parseMesh(trim(l.substr(4)));
    std::string name = parseName(l);
    l = trim(l);
    if (!l.starts_with(":")) fail("expected ':' after '" + name + "'");
    TensorSharding s;
    try {
      s = parseSharding(trim(l.substr(1)));
    } catch (const Error& e) {
      fail("argument '" + name + "': " + e.what());
    }
    if (auto [it, fresh] = firstLine_.emplace(name, line_); !fresh)
      fail("argument '" + name + "' is given twice (first on line " + std::to_string(it->second) +
           ")");
    strategy_.entries.push_back({name, std::move(s), line_});
  }

  void parseMesh(std::string_view spec) {
    if (strategy_.mesh)
      fail("the mesh is given twice (first on line " + std::to_string(strategy_.meshLine) + ")");
    try {
      strategy_.mesh = Mesh::parse(spec);
    } catch (const Error& e) {
      fail(e.what());
    }
    strategy_.meshLine = line_;
  }

  // A bare name or a double-quoted one with \" \\ \n escapes; consumes it from `l`.
  std::string parseName(std::string_view& l) const {
    std::string name;
    if (l.front() != '"') {
      // A bare name runs to the ':' before the sharding, so exporter names such as
      // onnx::MatMul_12 or /h.0/attn need no quotes.
      size_t n = 0;
      for (size_t i = 0; i < l.size() && !n; ++i)
        if (l[i] == ':' && trim(l.substr(i + 1)).starts_with("[")) n = i;
      if (n == 0) {
        while (n < l.size() && nameChar(l[n]))
          ++n;
      }
      name = trim(l.substr(0, n));
      if (name.empty() || name.find_first_of(" \t\"") != std::string::npos)
        fail("expected 'NAME: [sharding]' or 'mesh AXIS=N, ...', got '" + std::string(l) + "'");
      l.remove_prefix(n);
      return name;
    }
    for (size_t i = 1; i < l.size(); ++i) {
      if (l[i] == '"') {
        l.remove_prefix(i + 1);
        return name;
      }
      if (l[i] == '\\' && i + 1 < l.size()) {
        char e = l[++i];
        if (e != '"' && e != '\\' && e != 'n') fail("unknown escape sequence in a name");
        name += e == 'n' ? '\n' : e;
      } else {
        name += l[i];
      }
    }
    fail("unterminated name");
  }

  const std::string& filename_;
  int64_t line_ = 1;
  Strategy strategy_;
  std::map<std::string, int64_t> firstLine_;
};

// "a, b, c" or "a, b, ... (12 more)": enough to spot a typo without flooding the terminal.
std::string argumentList(const Function& f) {
  constexpr size_t kShown = 10;
  std::string s;
  for (size_t i = 0; i < f.numArguments() && i < kShown; ++i)
    s += (i ? ", " : "") + printName(f.argument(i)->name());
  if (f.numArguments() > kShown)
    s += ", ... (" + std::to_string(f.numArguments() - kShown) + " more)";
  return s;
}

} // namespace

Strategy parseStrategy(std::string_view text, const std::string& filename) {
  return StrategyParser(filename).parse(text);
}

void applyStrategy(const Strategy& strategy, const Function& f, ShardingPlan& plan,
                   const std::string& filename) {
  auto at = [&](int64_t line) { return filename + ":" + std::to_string(line) + ": "; };
  const Mesh* mesh = &plan.mesh();
  if (strategy.mesh && mesh->axes().empty()) {
    SHARDC_CHECK(plan.size() == 0, "shardings without a mesh");
    mesh = &*strategy.mesh;
  } else if (strategy.mesh && !(*strategy.mesh == *mesh)) {
    throw Error(at(strategy.meshLine) + "the strategy's mesh " + strategy.mesh->str() +
                " differs from the IR's mesh " + mesh->str());
  } else if (mesh->axes().empty()) {
    throw Error(filename + ": no mesh: add a line like 'mesh data=2, model=2' to the strategy "
                           "or declare one in the IR");
  }
  // Everything is checked before the plan changes.
  std::vector<std::pair<const Value*, const TensorSharding*>> fixed;
  for (const StrategyEntry& e : strategy.entries) {
    const Value* a = f.findArgument(e.name);
    if (!a)
      throw Error(at(e.line) + "unknown argument '" + e.name + "'; the arguments of @" +
                  printName(f.name()) + " are: " + argumentList(f));
    std::string what = "argument '" + e.name + "' (" + a->type().str() + "): ";
    if (std::string err = checkSharding(e.sharding, a->type(), *mesh); !err.empty())
      throw Error(at(e.line) + what + err);
    const ValueSharding* old = plan.find(a);
    if (old && old->origin.fixed() && !(old->sharding == e.sharding))
      throw Error(at(e.line) + what + "the strategy gives " + e.sharding.str() +
                  ", but it is already fixed to " + old->sharding.str() + " (" + old->origin.str() +
                  ")");
    fixed.emplace_back(a, &e.sharding);
  }
  if (mesh != &plan.mesh()) plan = ShardingPlan(*mesh);
  for (const auto& [a, s] : fixed)
    plan.set(a, *s, {OriginKind::User, ""});
}

std::string writeStrategy(const Function& f, const ShardingPlan& plan) {
  std::string out = "# sharding strategy for @" + printName(f.name()) + "\n";
  if (!plan.mesh().axes().empty()) out += meshDeclaration(plan.mesh()) + "\n";
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    out += printName(a->name()) + ": " + plan.shardingOf(a).str() + "\n";
  }
  return out;
}

} // namespace shardc
