// inlineCalls: every `call` becomes a copy of its callee's ops, so passes that see one
// function at a time (partitioning, SPMD lowering) see the whole program.
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/transforms/Passes.h"

#include <set>

namespace shardc {

bool inlineCalls(Function& f) {
  Module* m = f.module();
  std::vector<Op*> calls;
  for (const auto& op : f.ops())
    if (op->def().callsFunction) calls.push_back(op.get());
  // A called function calls nothing (the verifier checks it): one round inlines them all.
  std::set<std::string> inlined;
  for (Op* call : calls) {
    const Function* callee = m ? m->callee(*call) : nullptr;
    if (!callee)
      throw Error("internal error: a call in @" + f.name() + " names no function of the module");
    Builder b(f);
    b.setInsertionPoint(call);
    std::unordered_map<const Value*, Value*> map;
    for (size_t i = 0; i < callee->numArguments(); ++i)
      map[callee->argument(i)] = call->operand(i);
    b.cloneOps(*callee, map);
    for (size_t r = 0; r < call->numResults(); ++r)
      call->result(r)->replaceAllUsesWith(map.at(callee->results()[r].value));
    inlined.insert(callee->name());
    f.eraseOp(call);
  }
  if (!m || inlined.empty()) return !calls.empty();
  // The callees no other function calls.
  for (const auto& g : m->functions())
    for (const auto& op : g->ops())
      if (op->def().callsFunction) inlined.erase(op->attrs().getString("callee"));
  for (const std::string& name : inlined)
    m->eraseFunction(m->findFunction(name));
  return true;
}

} // namespace shardc
