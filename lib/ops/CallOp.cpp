// `call` and `scan`: ops that run another function of the module. A call runs its callee once
// (a hypersection's body; lib/dataflow makes them from repeated runs of a per-device program,
// or a model's own functions keep them); a scan once per slice of its stacked operands,
// threading carried values from step to step (layout in include/shardc/ir/Scan.h), as a
// model's repeated layers run one body over stacked per-layer weights. Their results are the
// callee's (Verifier.cpp checks them against the module); the interpreter and the compiled
// runtime run the callee. Partitioning sees them inlined (lib/transforms InlineCalls.cpp, a
// scan unrolled), so the sharding rule leaves every dimension its own factor: nothing
// propagates through them.
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/support/Error.h"

namespace shardc {
namespace {

OpDef callsFunction(const char* name, const char* summary) {
  OpDef d;
  d.name = name;
  d.summary = summary;
  d.minOperands = 0;
  d.maxOperands = -1;
  d.attrs = {{"callee", AttrKind::String, std::nullopt}};
  d.callsFunction = true;
  d.inferTypes = [](const OpSig&, std::vector<TensorType>&) {
    return std::string("takes its result types from its callee");
  };
  // The callee's ops are priced where the program is (a scan's `length` times).
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
  return d;
}

} // namespace

void registerCallOps(OpRegistry& r) {
  r.add(callsFunction("call",
                      "runs function `callee` of the module on the operands; its results are the "
                      "callee's"));
  OpDef scan = callsFunction("scan", "runs function `callee` once per slice of the stacked "
                                     "operands, threading the first `carried` operands from "
                                     "step to step");
  scan.attrs.insert(scan.attrs.end(), {{"length", AttrKind::Int, std::nullopt},
                                       {"carried", AttrKind::Int, std::nullopt},
                                       {"shared", AttrKind::Int, Attr(int64_t{0})},
                                       {"reverse", AttrKind::Bool, Attr(false)},
                                       {"save_carries", AttrKind::Bool, Attr(false)}});
  r.add(std::move(scan));
}

} // namespace shardc
