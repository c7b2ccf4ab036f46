#include "shardc/sharding/SplitBatch.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/sharding/Plan.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/sharding/SpmdLowering.h"
#include "shardc/sharding/Tactics.h"
#include "shardc/support/Error.h"

namespace shardc {

std::unique_ptr<Module> splitBatch(const Function& f, int64_t pieces) {
  const std::string axis = "micro";
  ShardingPlan plan(Mesh({{axis, pieces}}));
  applyDataParallel(f, plan, axis);
  replicateUnfixedParameters(f, plan);
  propagateShardings(f, plan);
  SpmdProgram p = lowerToSpmd(f, plan);
  const std::string why =
      "the batch cannot be split into " + std::to_string(pieces) + " micro-batches: ";
  for (const auto& op : p.function().ops())
    if (op->def().communicates)
      throw Error(why + "an op mixes the samples of the batch (the split program would need " +
                  op->name() + " across the micro-batches" +
                  (op->numOperands() && !op->operand(0)->name().empty()
                       ? ", of %" + op->operand(0)->name()
                       : std::string()) +
                  ")");
  for (size_t i = 0; i < p.resultShardings.size(); ++i) {
    const TensorSharding& s = p.resultShardings[i];
    if (s.dims.empty() || s.dims[0] != std::vector<std::string>{axis})
      throw Error(why + "result '" + f.results()[i].name + "' (" +
                  f.results()[i].value->type().str() +
                  ") does not keep the batch as its first dimension");
  }
  return std::move(p.module);
}

} // namespace shardc
