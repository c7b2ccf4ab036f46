// `call`: runs another function of the module, a hypersection's body (lib/dataflow
// Hypersections.cpp makes them from repeated runs of a per-device program). Its results are
// the callee's (Verifier.cpp checks them against the module); the interpreter and the compiled
// runtime run the callee. Calls appear only after partitioning, so the sharding rule leaves
// every dimension its own factor: nothing propagates through a call.
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/support/Error.h"

namespace shardc {

void registerCallOp(OpRegistry& r) {
  OpDef d;
  d.name = "call";
  d.summary = "runs function `callee` of the module on the operands; its results are the callee's";
  d.minOperands = 0;
  d.maxOperands = -1;
  d.attrs = {{"callee", AttrKind::String, std::nullopt}};
  d.callsFunction = true;
  d.inferTypes = [](const OpSig&, std::vector<TensorType>&) {
    return std::string("takes its result types from its callee");
  };
  // The callee's ops are priced where the program is, before its runs become calls.
  d.flops = [](const OpSig&, const std::vector<TensorType>&) { return 0.0; };
  d.kernel = [](const KernelArgs&) -> std::vector<Tensor> {
    throw Error("a call runs its callee, not a kernel of its own");
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& results) {
    ShardingRule rule;
    for (const TensorType& t : sig.operands)
      rule.operands.push_back(ops::newDims(rule, t.shape, FactorKind::NeedReplication));
    for (const TensorType& t : results)
      rule.results.push_back(ops::newDims(rule, t.shape, FactorKind::NeedReplication));
    return rule;
  };
  r.add(std::move(d));
}

} // namespace shardc
