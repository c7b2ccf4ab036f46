// The search space shared by the tree search and the enumeration: states (the argument
// shardings fixed so far and the worklist of groups still open) and the actions on them.
#pragma once

#include "shardc/search/Search.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/sharding/Tactics.h"

#include <string>
#include <vector>

namespace shardc {

struct Action {
  int64_t dim = -1; // -1: keep the group replicated
  std::string axis;
  int64_t chunks = 1; // > 1: split each of that many equal pieces of the dimension
};

struct SearchState {
  ShardingPlan plan; // the fixed shardings only (the user's and the decisions)
  // `plan` propagated one decision after another: each action's propagation continues from
  // its parent's (as Automap's actions rewrite the program in turn), so a step costs what the
  // decision reaches, not the whole program.
  ShardingPlan propagated;
  std::vector<size_t> worklist; // open groups, head first
  std::vector<std::string> decisions;
  bool terminal() const { return worklist.empty(); }
};

class SearchSpace {
public:
  // Actions use the mesh axes `axes` (all when empty): one axis at a time when the search
  // goes axis by axis. `headAware`: an attention projection's head dimension is split only
  // between whole heads (per piece of a fused q|k|v).
  SearchSpace(const Function& f, std::vector<ArgumentGroup> groups, ShardingPropagator& propagator,
              double& propagationSeconds, bool headAware, std::vector<std::string> axes = {});

  const Function& function() const { return f_; }
  const std::vector<ArgumentGroup>& groups() const { return groups_; }
  SearchState root(const ShardingPlan& fixed, std::vector<std::string> decisions = {}) const;
  // The actions on the head group: each dimension that divides by each mesh axis it does not
  // use yet (and, for the output columns of a fused projection, the same split per piece),
  // then "as it is" (replicated, unless an earlier axis split it). Empty for a terminal state.
  // Head-aware, a head dimension's splits that would cut a head are left out.
  std::vector<Action> actions(const SearchState& s) const;
  SearchState apply(const SearchState& s, const Action& a) const;
  // How many complete plans the space holds at most (the product of the action counts),
  // saturating at `cap` + 1.
  int64_t leafBound(const ShardingPlan& fixed, int64_t cap) const;

private:
  // The actions on group `g` whose first argument holds `base` so far.
  std::vector<Action> actionsFor(size_t g, const TensorSharding& base, const Mesh& mesh) const;
  bool allowed(const std::string& axis) const;
  // Drops every group that propagation has split over an axis of the space, and the head when
  // it was just decided.
  void prune(SearchState& s, bool dropHead) const;

  const Function& f_;
  std::vector<ArgumentGroup> groups_;
  std::vector<HeadSplit> heads_; // per group, when head-aware
  ShardingPropagator& propagator_;
  double& propagationSeconds_;
  std::vector<std::string> axes_;
};

} // namespace shardc
