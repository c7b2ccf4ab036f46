#include "Baselines.h"

#include "shardc/sharding/Tactics.h"
#include "shardc/support/Error.h"

namespace shardc {

std::vector<Baseline> evaluateBaselines(const Function& f, const ShardingPlan& fixed,
                                        PlanEvaluator& evaluator) {
  const Mesh& mesh = fixed.mesh();
  bool data = mesh.axisIndex("data").has_value(), model = mesh.axisIndex("model").has_value();
  std::string zeroAxis = data ? "data" : "model";
  std::vector<std::pair<bool, bool>> kinds; // (data parallel, Megatron)
  if (data) kinds.push_back({true, false});
  if (model) kinds.push_back({false, true});
  if (data && model) kinds.push_back({true, true});
  // The Megatron part is the same in every combination (it fixes parameters only, by where a
  // column split propagates, which the batch and optimizer-state splits do not change):
  // computed once, as the trials cost most of a baseline.
  std::vector<TacticDecision> megatron;
  bool megatronFailed = false;
  try {
    if (model) megatron = megatronDecisions(f, fixed, "model");
  } catch (const Error&) {
    megatronFailed = true; // the Megatron baselines stay invalid
  }
  std::vector<Baseline> out;
  for (auto [dp, mp] : kinds)
    for (bool zero : {false, true}) {
      std::string name = dp && mp ? "data-parallel+megatron" : dp ? "data-parallel" : "megatron";
      if (zero) name += "+zero";
      Baseline b{{name, {}}, fixed};
      try {
        if (mp && megatronFailed) throw Error("no Megatron decisions");
        if (dp) applyDataParallel(f, b.plan, "data");
        if (zero) applyOptimizerStateSharding(f, b.plan, zeroAxis);
        if (mp) applyDecisions(b.plan, megatron, "tensor-parallel weight");
        replicateUnfixedParameters(f, b.plan);
        b.cost.cost = evaluator.evaluate(b.plan);
      } catch (const Error&) {
        // Not applicable to this model; stays invalid.
      }
      out.push_back(std::move(b));
    }
  return out;
}

} // namespace shardc
