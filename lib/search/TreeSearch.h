// Monte Carlo tree search (UCT) over the search space: each episode descends by UCT, expands
// one untried action, rolls out a few random actions, leaves the open groups to propagation,
// and backs up the reward referenceSeconds / stepSeconds (0 for a plan over memory or one
// lowering refuses). Every node is thus a plan too: its open groups replicated unless reached.
#pragma once

#include "PlanEvaluator.h"
#include "SearchSpace.h"

#include <string>
#include <vector>

namespace shardc {

// The cheapest distinct feasible plans seen, cheapest first, at most `capacity`.
class Leaderboard {
public:
  explicit Leaderboard(size_t capacity) : capacity_(capacity) {}
  void offer(const std::string& key, const SearchState& s, const PlanCost& c);
  struct Entry {
    std::string key;
    SearchState state;
    PlanCost cost;
  };
  const std::vector<Entry>& entries() const { return entries_; }

private:
  size_t capacity_;
  std::vector<Entry> entries_;
};

struct TreeSearchResult {
  Leaderboard best; // by the step-by-step propagation's cost
  int64_t episodes = 0;
};

// `referenceSeconds` scales rewards (the best baseline's step time); 0: the first feasible plan's.
// `needFit` false: plans over the memory capacity count as feasible (a first stage of the
// axis-by-axis search, which the later axes may bring under it).
TreeSearchResult runTreeSearch(const SearchSpace& space, const SearchState& root,
                               PlanEvaluator& evaluator, const SearchParams& params,
                               double referenceSeconds, double seconds, bool needFit = true);

} // namespace shardc
