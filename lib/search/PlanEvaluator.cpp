#include "PlanEvaluator.h"

#include "shardc/cost/CostModel.h"
#include "shardc/ir/IR.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/support/Error.h"
#include "shardc/support/Stopwatch.h"

#include <algorithm>
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

PlanCost PlanEvaluator::lowerAndCost(const ShardingPlan& propagated) {
  PlanCost c;
  try {
    CostReport r;
    for (size_t v = 0; v < std::max<size_t>(variants_.size(), 1); ++v) {
      Stopwatch lowering(times_.lowering);
      SpmdProgram program = lowerer_.lower(propagated);
      if (clean_)
        for (const auto& g : program.module->functions())
          clean_(*g);
      Function& local = *program.module->functions().front();
      if (v < variants_.size()) variants_[v](local);
      lowering.stop();
      Stopwatch costing(times_.costModel);
      r = price_ ? price_(local, program.mesh) : model_.evaluate(local, program.mesh);
      if (r.fits()) break;
    }
    c = {true, r.fits(), r.stepSeconds, r.memory.peak()};
    if (smallest_.peak() == 0 || c.peakBytes < smallest_.peak()) smallest_ = r.memory;
  } catch (const Error&) {
    // A plan the lowering refuses is no candidate; the search moves on.
  }
  return c;
}

PlanCost PlanEvaluator::evaluateState(const ShardingPlan& fixed, const ShardingPlan& propagated) {
  std::string k = std::to_string(stage_) + ":" + key(fixed);
  if (auto it = stateCache_.find(k); it != stateCache_.end()) return it->second;
  return stateCache_[k] = lowerAndCost(propagated);
}

PlanCost PlanEvaluator::evaluate(const ShardingPlan& fixed) {
  std::string k = key(fixed);
  if (auto it = cache_.find(k); it != cache_.end()) return it->second;
  ShardingPlan propagated = fixed;
  {
    Stopwatch w(times_.propagation);
    propagator_.propagate(propagated);
  }
  return cache_[k] = lowerAndCost(propagated);
}

} // namespace shardc
