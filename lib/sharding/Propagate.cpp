#include "shardc/sharding/Propagate.h"

#include "FactorProjection.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/sharding/Plan.h"

#include <algorithm>
#include <unordered_map>

namespace shardc {
namespace {

struct Candidate {
  FactorSharding sharding;
  bool fixed = false;
  int64_t bytes = 0;
  size_t tensor = 0; // index among the op's operands then results
  bool set = false;
};

// Per dimension, the proposed axes where they extend the current ones (same chunks, the
// current axes a prefix), else the current ones. An extension stops before an axis that
// another dimension already uses (refined earlier, through another op or an earlier visit):
// a tensor takes each mesh axis at most once.
TensorSharding merge(const TensorSharding& cur, const TensorSharding& proposed) {
  TensorSharding out = cur;
  for (size_t d = 0; d < cur.dims.size(); ++d) {
    const auto& x = cur.dims[d];
    const auto& y = proposed.dims[d];
    bool extends = y.size() > x.size() && std::equal(x.begin(), x.end(), y.begin()) &&
                   (x.empty() || cur.chunksOf(d) == proposed.chunksOf(d));
    if (!extends) continue;
    auto usedElsewhere = [&](const std::string& axis) {
      for (size_t e = 0; e < out.dims.size(); ++e)
        if (e != d && std::find(out.dims[e].begin(), out.dims[e].end(), axis) != out.dims[e].end())
          return true;
      return false;
    };
    size_t n = x.size();
    while (n < y.size() && !usedElsewhere(y[n]))
      ++n;
    if (n == x.size()) continue;
    out.dims[d].assign(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(n));
    out.setChunks(d, proposed.chunksOf(d));
  }
  return out;
}

std::string describe(const Op& op, size_t tensor) {
  std::string who = op.numResults() && !op.result(0)->name().empty()
                        ? "%" + op.result(0)->name()
                        : "at line " + std::to_string(op.loc().line);
  std::string from = tensor < op.numOperands()
                         ? "operand " + std::to_string(tensor)
                         : "result " + std::to_string(tensor - op.numOperands());
  return op.name() + " " + who + " (" + from + ")";
}

class Propagator {
public:
  Propagator(const Function& f, ShardingPlan& plan) : f_(f), plan_(plan) {}

  void run() {
    for (;;) {
      while (sweep(false)) {
      }
      if (!sweep(true)) break;
    }
    for (size_t i = 0; i < f_.numArguments(); ++i)
      setDefault(f_.argument(i));
    for (const auto& op : f_.ops())
      for (size_t r = 0; r < op->numResults(); ++r)
        setDefault(op->result(r));
  }

private:
  void setDefault(const Value* v) {
    if (!plan_.find(v))
      plan_.set(v, TensorSharding::replicated(v->type().rank()), {OriginKind::Default, ""});
  }

  bool sweep(bool withReductions) {
    bool changed = false;
    for (const auto& op : f_.ops())
      changed |= propagateOp(*op, withReductions);
    for (auto it = f_.ops().rbegin(); it != f_.ops().rend(); ++it)
      changed |= propagateOp(**it, withReductions);
    for (const FuncResult& r : f_.results())
      if (r.tiedArg >= 0) changed |= tie(f_.argument(static_cast<size_t>(r.tiedArg)), r.value);
    return changed;
  }

  // An updated state has the layout of the state it replaces.
  bool tie(const Value* arg, const Value* result) {
    bool changed = false;
    for (auto [from, to] : {std::pair{arg, result}, std::pair{result, arg}}) {
      const ValueSharding* src = plan_.find(from);
      if (!src) continue;
      changed |=
          offer(to, src->sharding, {OriginKind::Propagated, "the state tied to %" + from->name()});
    }
    return changed;
  }

  // Sets or refines `v`'s sharding with `proposed`; false when nothing changes.
  bool offer(const Value* v, const TensorSharding& proposed, ShardingOrigin origin) {
    const ValueSharding* cur = plan_.find(v);
    if (cur && cur->origin.fixed()) return false;
    TensorSharding next = cur ? merge(cur->sharding, proposed) : proposed;
    if (cur ? next == cur->sharding : next.isReplicated()) return false;
    plan_.set(v, std::move(next), std::move(origin));
    return true;
  }

