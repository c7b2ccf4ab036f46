#include "shardc/ir/IR.h"
#include "shardc/transforms/Passes.h"

namespace shardc {

bool eliminateDeadCode(Function& f) {
  // Visit in reverse order: erasing a user first can make its operands' producers dead.
  std::vector<Op*> order;
  for (auto& op : f.ops())
    order.push_back(op.get());
  bool changed = false;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if ((*it)->hasUses()) continue;
    f.eraseOp(*it);
    changed = true;
  }
  return changed;
}

} // namespace shardc
