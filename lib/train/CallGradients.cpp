// splitCallsForGradients: each called function is differentiated once, so a training step
// over a model of repeated calls stays a program of calls (see Autodiff.h).
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/train/Autodiff.h"

#include <functional>
#include <set>
#include <unordered_set>

namespace shardc {
namespace {

std::string freeName(const Module& m, const std::string& base) {
  std::string name = base;
  for (int n = 2; m.findFunction(name); ++n)
    name = base + "_" + std::to_string(n);
  return name;
}

// Differentiates `callee` with respect to its arguments `wrt` as @<callee>_fwd and
// @<callee>_bwd: the callee's ops and their gradient ops are built in one function, then
// the gradient ops move to the backward, reading what they need of the forward's values as
// residuals it returns.
CallVjp split(Module& m, const Function& callee, const std::vector<size_t>& wrt,
              std::string& forwardName) {
  Function joint(callee.name());
  std::unordered_map<const Value*, Value*> map;
  for (size_t i = 0; i < callee.numArguments(); ++i) {
    const Value* a = callee.argument(i);
    map[a] = joint.addArgument(a->name(), a->type(), a->argKind());
  }
  Builder b(joint);
  b.cloneOps(callee, map);
  size_t forwardOps = joint.ops().size();
  CallVjp vjp;
  std::vector<std::pair<Value*, Value*>> seeds;
  std::vector<Value*> cotangents;
  for (size_t r = 0; r < callee.results().size(); ++r) {
    const FuncResult& res = callee.results()[r];
    if (!isFloat(res.value->type().dtype)) continue;
    vjp.cotangents.push_back(r);
    cotangents.push_back(joint.addArgument("d_" + res.name, res.value->type(), ArgKind::Input));
    seeds.emplace_back(map.at(res.value), cotangents.back());
  }
  std::vector<Value*> args;
  for (size_t i : wrt)
    args.push_back(joint.argument(i));
  std::vector<Value*> grads = buildVjp(joint, seeds, args);

  // The backward: the gradient ops the gradients need (rules also build operand gradients
  // nobody reads).
  std::vector<const Op*> ops;
  for (const auto& op : joint.ops())
    ops.push_back(op.get());
  std::unordered_set<const Op*> isForward(ops.begin(), ops.begin() + forwardOps), live;
  std::vector<const Op*> work;
  auto need = [&](const Value* v) {
    const Op* d = v->definingOp();
    if (d && !isForward.count(d) && live.insert(d).second) work.push_back(d);
  };
  for (Value* g : grads)
    if (g) need(g);
  while (!work.empty()) {
    const Op* op = work.back();
    work.pop_back();
    for (const Value* v : op->operands())
      need(v);
  }
  // What the backward reads of the forward: residuals the forward returns, except values
  // cheaply made from arguments and constants alone (a weight's transpose, the mask's
  // comparison), which the backward makes again rather than the forward storing them.
  std::unordered_map<const Op*, bool> cheapMemo;
  std::function<bool(const Op*)> cheap = [&](const Op* d) {
    static const std::set<std::string> kinds = {"constant", "transpose", "reshape", "broadcast",
                                                "compare",  "cast",      "slice"};
    if (auto it = cheapMemo.find(d); it != cheapMemo.end()) return it->second;
    bool ok = kinds.count(d->name()) > 0;
    for (const Value* v : d->operands())
      ok = ok && (v->isArgument() || cheap(v->definingOp()));
    return cheapMemo[d] = ok;
  };
  std::vector<Value*> residuals;
  std::unordered_set<const Op*> remade;
  std::unordered_set<const Value*> seen;
  std::function<void(Value*)> readFromForward = [&](Value* v) {
    const Op* d = v->definingOp();
    if (!d || !isForward.count(d) || !seen.insert(v).second) return;
    if (!cheap(d)) {
      residuals.push_back(v);
      return;
    }
    if (remade.insert(d).second)
      for (Value* x : d->operands())
        readFromForward(x);
  };
  for (size_t i = forwardOps; i < ops.size(); ++i)
    if (live.count(ops[i]))
      for (Value* v : ops[i]->operands())
        readFromForward(v);
  for (Value* g : grads)
    if (g) readFromForward(g); // a gradient the forward computed already

  forwardName = freeName(m, callee.name() + "_fwd");
  Function* fwd = m.addFunction(forwardName);
  std::unordered_map<const Value*, Value*> toFwd, toBwd;
  for (size_t i = 0; i < callee.numArguments(); ++i) {
    const Value* a = joint.argument(i);
    toFwd[a] = fwd->addArgument(a->name(), a->type(), a->argKind());
  }
  Function* bwd = m.addFunction(freeName(m, callee.name() + "_bwd"));
  vjp.backward = bwd->name();
  for (size_t i = 0; i < callee.numArguments(); ++i) {
    const Value* a = joint.argument(i);
    toBwd[a] = bwd->addArgument(a->name(), a->type(), ArgKind::Input);
  }
  Builder fb(*fwd), bb(*bwd);
  for (size_t i = 0; i < forwardOps; ++i)
    fb.clone(*ops[i], toFwd);
  std::unordered_map<const Value*, size_t> resultIndex;
  for (const FuncResult& r : callee.results()) {
    resultIndex.emplace(map.at(r.value), fwd->results().size());
    fwd->addResult(r.name, toFwd.at(map.at(r.value)));
  }
  // A residual the callee returns already is read from that result.
  for (size_t k = 0; k < residuals.size(); ++k) {
    auto [it, fresh] = resultIndex.emplace(residuals[k], fwd->results().size());
    if (fresh) fwd->addResult("residual" + std::to_string(k), toFwd.at(residuals[k]));
    vjp.residualResults.push_back(it->second);
    toBwd[residuals[k]] =
        bwd->addArgument("residual" + std::to_string(k), residuals[k]->type(), ArgKind::Input);
  }
  for (Value* c : cotangents)
    toBwd[c] = bwd->addArgument(c->name(), c->type(), ArgKind::Input);
  for (size_t i = 0; i < ops.size(); ++i)
    if (i < forwardOps ? remade.count(ops[i]) > 0 : live.count(ops[i]) > 0)
      bb.clone(*ops[i], toBwd);
  for (size_t k = 0; k < wrt.size(); ++k) {
    if (!grads[k]) continue;
    vjp.gradOperands.push_back(wrt[k]);
    bwd->addResult("d_" + callee.argument(wrt[k])->name(), toBwd.at(grads[k]));
  }
  return vjp;
}

} // namespace

CallVjps splitCallsForGradients(Function& f, const std::vector<Value*>& trained) {
  Module* m = f.module();
  // Values computed from a trained parameter: the operands a gradient may flow to.
  std::unordered_set<const Value*> fromTrained = floatDependents(f, trained);
  std::vector<Op*> calls;
  for (const auto& op : f.ops())
    if (op->def().callsFunction)
      for (Value* v : op->operands())
        if (fromTrained.count(v)) {
          calls.push_back(op.get());
          break;
        }
  // Per callee, the arguments some call passes a value computed from a trained parameter.
  std::map<std::string, std::set<size_t>> wrt;
  for (const Op* call : calls)
    for (size_t i = 0; i < call->numOperands(); ++i)
      if (fromTrained.count(call->operand(i)) && isFloat(call->operand(i)->type().dtype))
        wrt[call->attrs().getString("callee")].insert(i);
  CallVjps out;
  std::map<std::string, std::string> forwardOf; // callee -> its forward
  for (const auto& [name, args] : wrt) {
    const Function* callee = m->findFunction(name);
    std::string forward;
    CallVjp vjp = split(*m, *callee, std::vector<size_t>(args.begin(), args.end()), forward);
    out.emplace(forward, std::move(vjp));
    forwardOf[name] = forward;
  }
  for (Op* call : calls) {
    const Function* fwd = m->findFunction(forwardOf.at(call->attrs().getString("callee")));
    Builder b(f);
    b.setInsertionPoint(call);
    b.setLoc(call->loc());
    Op* now = b.call(*fwd, call->operands());
    for (size_t r = 0; r < call->numResults(); ++r) {
      now->result(r)->setName(call->result(r)->name());
      call->result(r)->replaceAllUsesWith(now->result(r));
    }
    f.eraseOp(call);
  }
  // The callees no call names any more.
  std::set<std::string> called;
  for (const auto& op : f.ops())
    if (op->def().callsFunction) called.insert(op->attrs().getString("callee"));
  for (const auto& [name, forward] : forwardOf)
    if (!called.count(name)) m->eraseFunction(m->findFunction(name));
  return out;
}

} // namespace shardc
