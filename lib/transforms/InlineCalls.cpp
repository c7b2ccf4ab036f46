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
  bool changed = false;
  // A callee may call others: each round inlines one level (the verifier refuses cycles; the
  // bound stops a cycle it missed).
  for (int depth = 0;; ++depth) {
    std::vector<Op*> calls;
    for (const auto& op : f.ops())
      if (op->def().callsFunction) calls.push_back(op.get());
    if (calls.empty()) break;
    if (depth == 64) throw Error("calls nest more than 64 deep in @" + f.name());
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
      f.eraseOp(call);
    }
    changed = true;
  }
  if (!m || !changed) return changed;
  // The functions no call from f reaches any more (f calls nothing now, but other functions
  // of the module may still be entries of their own).
  std::set<std::string> called;
  for (const auto& g : m->functions())
    if (g.get() != &f)
      for (const auto& op : g->ops())
        if (op->def().callsFunction) called.insert(op->attrs().getString("callee"));
  std::vector<const Function*> unused;
  for (const auto& g : m->functions())
    if (g.get() != &f && !called.count(g->name())) unused.push_back(g.get());
  for (const Function* g : unused)
    m->eraseFunction(g);
  return true;
}

} // namespace shardc
