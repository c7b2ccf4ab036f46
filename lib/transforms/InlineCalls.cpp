// inlineCalls: every `call` becomes a copy of its callee's ops, and every `scan` one copy per
// step reading its slices of the stacked operands, so passes that see one function at a time
// (partitioning, SPMD lowering) see the whole program.
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/transforms/Passes.h"

#include <set>

namespace shardc {
namespace {

// Step `s` of a scan as a copy of its callee: slice s of each stacked operand reshaped to the
// callee's argument, each per-step result reshaped to a leading 1 and the steps concatenated.
void unrollScan(Builder& b, Op& scan, const Function& callee) {
  ScanLayout l = ScanLayout::of(scan);
  std::vector<Value*> carried(scan.operands().begin(), scan.operands().begin() + l.carried);
  std::vector<std::vector<Value*>> ys(l.ys, std::vector<Value*>(l.length)),
      saved(l.saveCarries ? l.carried : 0, std::vector<Value*>(l.length));
  auto lift = [&](Value* v) {
    return b.value("reshape", {v}, {{"shape", stackedType(1, v->type()).shape}});
  };
  for (int64_t i = 0; i < l.length; ++i) {
    int64_t s = l.step(i);
    std::unordered_map<const Value*, Value*> map;
    for (size_t k = 0; k < callee.numArguments(); ++k) {
      Value* v = scan.operand(k);
      if (k < l.carried) {
        v = carried[k];
        if (l.saveCarries) saved[k][static_cast<size_t>(s)] = lift(v);
      } else if (k >= l.firstX()) {
        auto rank = static_cast<size_t>(v->type().rank());
        std::vector<int64_t> start(rank, 0), limit = v->type().shape, stride(rank, 1);
        start[0] = s;
        limit[0] = s + 1;
        v = b.value("slice", {v}, {{"start", start}, {"limit", limit}, {"stride", stride}});
        v = b.value("reshape", {v}, {{"shape", callee.argument(k)->type().shape}});
      }
      map[callee.argument(k)] = v;
    }
    b.cloneOps(callee, map);
    for (size_t c = 0; c < l.carried; ++c)
      carried[c] = map.at(callee.results()[c].value);
    for (size_t y = 0; y < l.ys; ++y)
      ys[y][static_cast<size_t>(s)] = lift(map.at(callee.results()[l.carried + y].value));
  }
  auto stack = [&](std::vector<Value*> parts) {
    return parts.size() == 1 ? parts[0]
                             : b.value("concat", std::move(parts), {{"axis", int64_t{0}}});
  };
  for (size_t c = 0; c < l.carried; ++c)
    scan.result(c)->replaceAllUsesWith(carried[c]);
  for (size_t y = 0; y < l.ys; ++y)
    scan.result(l.firstY() + y)->replaceAllUsesWith(stack(ys[y]));
  for (size_t c = 0; c < saved.size(); ++c)
    scan.result(l.firstSaved() + c)->replaceAllUsesWith(stack(saved[c]));
}

} // namespace

bool inlineCalls(Function& f) {
  Module* m = f.module();
  std::vector<Op*> calls;
  for (const auto& op : f.ops())
    if (op->def().callsFunction) calls.push_back(op.get());
  // A called function calls nothing (the verifier checks it): one round inlines them all.
  std::set<std::string> inlined;
  for (Op* call : calls) {
    const Function* callee = m ? m->callee(*call) : nullptr;
    if (!callee) throw InternalError("a call in @" + f.name() + " names no function of the module");
    Builder b(f);
    b.setInsertionPoint(call);
    b.setLoc(call->loc());
    if (isScan(*call)) {
      unrollScan(b, *call, *callee);
    } else {
      std::unordered_map<const Value*, Value*> map;
      for (size_t i = 0; i < callee->numArguments(); ++i)
        map[callee->argument(i)] = call->operand(i);
      b.cloneOps(*callee, map);
      for (size_t r = 0; r < call->numResults(); ++r)
        call->result(r)->replaceAllUsesWith(map.at(callee->results()[r].value));
    }
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
