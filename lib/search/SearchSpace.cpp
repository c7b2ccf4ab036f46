#include "SearchSpace.h"

#include "shardc/ir/IR.h"
#include "shardc/sharding/Mesh.h"
#include "shardc/sharding/Tactics.h"
#include "shardc/support/Stopwatch.h"

#include <algorithm>
#include <optional>

namespace shardc {

namespace {

bool usesAxis(const TensorSharding& s, const std::string& axis) {
  for (const auto& d : s.dims)
    if (std::find(d.begin(), d.end(), axis) != d.end()) return true;
  return false;
}

// `base` with the action's axis added to its dimension (split per `chunks` pieces); nullopt
// where it cannot be: the axis is in use, the chunks differ, or the dimension does not divide.
std::optional<TensorSharding> extend(const TensorSharding& base, const TensorType& t,
                                     const Mesh& mesh, const Action& a) {
  auto d = static_cast<size_t>(a.dim);
  if (usesAxis(base, a.axis) || (!base.dims[d].empty() && base.chunksOf(d) != a.chunks))
    return std::nullopt;
  TensorSharding s = base;
  s.dims[d].push_back(a.axis);
  s.setChunks(d, a.chunks);
  if (!checkSharding(s, t, mesh).empty()) return std::nullopt;
  return s;
}

} // namespace

SearchSpace::SearchSpace(const Function& f, std::vector<ArgumentGroup> groups,
                         ShardingPropagator& propagator, double& propagationSeconds, bool headAware,
                         std::vector<std::string> axes)
    : f_(f), groups_(std::move(groups)), heads_(groups_.size()), propagator_(propagator),
      propagationSeconds_(propagationSeconds), axes_(std::move(axes)) {
  if (headAware)
    for (size_t g = 0; g < groups_.size(); ++g)
      heads_[g] = attentionHeads(groups_[g].args.front());
}

SearchState SearchSpace::root(const ShardingPlan& fixed, std::vector<std::string> decisions) const {
  SearchState s{fixed, fixed, {}, std::move(decisions)};
  Stopwatch w(propagationSeconds_);
  propagator_.propagate(s.propagated);
  for (size_t g = 0; g < groups_.size(); ++g)
    s.worklist.push_back(g);
  // The user's shardings (or an earlier axis's decisions) may already split some groups.
  prune(s, false);
  return s;
}

bool SearchSpace::allowed(const std::string& axis) const {
  return axes_.empty() || std::find(axes_.begin(), axes_.end(), axis) != axes_.end();
}

std::vector<Action> SearchSpace::actionsFor(size_t g, const TensorSharding& base,
                                            const Mesh& mesh) const {
  std::vector<Action> out;
  const Value* first = groups_[g].args.front();
  const TensorType& t = first->type();
  OutputSplit split = fusedOutputSplit(first);
  const HeadSplit& heads = heads_[g];
  // Devices a head dimension is split over so far, and whether one more axis of `size`
  // per `chunks` pieces keeps every head whole.
  auto wholeHeads = [&](int64_t size, int64_t chunks) {
    int64_t devices = size;
    for (const std::string& a : base.dims[static_cast<size_t>(heads.dim)])
      devices *= mesh.axisSize(a);
    return chunks == heads.pieces && heads.heads % devices == 0;
  };
  for (const MeshAxis& axis : mesh.axes()) {
    if (axis.size <= 1 || !allowed(axis.name)) continue;
    for (int64_t d = 0; d < t.rank(); ++d) {
      std::vector<int64_t> chunks{1};
      if (split.pieces > 1 && d == split.dim) chunks.push_back(split.pieces);
      for (int64_t c : chunks)
        if ((d != heads.dim || wholeHeads(axis.size, c)) &&
            extend(base, t, mesh, {d, axis.name, c}))
          out.push_back({d, axis.name, c});
    }
  }
  out.push_back({-1, "", 1});
  return out;
}

std::vector<Action> SearchSpace::actions(const SearchState& s) const {
  if (s.terminal()) return {};
  size_t g = s.worklist.front();
  return actionsFor(g, s.propagated.shardingOf(groups_[g].args.front()), s.plan.mesh());
}

SearchState SearchSpace::apply(const SearchState& s, const Action& a) const {
  const ArgumentGroup& g = groups_[s.worklist.front()];
  Stopwatch w(propagationSeconds_);
  SearchState next{s.plan, s.propagated, s.worklist, s.decisions};
  // Each argument keeps what it holds so far (an earlier axis's split) and gains the action's
  // axis, or is fixed as it is (the axis left off it).
  std::vector<const Value*> changed;
  std::string taken;
  for (const Value* v : g.args) {
    TensorSharding base = s.propagated.shardingOf(v);
    std::optional<TensorSharding> sharding =
        a.dim < 0 ? base : extend(base, v->type(), s.plan.mesh(), a);
    if (!sharding) continue; // cannot take it; left to propagation
    if (taken.empty()) taken = sharding->str();
    next.plan.set(v, *sharding, {OriginKind::Tactic, "auto-partition"});
    next.propagated.set(v, *sharding, {OriginKind::Tactic, "auto-partition"});
    changed.push_back(v);
  }
  next.decisions.push_back(
      g.str() + ": " +
      (a.dim < 0 ? "replicated"
                 : "dim " + std::to_string(a.dim) + " over " + a.axis +
                       (a.chunks > 1 ? " per " + std::to_string(a.chunks) + " pieces" : "")) +
      " " + taken);
  propagator_.propagateFrom(next.propagated, changed);
  prune(next, true);
  return next;
}

void SearchSpace::prune(SearchState& s, bool dropHead) const {
  std::vector<size_t> open;
  for (size_t i = dropHead ? 1 : 0; i < s.worklist.size(); ++i) {
    const ArgumentGroup& g = groups_[s.worklist[i]];
    bool split = false;
    for (const Value* v : g.args)
      for (const MeshAxis& axis : s.plan.mesh().axes())
        split = split || (allowed(axis.name) && usesAxis(s.propagated.shardingOf(v), axis.name));
    if (!split) open.push_back(s.worklist[i]);
  }
  s.worklist = std::move(open);
}

int64_t SearchSpace::leafBound(const ShardingPlan& fixed, int64_t cap) const {
  int64_t n = 1;
  for (size_t g = 0; g < groups_.size(); ++g) {
    n *= static_cast<int64_t>(
        actionsFor(g, TensorSharding::replicated(groups_[g].args.front()->type().rank()),
                   fixed.mesh())
            .size());
    if (n > cap) return cap + 1;
  }
  return n;
}

} // namespace shardc
