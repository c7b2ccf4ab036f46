// Automatic partitioning in the style of Automap: a Monte Carlo tree search over tactics on
// a function's arguments, scored by the cost model. The search only fixes argument shardings
// (OriginKind::Tactic "auto-partition"); propagation and SPMD lowering do the rest.
//
// The worklist holds the arguments (parameters, optimizer state, inputs) that the user has not
// fixed, grouped structurally: arguments with the same kind, type and pattern of uses (op
// names and operand positions, a few ops deep) form one group and are decided together, so a
// transformer's per-layer weights give one group per role, whatever the depth. Inputs come
// first, then the groups by size, largest first.
// An action on the group at the head of the worklist shards one dimension over one mesh axis
// or keeps the group replicated; propagation then runs, and every group that it has split
// leaves the worklist. Groups still open when the search stops deciding are left to
// propagation, which replicates those it does not reach.
#pragma once

#include "shardc/sharding/Plan.h"
#include "shardc/support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace shardc {
class CostModel;
struct CostReport;
class Function;
class Value;

// Every knob of the search.
struct SearchParams {
  // Tree policy ties and rollouts: same seed, same plan (when the episode budget, not the
  // clock, ends the search).
  uint64_t seed = 0;
  int64_t episodes = 200; // MCTS episodes (descend, expand, roll out, back up)
  // Wall-clock budget of the whole search, baselines and final scoring included; whichever
  // budget ends first stops the tree search.
  double seconds = 60;
  // UCT constant c in mean + c * sqrt(ln N / n); rewards are step-time ratios to the best
  // baseline. Measured (100-200 episodes, 3-5 seeds): 0.3 does better on the small GPT fixture
  // at batch 8, 1.0 on the 8x8-mesh 1.3B and 8B shapes, where it beat every baseline on every
  // seed and 0.3 or 0.5 did not.
  double exploration = 1.0;
  double rolloutContinue = 0.5; // chance of one more random action in a rollout
  // Plans kept by their step-by-step propagation's cost and re-scored at the end propagated
  // all at once, as the compile will. The two can rank plans differently: on a 2-layer GPT
  // (d 256, 2 heads, data=2,model=4, 300 episodes, 8 seeds) the best plan was 5th or lower
  // by the first in 5 of 8 head-aware searches; 16 found it in 7 of 8, 4 in 2.
  int64_t rescored = 16;
  int signatureDepth = 3;         // ops followed along uses when grouping arguments
  int64_t exhaustiveLimit = 5000; // enumerate every plan when the action product is at most this
  int64_t progressEvery = 50;     // episodes between progress lines on stderr; 0: none
  bool baselines = true;          // evaluate the expert baselines (also the reward's scale)
  // Search one mesh axis at a time (in mesh order, each on top of the last), as PartIR
  // decomposes a multi-axis problem, instead of all axes at once.
  bool perAxis = false;
  // Split an attention projection's head dimension only between whole heads (per piece of a
  // fused q|k|v): --compiler-mode nlp.
  bool headAware = false;
  // What the compile does to each lowered per-device program before its recompute stage (the
  // constants the lowering slices made locally, CSE, DCE, the gradient reduction's buckets),
  // run before pricing it, so that the search prices the program the compile will build.
  // Empty: nothing.
  std::function<void(Function&)> cleanLowered;
  // Prices a per-device program as the compile will (in sections, which may reorder it).
  // Empty: the search's cost model on the program as it is.
  std::function<CostReport(Function&, const Mesh&)> price;
  // Rewrites of each plan's per-device program before it is priced (activation
  // recomputation): a plan costs its program rewritten by the first of them that fits, or by
  // the last when none does. Empty: the program as lowered.
  std::vector<std::function<void(Function&)>> programVariants;
};

// Arguments decided together; `args` in function order.
struct ArgumentGroup {
  std::vector<const Value*> args;
  std::string signature;
  std::string str() const; // "gpt.h.0.ln_1.weight (+1 more)"
};

// The structural groups of `f`'s arguments that `fixed` does not fix, in worklist order.
std::vector<ArgumentGroup> groupArguments(const Function& f, const ShardingPlan& fixed,
                                          int signatureDepth);

struct PlanCost {
  bool valid = false;    // false: a tactic or the lowering refused the plan
  bool feasible = false; // valid, and the peak memory fits the target's capacity
  double stepSeconds = 0;
  int64_t peakBytes = 0;
  std::string str() const; // "1.234 ms, 5.6 MB" or "infeasible: ..."
};

struct BaselineCost {
  std::string name; // "data-parallel", "megatron", "data+megatron", "... +zero"
  PlanCost cost;
};

// Where the search's time went, in seconds.
struct SearchTimes {
  double total = 0;
  double baselines = 0;   // the expert tactics, their propagation and evaluation
  double propagation = 0; // the tree search's and enumeration's propagations
  double lowering = 0;    // SPMD lowering of every plan evaluated
  double costModel = 0;
};

struct SearchResult {
  // The cheapest feasible plan found by the search, the baselines or the enumeration, with
  // only argument shardings set (unpropagated), so it can be propagated and lowered as usual.
  ShardingPlan plan;
  PlanCost cost;
  std::string source;                 // "search", "exhaustive" or "baseline NAME"
  PlanCost searchCost;                // the tree search's own best
  std::vector<std::string> decisions; // the tree search's best plan, in the order taken
  // "NAME: [sharding]" for each argument that plan splits, after propagation.
  std::vector<std::string> searchSplits;
  std::vector<BaselineCost> baselines;
  std::optional<PlanCost> exhaustive; // the optimum over complete plans, when enumerated
  std::vector<ArgumentGroup> groups;
  // Head-aware: "group G: dim D, H heads" for each group holding attention heads.
  std::vector<std::string> headGroups;
  int64_t episodes = 0, evaluations = 0;
  int64_t planSpace = 0; // complete plans the search space holds, capped at kPlanSpaceCap + 1
  static constexpr int64_t kPlanSpaceCap = 1000000000000;
  SearchTimes times;
  // For the compile log: the groups, the baselines, the optimum, the decisions, the choice.
  std::vector<std::string> reportLines() const;
};

// The baselines, the tree search's decisions in order, the groups and the choice, as JSON (kept
// in the PEF).
std::string searchResultJson(const SearchResult& r);

// What searchPartition throws when no plan, searched or baseline, fits in memory: the message
// says what the smallest needs and what would fit.
class NoPlanFits : public Error {
public:
  NoPlanFits(const std::string& what, bool smallerBatchMayFit)
      : Error(what), smallerBatchMayFit(smallerBatchMayFit) {}
  // False when the state alone, or the activations of one sample per device, are already over
  // the capacity: no smaller batch (no count of micro-batches) can fit then.
  bool smallerBatchMayFit;
};

// Searches for `f`'s shardings on `fixed`'s mesh, keeping `fixed`'s shardings (the user's).
// Throws NoPlanFits when nothing fits.
SearchResult searchPartition(const Function& f, const ShardingPlan& fixed, const CostModel& model,
                             const SearchParams& params);

} // namespace shardc
