#include "CompilerMode.h"

#include "shardc/dataflow/FusionRules.h"
#include "shardc/driver/Driver.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <map>
#include <set>
#include <unordered_set>

namespace shardc {
namespace {

// Whether a matmul is within `depth` ops of `v`, walking to producers (up) or readers.
bool matmulNear(const Value* v, int depth, bool up) {
  if (depth == 0) return false;
  if (up) {
    const Op* d = v->definingOp();
    if (!d) return false;
    if (d->name() == opname::kMatmul) return true;
    for (const Value* x : d->operands())
      if (matmulNear(x, depth - 1, true)) return true;
    return false;
  }
  for (const Use& u : v->uses()) {
    if (!u.user) continue;
    if (u.user->name() == opname::kMatmul) return true;
    for (size_t r = 0; r < u.user->numResults(); ++r)
      if (matmulNear(u.user->result(r), depth - 1, false)) return true;
  }
  return false;
}

// Attention: a softmax of matmul scores (through scaling and masking) whose weights a matmul
// reads. MLP: an activation between two matmuls.
struct Blocks {
  std::vector<size_t> attention, mlp; // op indices
};

Blocks findBlocks(const Function& f) {
  static const std::set<std::string> activations = {"gelu", "relu", "sigmoid", "tanh", "silu"};
  Blocks b;
  size_t i = 0;
  for (const auto& op : f.ops()) {
    if (op->name() == opname::kSoftmax && matmulNear(op->operand(0), 4, true) &&
        matmulNear(op->result(0), 3, false))
      b.attention.push_back(i);
    else if (activations.count(op->name()) && matmulNear(op->operand(0), 5, true) &&
             matmulNear(op->result(0), 5, false)) // GELU's tanh form spelled out too
      b.mlp.push_back(i);
    ++i;
  }
  return b;
}

// The layer pattern the exporter's module scopes give: a path segment ending in ".<index>"
// ("/h.3/", "/layers.3/", "/encoder/layer.3/") that the most ops share over at least two
// indices. "" when the names carry none.
std::string layerPattern(const Function& f,
                         const std::unordered_map<const Op*, std::string>& origins) {
  std::map<std::string, std::pair<std::set<std::string>, int64_t>> seen; // indices, ops
  for (const auto& op : f.ops()) {
    auto it = origins.find(op.get());
    if (it == origins.end()) continue;
    const std::string& name = it->second;
    std::set<std::string> mine;
    for (size_t begin = name.find('/'); begin != std::string::npos;) {
      size_t end = name.find('/', begin + 1);
      if (end == std::string::npos) break;
      std::string segment = name.substr(begin + 1, end - begin - 1);
      size_t dot = segment.rfind('.');
      if (dot != std::string::npos && dot + 1 < segment.size() &&
          segment.find_first_not_of("0123456789", dot + 1) == std::string::npos &&
          segment.find('N') == std::string::npos) {
        std::string pattern = name.substr(0, begin + 1) + segment.substr(0, dot + 1) + "N/";
        if (mine.insert(pattern).second) {
          seen[pattern].first.insert(segment.substr(dot + 1));
          ++seen[pattern].second;
        }
      }
      begin = end;
    }
  }
  std::string best;
  for (const auto& [pattern, found] : seen)
    if (found.first.size() >= 2 && (best.empty() || found.second > seen.at(best).second))
      best = pattern;
  return best;
}

std::string listed(const std::vector<size_t>& ops) {
  std::string s;
  for (size_t k = 0; k < ops.size() && k < 8; ++k)
    s += (s.empty() ? "" : ", ") + std::to_string(ops[k]);
  return s + (ops.size() > 8 ? ", ..." : "");
}

} // namespace

const std::vector<std::string>& compilerModes() {
  static const std::vector<std::string> modes = {"default", "nlp"};
  return modes;
}

void checkCompilerMode(const std::string& mode) {
  std::string modes;
  for (const std::string& m : compilerModes()) {
    if (m == mode) return;
    modes += (modes.empty() ? "" : ", ") + m;
  }
  throw Error("--compiler-mode '" + mode + "' is not a mode (use one of: " + modes + ")");
}

std::vector<std::string>
applyCompilerMode(CompileOptions& o, SectionOptions& sections, const Function& f,
                  const std::unordered_map<const Op*, std::string>& origins) {
  checkCompilerMode(o.compilerMode);
  if (o.compilerMode == "default") return {};
  std::vector<std::string> log;
  Blocks b = findBlocks(f);
  if (b.attention.empty()) {
    log.push_back("compiler mode nlp: no attention block (a softmax between matmuls) in @" +
                  f.name() + ": compiling as default");
    return log;
  }
  log.push_back("compiler mode nlp: " + std::to_string(b.attention.size()) +
                " attention blocks (softmax at ops " + listed(b.attention) + "), " +
                std::to_string(b.mlp.size()) + " MLP blocks" +
                (b.mlp.empty() ? "" : " (activation at ops " + listed(b.mlp) + ")"));
  if (!o.hypersections) {
    o.hypersections = true;
    log.push_back("compiler mode nlp: hypersections on (--enable-hypersection)");
  }
  if (sections.level == 1 && !sections.rules) {
    sections.rules = &FusionRules::nlp();
    const auto& all = sections.rules->rules();
    std::string names; // the nlp file's own, which come first
    for (size_t i = 0; i + FusionRules::defaults().rules().size() < all.size(); ++i)
      names += (names.empty() ? "" : ", ") + all[i].name;
    log.push_back("compiler mode nlp: -o1 fusion rules " + names +
                  " (rules/nlp.yaml), then the default rules");
  }
  if (o.partition.autoPartition) {
    o.partition.headAware = true;
    log.push_back("compiler mode nlp: --auto-partition splits attention projections only "
                  "between whole heads (the search log lists them)");
  }
  if (o.hypersectionPattern.empty()) {
    o.hypersectionPattern = layerPattern(f, origins);
    log.push_back(o.hypersectionPattern.empty()
                      ? "compiler mode nlp: the op names carry no layer scope; repeated layers "
                        "are found in the compiled program"
                      : "compiler mode nlp: layers named by '" + o.hypersectionPattern +
                            "' (from the node names), compiled once from the start");
  }
  return log;
}

} // namespace shardc
