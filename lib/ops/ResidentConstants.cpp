#include "shardc/ops/ResidentConstants.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"

namespace shardc {

std::unordered_set<const Value*> residentConstants(const Function& f) {
  std::unordered_set<const Value*> resident;
  for (const auto& op : f.ops()) {
    bool c = !op->def().communicates && !op->def().callsFunction;
    for (const Value* v : op->operands())
      c = c && resident.count(v);
    if (c && op->name() != opname::kConstant)
      for (size_t r = 0; r < op->numResults(); ++r)
        c = c && op->result(r)->type().bytes() <= kMaxResidentBytes;
    if (!c) continue;
    for (size_t r = 0; r < op->numResults(); ++r)
      resident.insert(op->result(r));
  }
  return resident;
}

} // namespace shardc
