// The search space shared by the tree search and the enumeration: states (the argument
// shardings fixed so far and the worklist of groups still open) and the actions on them.
#pragma once

#include "shardc/search/Search.h"

#include <string>
#include <vector>

namespace shardc {

struct Action {
  int64_t dim = -1; // -1: keep the group replicated
  std::string axis;
};

struct SearchState {
  ShardingPlan plan;            // the fixed shardings only (the user's and the decisions)
  ShardingPlan propagated;      // `plan` after propagation
  std::vector<size_t> worklist; // open groups, head first
  std::vector<std::string> decisions;
  bool terminal() const { return worklist.empty(); }
};

class SearchSpace {
public:
  SearchSpace(const Function& f, std::vector<ArgumentGroup> groups)
      : f_(f), groups_(std::move(groups)) {}

  const Function& function() const { return f_; }
  const std::vector<ArgumentGroup>& groups() const { return groups_; }
  SearchState root(const ShardingPlan& fixed) const;
  // The actions on the head group: each dimension that divides by each mesh axis, then
  // replicated. Empty for a terminal state.
  std::vector<Action> actions(const SearchState& s) const;
  SearchState apply(const SearchState& s, const Action& a) const;
  // How many complete plans the space holds at most (the product of the action counts),
  // saturating at `cap` + 1.
  int64_t leafBound(const ShardingPlan& fixed, int64_t cap) const;

private:
  std::vector<Action> actionsFor(const ArgumentGroup& g, const Mesh& mesh) const;
  // Drops every group that propagation has split, and the head when it was just decided.
  void prune(SearchState& s, bool dropHead) const;

  const Function& f_;
  std::vector<ArgumentGroup> groups_;
};

} // namespace shardc