  // Each op's rule, made once: the sweeps visit every op many times.
  const ShardingRule& ruleOf(const Op& op) {
    auto it = rules_.find(&op);
    if (it != rules_.end()) return it->second;
    std::vector<TensorType> operandTypes, resultTypes;
    for (Value* v : op.operands())
      operandTypes.push_back(v->type());
    for (size_t r = 0; r < op.numResults(); ++r)
      resultTypes.push_back(op.result(r)->type());
    return rules_.emplace(&op, op.def().shardingRule(OpSig{operandTypes, op.attrs()}, resultTypes))
        .first->second;
  }

  bool propagateOp(const Op& op, bool withReductions) {
    std::vector<const Value*> tensors(op.operands().begin(), op.operands().end());
    for (size_t r = 0; r < op.numResults(); ++r)
      tensors.push_back(op.result(r));
    const ShardingRule& rule = ruleOf(op);
    size_t nf = rule.factorSizes.size();
    if (!withReductions &&
        std::count(rule.factorKinds.begin(), rule.factorKinds.end(), FactorKind::Reduction))
      return false;
    auto dimsOf = [&](size_t t) -> const ShardingRule::Dims& {
      return t < op.numOperands() ? rule.operands[t] : rule.results[t - op.numOperands()];
    };

    std::vector<Candidate> best(nf);
    for (size_t t = 0; t < tensors.size(); ++t) {
      const ValueSharding* vs = plan_.find(tensors[t]);
      if (!vs) continue;
      auto proj = projectToFactors(vs->sharding, dimsOf(t), rule, plan_.mesh());
      for (size_t f = 0; f < nf; ++f) {
        if (!proj[f] || proj[f]->axes.empty() || rule.factorKinds[f] == FactorKind::NeedReplication)
          continue;
        Candidate c{*proj[f], vs->origin.fixed(), tensors[t]->type().bytes(), t, true};
        Candidate& b = best[f];
        if (!b.set ||
            (b.sharding.compatibleWith(c.sharding) ? c.sharding.axes.size() > b.sharding.axes.size()
                                                   : beats(c, b)))
          b = c;
      }
    }
    // A mesh axis shards one factor: the strongest candidates keep theirs.
    std::vector<size_t> order;
    for (size_t f = 0; f < nf; ++f)
      if (best[f].set) order.push_back(f);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return beats(best[a], best[b]); });
    std::vector<std::string> used;
    std::vector<FactorSharding> factors(nf);
    for (size_t f : order) {
      for (const std::string& a : best[f].sharding.axes) {
        if (std::find(used.begin(), used.end(), a) != used.end()) break;
        factors[f].axes.push_back(a);
      }
      for (const std::string& a : factors[f].axes)
        used.push_back(a);
      factors[f].chunks = factors[f].axes.empty() ? 1 : best[f].sharding.chunks;
    }

    bool changed = false;
    for (size_t t = 0; t < tensors.size(); ++t) {
      TensorSharding proposed = projectToTensor(factors, dimsOf(t), rule, plan_.mesh());
      if (proposed.isReplicated()) continue;
      size_t source = t;
      for (size_t d = 0; d < proposed.dims.size() && source == t; ++d)
        for (int f : dimsOf(t)[d])
          if (!factors[static_cast<size_t>(f)].axes.empty() &&
              best[static_cast<size_t>(f)].tensor != t) {
            source = best[static_cast<size_t>(f)].tensor;
            break;
          }
      changed |= offer(tensors[t], proposed, {OriginKind::Propagated, describe(op, source)});
    }
    return changed;
  }

  static bool beats(const Candidate& a, const Candidate& b) {
    if (a.fixed != b.fixed) return a.fixed;
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.tensor < b.tensor;
  }

  const Function& f_;
  ShardingPlan& plan_;
  std::unordered_map<const Op*, ShardingRule> rules_;
};

} // namespace

void propagateShardings(const Function& f, ShardingPlan& plan) {
  Propagator(f, plan).run();
}

} // namespace shardc
