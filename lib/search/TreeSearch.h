// Monte Carlo tree search (UCT) over the search space: each episode descends by UCT, expands
// one untried action, rolls out a few random actions, leaves the open groups to propagation,
// and backs up the reward referenceSeconds / stepSeconds (0 for a plan over memory or one
// lowering refuses). Every node is thus a plan too: its open groups replicated unless reached.
#pragma once

#include "PlanEvaluator.h"
#include "SearchSpace.h"

#include <optional>

namespace shardc {

struct TreeSearchResult {
  std::optional<SearchState> best; // the cheapest feasible plan seen
  PlanCost cost;
  int64_t episodes = 0;
};

// `referenceSeconds` scales rewards (the best baseline's step time); 0: the first feasible plan's.
TreeSearchResult runTreeSearch(const SearchSpace& space, const SearchState& root,
                               PlanEvaluator& evaluator, const SearchParams& params,
                               double referenceSeconds);

} // namespace shardc
