#include "shardc/train/Autodiff.h"

#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace shardc {
namespace {

// A scan of a split function: a reverse scan of its backward step (CallGradients.cpp) from the
// cotangents of the final carried values, the stacked values the forward saved and the
// cotangents of its stacked results (zeros where none flows).
void scanGradients(Builder& b, const Op& scan, const std::vector<Value*>& resultGrads,
                   const CallVjp& vjp, const std::function<void(size_t, Value*)>& add) {
  ScanLayout l = ScanLayout::of(scan);
  const Function* step = scan.parent()->module()->findFunction(vjp.scanBackward);
  auto gradOf = [&](size_t r) {
    return resultGrads[r] ? resultGrads[r] : zerosLike(b, scan.result(r)->type());
  };
  std::vector<Value*> operands;
  for (size_t c = 0; c < l.carried; ++c)
    operands.push_back(gradOf(c));
  for (size_t i : vjp.scanSharedGrads)
    operands.push_back(zerosLike(b, scan.operand(i)->type()));
  for (size_t i = l.carried; i < l.firstX(); ++i)
    operands.push_back(scan.operand(i));
  for (size_t c = 0; c < l.carried && vjp.scanReadsCarries; ++c)
    operands.push_back(scan.result(l.firstSaved() + c));
  for (size_t i = l.firstX(); i < scan.numOperands(); ++i)
    operands.push_back(scan.operand(i));
  for (size_t r : vjp.residualResults)
    operands.push_back(scan.result(r));
  for (size_t k = l.carried; k < vjp.cotangents.size(); ++k)
    operands.push_back(gradOf(vjp.cotangents[k]));
  size_t carried = l.carried + vjp.scanSharedGrads.size();
  Op* back = b.scan(*step, std::move(operands), l.length, carried, l.shared, !l.reverse, false);
  for (size_t c = 0; c < l.carried; ++c)
    add(c, back->result(c));
  for (size_t a = 0; a < vjp.scanSharedGrads.size(); ++a)
    add(vjp.scanSharedGrads[a], back->result(l.carried + a));
  for (size_t q = 0; q < vjp.scanXGrads.size(); ++q)
    add(vjp.scanXGrads[q], back->result(carried + q));
}

// A call of a split function: its backward's call, from the forward call's operands,
// residuals and the cotangents of its results (zeros where none flows).
void callGradients(Builder& b, const Op& call, const std::vector<Value*>& resultGrads,
                   const CallVjps* calls, const std::function<void(size_t, Value*)>& add) {
  const std::string& callee = call.attrs().getString("callee");
  auto it = calls ? calls->find(callee) : CallVjps::const_iterator{};
  if (!calls || it == calls->end())
    throw Error("a gradient must flow through the call of @" + callee +
                ", which was not differentiated");
  const CallVjp& vjp = it->second;
  if (isScan(call)) return scanGradients(b, call, resultGrads, vjp, add);
  const Function* backward = call.parent()->module()->findFunction(vjp.backward);
  std::vector<Value*> operands(call.operands().begin(), call.operands().end());
  for (size_t r : vjp.residualResults)
    operands.push_back(call.result(r));
  for (size_t r : vjp.cotangents) {
    Value* g = resultGrads[r];
    operands.push_back(g ? g : zerosLike(b, call.result(r)->type()));
  }
  Op* bwd = b.call(*backward, std::move(operands));
  for (size_t k = 0; k < vjp.gradOperands.size(); ++k)
    add(vjp.gradOperands[k], bwd->result(k));
}

} // namespace

std::unordered_set<const Value*> floatDependents(const Function& f,
                                                 const std::vector<Value*>& from) {
  std::unordered_set<const Value*> out(from.begin(), from.end());
  for (const auto& op : f.ops()) {
    bool any = false;
    for (Value* v : op->operands())
      any |= out.count(v) > 0;
    if (any)
      for (size_t i = 0; i < op->numResults(); ++i)
        if (isFloat(op->result(i)->type().dtype)) out.insert(op->result(i));
  }
  return out;
}

std::vector<Value*> buildGradients(Function& f, Value* loss, const std::vector<Value*>& wrt,
                                   const CallVjps* calls) {
  if (loss->type().rank() != 0 || !isFloat(loss->type().dtype))
    throw Error("the loss must be a floating-point scalar, got " + loss->type().str());
  Builder b(f);
  Tensor one(loss->type());
  one.setDouble(0, 1.0);
  b.setLoc(loss->definingOp() ? loss->definingOp()->loc() : Loc{});
  Value* seed =
      b.value("constant", {}, {{"value", TensorRef(std::make_shared<Tensor>(std::move(one)))}});
  return buildVjp(f, {{loss, seed}}, wrt, calls);
}

std::vector<Value*> buildVjp(Function& f, const std::vector<std::pair<Value*, Value*>>& seeds,
                             const std::vector<Value*>& wrt, const CallVjps* calls) {
  std::vector<Op*> forward;
  for (auto& op : f.ops())
    forward.push_back(op.get());

  // Values that depend on some w (forward) and that a seed depends on (backward): only
  // ops in both sets need a gradient rule.
  std::unordered_set<const Value*> dependsOnWrt = floatDependents(f, wrt), feedsLoss;
  for (const auto& [v, g] : seeds)
    feedsLoss.insert(v);
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    bool any = false;
    for (size_t i = 0; i < (*it)->numResults(); ++i)
      any |= feedsLoss.count((*it)->result(i)) > 0;
    if (any)
      for (Value* v : (*it)->operands())
        feedsLoss.insert(v);
  }
  auto active = [&](const Value* v) {
    return dependsOnWrt.count(v) && feedsLoss.count(v) && isFloat(v->type().dtype);
  };

  Builder b(f);
  std::unordered_map<const Value*, Value*> grads;
  auto accumulate = [&](Value* v, Value* g) {
    auto [it, fresh] = grads.emplace(v, g);
    if (!fresh) it->second = b.value("add", {it->second, g});
  };
  for (const auto& [v, g] : seeds)
    accumulate(v, g);
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    Op* op = *it;
    std::vector<Value*> resultGrads;
    bool anyGrad = false;
    for (size_t i = 0; i < op->numResults(); ++i) {
      auto g = grads.find(op->result(i));
      resultGrads.push_back(g == grads.end() ? nullptr : g->second);
      anyGrad |= g != grads.end();
    }
    bool needs = false;
    for (Value* v : op->operands())
      needs |= active(v);
    if (!anyGrad || !needs) continue;
    b.setLoc(op->loc());
    if (op->def().callsFunction) {
      callGradients(b, *op, resultGrads, calls, [&](size_t i, Value* g) {
        if (active(op->operand(i))) accumulate(op->operand(i), g);
      });
      continue;
    }
    if (!op->def().gradient) {
      std::string where = op->loc().line ? " at line " + std::to_string(op->loc().line) : "";
      throw Error("op '" + op->name() + "'" + where +
                  " has no gradient rule, but a gradient must flow through it to a parameter");
    }
    std::vector<Value*> operandGrads = op->def().gradient(GradArgs{b, *op, resultGrads});
    for (size_t i = 0; i < op->numOperands(); ++i)
      if (operandGrads[i] && active(op->operand(i))) accumulate(op->operand(i), operandGrads[i]);
  }
  std::vector<Value*> out;
  for (Value* w : wrt) {
    auto g = grads.find(w);
    out.push_back(g == grads.end() ? nullptr : g->second);
  }
  return out;
}

} // namespace shardc
