// Scores complete plans with the cost model, once per distinct set of fixed argument shardings.
#pragma once

#include "shardc/cost/CostModel.h"
#include "shardc/search/Search.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/sharding/SpmdLowering.h"

#include <map>
#include <string>

namespace shardc {

class PlanEvaluator {
public:
  // `params`: its cleanLowered, price and programVariants.
  PlanEvaluator(const Function& f, const CostModel& model, const SearchParams& params = {})
      : f_(f), model_(model), clean_(params.cleanLowered), price_(params.price),
        variants_(params.programVariants), propagator_(f), lowerer_(f) {}

  // `propagated` is `fixed` after the search's step-by-step propagation (decisions taken one
  // after another) from the current stage's root; cached by `fixed` within a stage.
  PlanCost evaluateState(const ShardingPlan& fixed, const ShardingPlan& propagated);
  // `fixed` propagated all at once, as the compile will: what the chosen plan really costs.
  PlanCost evaluate(const ShardingPlan& fixed);
  int64_t evaluations() const { return static_cast<int64_t>(stateCache_.size() + cache_.size()); }
  // The memory of the valid plan evaluated with the least peak (all zero: none).
  const MemoryCost& smallest() const { return smallest_; }
  SearchTimes& times() { return times_; }
  // A new root for the step-by-step costs (the next axis of the axis-by-axis search): the
  // same fixed shardings may propagate differently from it.
  void newStage() { ++stage_; }
  ShardingPropagator& propagator() { return propagator_; }

  // The fixed argument shardings of `fixed`, as a cache key.
  std::string key(const ShardingPlan& fixed) const;

private:
  PlanCost lowerAndCost(const ShardingPlan& propagated);

  const Function& f_;
  const CostModel& model_;
  std::function<void(Function&)> clean_;
  std::function<CostReport(Function&, const Mesh&)> price_;
  std::vector<std::function<void(Function&)>> variants_;
  ShardingPropagator propagator_;
  SpmdLowerer lowerer_;
  std::map<std::string, PlanCost> stateCache_, cache_;
  MemoryCost smallest_;
  int stage_ = 0;
  SearchTimes times_;
};

} // namespace shardc
