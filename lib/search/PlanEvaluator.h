// Scores complete plans with the cost model, once per distinct set of fixed argument shardings.
#pragma once

#include "shardc/search/Search.h"

#include <map>
#include <string>

namespace shardc {

class PlanEvaluator {
public:
  PlanEvaluator(const Function& f, const CostModel& model) : f_(f), model_(model) {}

  // `propagated` is `fixed` after propagation.
  PlanCost evaluate(const ShardingPlan& fixed, const ShardingPlan& propagated);
  PlanCost evaluate(const ShardingPlan& fixed);
  int64_t evaluations() const { return static_cast<int64_t>(cache_.size()); }
  // The least peak memory of the valid plans evaluated (0: none).
  int64_t smallestPeak() const { return smallestPeak_; }

private:
  std::string key(const ShardingPlan& fixed) const;

  const Function& f_;
  const CostModel& model_;
  std::map<std::string, PlanCost> cache_;
  int64_t smallestPeak_ = 0;
};

} // namespace shardc
