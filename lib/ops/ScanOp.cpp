// `scan`: runs function `callee` of the module once per slice of its stacked operands, threading
// carried values from step to step (layout in include/shardc/ir/Scan.h). A model written as a
// scan over stacked per-layer weights is compiled once per body whatever its depth. The
// verifier checks the callee against the layout; the interpreter and the compiled runtime loop
// over it; passes that read one function (partitioning) see it unrolled (lib/transforms
// InlineCalls.cpp), so its sharding rule, like a call's, propagates nothing.
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/support/Error.h"

namespace shardc {

void registerScanOp(OpRegistry& r) {
  OpDef d;
  d.name = "scan";
  d.summary = "runs function `callee` once per slice of the stacked operands, threading the "
              "first `carried` operands from step to step";
  d.minOperands = 0;
  d.maxOperands = -1;
  d.attrs = {
      {"callee", AttrKind::String, std::nullopt}, {"length", AttrKind::Int, std::nullopt},
      {"carried", AttrKind::Int, std::nullopt},   {"shared", AttrKind::Int, Attr(int64_t{0})},
      {"reverse", AttrKind::Bool, Attr(false)},   {"save_carries", AttrKind::Bool, Attr(false)}};
  d.callsFunction = true;
  d.inferTypes = [](const OpSig&, std::vector<TensorType>&) {
    return std::string("takes its result types from its callee");
  };
  d.flops = [](const OpSig&, const std::vector<TensorType>&) { return 0.0; };
  d.kernel = [](const KernelArgs&) -> std::vector<Tensor> {
    throw Error("a scan runs its callee, not a kernel of its own");
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
