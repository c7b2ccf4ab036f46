#include "SearchSpace.h"

#include "shardc/ir/IR.h"
#include "shardc/sharding/Tactics.h"
#include "shardc/support/Stopwatch.h"

namespace shardc {

SearchState SearchSpace::root(const ShardingPlan& fixed) const {
  SearchState s{fixed, fixed, {}, {}};
  Stopwatch w(propagationSeconds_);
  propagator_.propagate(s.propagated);
  for (size_t g = 0; g < groups_.size(); ++g)
    s.worklist.push_back(g);
  // The user's shardings may already split some groups.
  prune(s, false);
  return s;
}

std::vector<Action> SearchSpace::actionsFor(const ArgumentGroup& g, const Mesh& mesh) const {
  std::vector<Action> out;
  const TensorType& t = g.args.front()->type();
  int64_t pieces = fusedOutputPieces(g.args.front());
  for (const MeshAxis& axis : mesh.axes()) {
    if (axis.size <= 1) continue;
    for (int64_t d = 0; d < t.rank(); ++d) {
      int64_t n = t.shape[static_cast<size_t>(d)];
      if (n % axis.size == 0) out.push_back({d, axis.name, 1});
      if (pieces > 1 && d == t.rank() - 1 && n % (pieces * axis.size) == 0)
        out.push_back({d, axis.name, pieces});
    }
  }
  out.push_back({-1, "", 1});
  return out;
}

std::vector<Action> SearchSpace::actions(const SearchState& s) const {
  if (s.terminal()) return {};
  return actionsFor(groups_[s.worklist.front()], s.plan.mesh());
}

SearchState SearchSpace::apply(const SearchState& s, const Action& a) const {
  const ArgumentGroup& g = groups_[s.worklist.front()];
  Stopwatch w(propagationSeconds_);
  SearchState next{s.plan, s.propagated, s.worklist, s.decisions};
  TensorSharding sharding = TensorSharding::replicated(g.args.front()->type().rank());
  if (a.dim >= 0) {
    sharding.dims[static_cast<size_t>(a.dim)] = {a.axis};
    sharding.setChunks(static_cast<size_t>(a.dim), a.chunks);
  }
  for (const Value* v : g.args) {
    next.plan.set(v, sharding, {OriginKind::Tactic, "auto-partition"});
    next.propagated.set(v, sharding, {OriginKind::Tactic, "auto-partition"});
  }
  next.decisions.push_back(
      g.str() + ": " +
      (a.dim < 0 ? "replicated"
                 : "dim " + std::to_string(a.dim) + " over " + a.axis +
                       (a.chunks > 1 ? " per " + std::to_string(a.chunks) + " pieces" : "")) +
      " " + sharding.str());
  propagator_.propagateFrom(next.propagated, g.args);
  prune(next, true);
  return next;
}

void SearchSpace::prune(SearchState& s, bool dropHead) const {
  std::vector<size_t> open;
  for (size_t i = dropHead ? 1 : 0; i < s.worklist.size(); ++i) {
    const ArgumentGroup& g = groups_[s.worklist[i]];
    bool split = false;
    for (const Value* v : g.args)
      split = split || !s.propagated.shardingOf(v).isReplicated();
    if (!split) open.push_back(s.worklist[i]);
  }
  s.worklist = std::move(open);
}

int64_t SearchSpace::leafBound(const ShardingPlan& fixed, int64_t cap) const {
  int64_t n = 1;
  for (const ArgumentGroup& g : groups_) {
    n *= static_cast<int64_t>(actionsFor(g, fixed.mesh()).size());
    if (n > cap) return cap + 1;
  }
  return n;
}

} // namespace shardc
