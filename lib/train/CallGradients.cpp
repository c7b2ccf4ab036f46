// splitCallsForGradients: each called function is differentiated once, so a training step
// over a model of repeated calls stays a program of calls (see Autodiff.h).
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/train/Autodiff.h"

#include <functional>
#include <numeric>
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
CallVjp split(Module& m, const Function& callee, const std::vector<size_t>& wrt, size_t carried,
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
  // A residual the callee returns already is read from that result, unless it is one of the
  // first `carried` (a scan keeps only their last step's value).
  for (size_t k = 0; k < residuals.size(); ++k) {
    auto [it, fresh] = resultIndex.emplace(residuals[k], fwd->results().size());
    if (!fresh && it->second < carried) {
      it->second = fwd->results().size();
      fresh = true;
    }
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

// The backward of a scanned callee as the body of a reverse scan (layout in shardc/ir/Scan.h),
// from its backward `bwd` (the callee's arguments, residuals, cotangents -> gradients):
//   carried: the cotangents of the carried values, then the gradients of the shared operands
//            added up over the steps;
//   shared:  the scan's shared operands;
//   stacked: the carried values each step started from (when the backward reads them), the
//            scan's stacked operands, the residuals, the cotangents of the stacked results;
//   returns: the carried values' cotangents for the step before, the sums, and the gradients
//            of the stacked operands.
void buildScanBackward(Module& m, const Function& callee, const Function& bwd, size_t carried,
                       size_t shared, CallVjp& vjp) {
  size_t nArgs = callee.numArguments(), nRes = vjp.residualResults.size();
  std::vector<size_t> sharedGrads, xGrads;
  std::map<size_t, size_t> gradOf; // callee argument -> bwd result
  for (size_t k = 0; k < vjp.gradOperands.size(); ++k) {
    size_t i = vjp.gradOperands[k];
    gradOf[i] = k;
    if (i >= carried && i < carried + shared) sharedGrads.push_back(i);
    if (i >= carried + shared) xGrads.push_back(i);
  }
  bool readsCarries = false;
  for (size_t c = 0; c < carried; ++c)
    readsCarries |= !bwd.argument(c)->uses().empty();
  Function* s = m.addFunction(freeName(m, callee.name() + "_bwd_step"));
  std::unordered_map<const Value*, Value*> map;
  std::vector<Value*> dc, acc;
  for (size_t c = 0; c < carried; ++c) {
    dc.push_back(s->addArgument("d_" + callee.argument(c)->name(), callee.argument(c)->type(),
                                ArgKind::Input));
    map[bwd.argument(nArgs + nRes + c)] = dc.back(); // cotangents: the carried ones first
  }
  for (size_t i : sharedGrads)
    acc.push_back(s->addArgument("sum_d_" + callee.argument(i)->name(), callee.argument(i)->type(),
                                 ArgKind::Input));
  for (size_t i = carried; i < carried + shared; ++i)
    map[bwd.argument(i)] =
        s->addArgument(callee.argument(i)->name(), callee.argument(i)->type(), ArgKind::Input);
  for (size_t c = 0; c < carried && readsCarries; ++c)
    map[bwd.argument(c)] =
        s->addArgument(callee.argument(c)->name(), callee.argument(c)->type(), ArgKind::Input);
  for (size_t i = carried + shared; i < nArgs; ++i)
    map[bwd.argument(i)] =
        s->addArgument(callee.argument(i)->name(), callee.argument(i)->type(), ArgKind::Input);
  for (size_t k = 0; k < nRes; ++k)
    map[bwd.argument(nArgs + k)] = s->addArgument(bwd.argument(nArgs + k)->name(),
                                                  bwd.argument(nArgs + k)->type(), ArgKind::Input);
  for (size_t k = carried; k < vjp.cotangents.size(); ++k) {
    const Value* a = bwd.argument(nArgs + nRes + k);
    map[a] = s->addArgument(a->name(), a->type(), ArgKind::Input);
  }
  Builder b(*s);
  b.cloneOps(bwd, map);
  auto grad = [&](size_t i) -> Value* {
    auto it = gradOf.find(i);
    return it == gradOf.end() ? nullptr : map.at(bwd.results()[it->second].value);
  };
  for (size_t c = 0; c < carried; ++c) {
    Value* g = grad(c);
    if (!g) g = zerosLike(b, callee.argument(c)->type());
    s->addResult("d_" + callee.argument(c)->name(), g);
  }
  for (size_t a = 0; a < sharedGrads.size(); ++a)
    s->addResult(acc[a]->name(), b.value("add", {acc[a], grad(sharedGrads[a])}));
  for (size_t i : xGrads)
    s->addResult("d_" + callee.argument(i)->name(), grad(i));
  vjp.scanBackward = s->name();
  vjp.scanSharedGrads = std::move(sharedGrads);
  vjp.scanXGrads = std::move(xGrads);
  vjp.scanReadsCarries = readsCarries;
}

} // namespace

Value* zerosLike(Builder& b, const TensorType& t) {
  Value* zero =
      b.value("constant", {},
              {{"value", TensorRef(std::make_shared<Tensor>(Tensor(TensorType{t.dtype, {}})))}});
  return t.rank() == 0 ? zero : b.value("broadcast", {zero}, {{"shape", t.shape}});
}

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
  // Per callee, the arguments some call passes a value computed from a trained parameter;
  // a scan's carried values too (a later step's depend on the stacked parameters).
  std::map<std::string, std::set<size_t>> wrt;
  std::map<std::string, ScanLayout> scanned;
  std::set<std::string> plain;
  for (const Op* call : calls) {
    const std::string& name = call->attrs().getString("callee");
    for (size_t i = 0; i < call->numOperands(); ++i)
      if (fromTrained.count(call->operand(i)) && isFloat(call->operand(i)->type().dtype))
        wrt[name].insert(i);
    if (!isScan(*call)) {
      plain.insert(name);
      continue;
    }
    ScanLayout l = ScanLayout::of(*call);
    if (auto [it, fresh] = scanned.emplace(name, l);
        !fresh && (it->second.carried != l.carried || it->second.shared != l.shared))
      throw Error("@" + name + " is scanned with two layouts; differentiate one of them");
    for (size_t c = 0; c < l.carried; ++c) {
      if (!isFloat(call->operand(c)->type().dtype))
        throw Error("the scan of @" + name + " carries " + call->operand(c)->type().str() +
                    " (operand " + std::to_string(c) +
                    "); a gradient flows through a scan only over floating-point carried values");
      wrt[name].insert(c);
    }
  }
  CallVjps out;
  std::map<std::string, std::string> forwardOf; // callee -> its forward
  for (const auto& [name, args] : wrt) {
    const Function* callee = m->findFunction(name);
    auto sc = scanned.find(name);
    size_t carried = sc == scanned.end() ? 0 : sc->second.carried;
    std::string forward;
    CallVjp vjp =
        split(*m, *callee, std::vector<size_t>(args.begin(), args.end()), carried, forward);
    if (sc != scanned.end())
      buildScanBackward(*m, *callee, *m->findFunction(vjp.backward), carried, sc->second.shared,
                        vjp);
    out.emplace(forward, std::move(vjp));
    forwardOf[name] = forward;
  }
  for (Op* call : calls) {
    const std::string& name = call->attrs().getString("callee");
    const Function* fwd = m->findFunction(forwardOf.at(name));
    Builder b(f);
    b.setInsertionPoint(call);
    b.setLoc(call->loc());
    Op* now = nullptr;
    std::vector<size_t> resultAt(call->numResults()); // the old result's index in the new op
    std::iota(resultAt.begin(), resultAt.end(), 0);
    if (isScan(*call)) {
      ScanLayout l = ScanLayout::of(*call);
      const CallVjp& vjp = out.at(fwd->name());
      now = b.scan(*fwd, call->operands(), l.length, l.carried, l.shared, l.reverse,
                   l.saveCarries || vjp.scanReadsCarries);
      size_t ys = fwd->results().size() - l.carried;
      for (size_t r = l.firstSaved(); r < call->numResults(); ++r)
        resultAt[r] = r + ys - l.ys;
    } else {
      now = b.call(*fwd, call->operands());
    }
    for (size_t r = 0; r < call->numResults(); ++r) {
      now->result(resultAt[r])->setName(call->result(r)->name());
      call->result(r)->replaceAllUsesWith(now->result(resultAt[r]));
    }
    f.eraseOp(call);
  }
  // The callees no call names any more (and the backward a scan's backward step replaces).
  for (const auto& [fwd, vjp] : out)
    if (!vjp.scanBackward.empty()) {
      bool called = false; // by a plain call too
      for (const auto& [name, forward] : forwardOf)
        called |= forward == fwd && plain.count(name);
      if (!called) m->eraseFunction(m->findFunction(vjp.backward));
    }
  std::set<std::string> called;
  for (const auto& op : f.ops())
    if (op->def().callsFunction) called.insert(op->attrs().getString("callee"));
  for (const auto& [name, forward] : forwardOf)
    if (!called.count(name)) m->eraseFunction(m->findFunction(name));
  return out;
}

} // namespace shardc
