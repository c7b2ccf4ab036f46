// The expert strategies, built from the same tactics a user names on the command line, so the
// search is measured against them under the same cost model.
#pragma once

#include "PlanEvaluator.h"

#include <vector>

namespace shardc {

struct Baseline {
  BaselineCost cost;
  ShardingPlan plan; // fixed shardings only
};

// Data parallel over `data`, Megatron over `model`, both, each with and without optimizer-state
// sharding (over `data`, else `model`), for the axes the mesh has. One a tactic refuses (a
// batch that does not divide) is kept as invalid.
std::vector<Baseline> evaluateBaselines(const Function& f, const ShardingPlan& fixed,
                                        PlanEvaluator& evaluator);

} // namespace shardc
