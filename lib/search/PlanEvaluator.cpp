#include "PlanEvaluator.h"

#include "shardc/cost/CostModel.h"
#include "shardc/ir/IR.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/sharding/SpmdLowering.h"
#include "shardc/support/Error.h"

#include <cstdio>

namespace shardc {

std::string PlanCost::str() const {
  if (!valid) return "invalid (a tactic or the lowering refused it)";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.4f ms, %.2f MB per device%s", stepSeconds * 1e3,
                static_cast<double>(peakBytes) / 1e6, feasible ? "" : " (over capacity)");
  return buf;
}

std::string PlanEvaluator::key(const ShardingPlan& fixed) const {
  std::string k;
  for (size_t i = 0; i < f_.numArguments(); ++i) {
    const ValueSharding* s = fixed.find(f_.argument(i));
    k += (s && s->origin.fixed() ? s->sharding.str() : "-") + ";";
  }
  return k;
}

PlanCost PlanEvaluator::evaluate(const ShardingPlan& fixed, const ShardingPlan& propagated) {
  std::string k = key(fixed);
  if (auto it = cache_.find(k); it != cache_.end()) return it->second;
  PlanCost c;
  try {
    SpmdProgram program = lowerToSpmd(f_, propagated);
    CostReport r = model_.evaluate(program.function(), program.mesh);
    c = {true, r.fits(), r.stepSeconds, r.memory.peak()};
    if (smallestPeak_ == 0 || c.peakBytes < smallestPeak_) smallestPeak_ = c.peakBytes;
  } catch (const Error&) {
    // A plan the lowering refuses is no candidate; the search moves on.
  }
  return cache_[k] = c;
}

PlanCost PlanEvaluator::evaluate(const ShardingPlan& fixed) {
  if (auto it = cache_.find(key(fixed)); it != cache_.end()) return it->second;
  ShardingPlan propagated = fixed;
  propagateShardings(f_, propagated);
  return evaluate(fixed, propagated);
}

} // namespace shardc
