#include "shardc/sharding/Propagate.h"

#include "FactorProjection.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/sharding/Plan.h"

#include <algorithm>
#include <cstdint>
#include <set>
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

// A function's ops in program order with their rules, and an index for every value: made
// once, shared by every run over the function.
struct FunctionIndex {
  struct OpEntry {
    const Op* op;
    ShardingRule rule;
    bool reduction; // has reduction factors: waits for the pass-through ops (priority 2)
  };
  std::vector<OpEntry> ops;
  std::unordered_map<const Op*, size_t> opIndex;
  std::unordered_map<const Value*, size_t> valueIndex;
  std::vector<std::pair<const Value*, const Value*>> ties; // (argument, its updated result)

  explicit FunctionIndex(const Function& f) {
    for (size_t i = 0; i < f.numArguments(); ++i)
      valueIndex.emplace(f.argument(i), valueIndex.size());
    for (const auto& op : f.ops()) {
      std::vector<TensorType> operandTypes, resultTypes;
      for (Value* v : op->operands())
        operandTypes.push_back(v->type());
      for (size_t r = 0; r < op->numResults(); ++r) {
        resultTypes.push_back(op->result(r)->type());
        valueIndex.emplace(op->result(r), valueIndex.size());
      }
      ShardingRule rule = op->def().shardingRule(OpSig{operandTypes, op->attrs()}, resultTypes);
      bool reduction =
          std::count(rule.factorKinds.begin(), rule.factorKinds.end(), FactorKind::Reduction) > 0;
      opIndex.emplace(op.get(), ops.size());
      ops.push_back({op.get(), std::move(rule), reduction});
    }
    for (const FuncResult& r : f.results())
      if (r.tiedArg >= 0) ties.push_back({f.argument(static_cast<size_t>(r.tiedArg)), r.value});
  }
};

// One propagation run over a plan. The forward and backward sweeps visit only the ops one of
// whose tensors changed since their last visit (held in two ordered sets, pass-through ops
// and ops with reductions): skipping the others changes nothing, as a visit depends only on
// the op's tensors. An op a visit makes stale further along the current direction is visited
// in the same pass; one behind it, in the next pass (the backward pass of the same sweep, or
// the next sweep's forward pass).
class Propagator {
public:
  Propagator(const Function& f, const FunctionIndex& index, ShardingPlan& plan)
      : f_(f), index_(index), plan_(plan), changedAt_(index.valueIndex.size(), 0),
        tieCheckedAt_(index.ties.size(), 0) {}

  void run(const std::vector<const Value*>& seeds) {
    for (const Value* v : seeds)
      touched(v);
    for (;;) {
      while (sweep(false)) {
      }
      if (!sweep(true)) break;
    }
  }

  // Replicated, for every value no decision reached.
  void setDefaults() {
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

  // `v` changed: the ops that use or define it are stale.
  void touched(const Value* v) {
    changedAt_[index_.valueIndex.at(v)] = ++clock_;
    auto mark = [&](const Op* op) {
      size_t i = index_.opIndex.at(op);
      (index_.ops[i].reduction ? staleReductions_ : stalePassThrough_).insert(i);
    };
    if (const Op* def = v->definingOp()) mark(def);
    for (const Use& u : v->uses())
      if (u.user) mark(u.user);
  }

  // The next stale op after `cursor` in sweep direction; SIZE_MAX when none.
  size_t next(size_t cursor, bool forward, bool withReductions) const {
    size_t best = SIZE_MAX;
    for (const std::set<size_t>* set : {&stalePassThrough_, &staleReductions_}) {
      if (set == &staleReductions_ && !withReductions) continue;
      size_t cand = SIZE_MAX;
      if (forward) {
        auto it = cursor == SIZE_MAX ? set->begin() : set->upper_bound(cursor);
        if (it != set->end()) cand = *it;
        if (cand != SIZE_MAX && (best == SIZE_MAX || cand < best)) best = cand;
      } else {
        auto it = cursor == SIZE_MAX ? set->end() : set->lower_bound(cursor);
        if (it != set->begin()) cand = *std::prev(it);
        if (cand != SIZE_MAX && (best == SIZE_MAX || cand > best)) best = cand;
      }
    }
    return best;
  }

  bool sweep(bool withReductions) {
    bool changed = false;
    for (bool forward : {true, false}) {
      for (size_t i = next(SIZE_MAX, forward, withReductions); i != SIZE_MAX;
           i = next(i, forward, withReductions)) {
        const FunctionIndex::OpEntry& e = index_.ops[i];
        (e.reduction ? staleReductions_ : stalePassThrough_).erase(i);
        changed |= propagateOp(*e.op, e.rule);
      }
    }
    for (size_t t = 0; t < index_.ties.size(); ++t) {
      auto [arg, result] = index_.ties[t];
      uint64_t last = tieCheckedAt_[t];
      if (changedAt_[index_.valueIndex.at(arg)] <= last &&
          changedAt_[index_.valueIndex.at(result)] <= last)
        continue;
      tieCheckedAt_[t] = clock_;
      changed |= tie(arg, result);
    }
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
    touched(v);
    return true;
  }

  bool propagateOp(const Op& op, const ShardingRule& rule) {
    std::vector<const Value*> tensors(op.operands().begin(), op.operands().end());
    for (size_t r = 0; r < op.numResults(); ++r)
      tensors.push_back(op.result(r));
    size_t nf = rule.factorSizes.size();
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
      changed |= offer(tensors[t], proposed, {OriginKind::Propagated, "", &op, source});
    }
    return changed;
  }

  static bool beats(const Candidate& a, const Candidate& b) {
    if (a.fixed != b.fixed) return a.fixed;
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.tensor < b.tensor;
  }

  const Function& f_;
  const FunctionIndex& index_;
  ShardingPlan& plan_;
  std::vector<uint64_t> changedAt_; // by value index: clock tick of the last change
  std::vector<uint64_t> tieCheckedAt_;
  std::set<size_t> stalePassThrough_, staleReductions_; // op indices
  uint64_t clock_ = 0;
};

} // namespace

struct ShardingPropagator::Impl {
  const Function& f;
  FunctionIndex index;
};

ShardingPropagator::ShardingPropagator(const Function& f) : impl_(new Impl{f, FunctionIndex(f)}) {}
ShardingPropagator::~ShardingPropagator() = default;

void ShardingPropagator::propagate(ShardingPlan& plan) {
  std::vector<const Value*> seeds;
  for (size_t i = 0; i < impl_->f.numArguments(); ++i)
    if (plan.find(impl_->f.argument(i))) seeds.push_back(impl_->f.argument(i));
  for (const auto& op : impl_->f.ops())
    for (size_t r = 0; r < op->numResults(); ++r)
      if (plan.find(op->result(r))) seeds.push_back(op->result(r));
  Propagator p(impl_->f, impl_->index, plan);
  p.run(seeds);
  p.setDefaults();
}

void ShardingPropagator::propagateFrom(ShardingPlan& plan,
                                       const std::vector<const Value*>& changed) {
  Propagator(impl_->f, impl_->index, plan).run(changed);
}

void propagateShardings(const Function& f, ShardingPlan& plan) {
  ShardingPropagator(f).propagate(plan);
}

} // namespace shardc
