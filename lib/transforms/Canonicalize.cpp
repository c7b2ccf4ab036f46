#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/transforms/Passes.h"

namespace shardc {
namespace {

bool isConstant(const Value* v) {
  return v->definingOp() && v->definingOp()->name() == opname::kConstant;
}

// Replaces every result of `op` by a constant computed with its reference kernel.
bool foldConstant(Function& f, Op* op) {
  if (op->name() == opname::kConstant || op->numOperands() == 0 || op->def().communicates)
    return false;
  for (Value* v : op->operands())
    if (!isConstant(v)) return false;
  std::vector<TensorType> types;
  for (size_t i = 0; i < op->numResults(); ++i) {
    types.push_back(op->result(i)->type());
    if (types.back().numel() > kFoldLimit) return false;
  }
  std::vector<const Tensor*> inputs;
  for (Value* v : op->operands())
    inputs.push_back(&v->definingOp()->attrs().getTensor("value"));
  std::vector<Tensor> outs;
  try {
    outs = op->def().kernel(KernelArgs{inputs, op->attrs(), types, nullptr});
  } catch (const Error&) {
    return false; // e.g. an out-of-range gather: leave it for the run to report
  }
  Builder b(f);
  b.setInsertionPoint(op);
  b.setLoc(op->loc());
  for (size_t i = 0; i < outs.size(); ++i) {
    Value* c = b.value("constant", {},
                       {{"value", TensorRef(std::make_shared<Tensor>(std::move(outs[i])))}});
    op->result(i)->replaceAllUsesWith(c);
  }
  return true;
}

bool isIdentityPerm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// A zero pad along one axis only, read by nothing but `user`: the axis, or -1.
int64_t zeroPadAxis(const Value* v, const Op* user) {
  const Op* p = v->definingOp();
  if (!p || p->name() != opname::kPad || v->uses().size() != 1 || v->uses()[0].user != user ||
      p->attrs().getFloat("value") != 0.0)
    return -1;
  const auto &lo = p->attrs().getInts("low"), &hi = p->attrs().getInts("high"),
             &in = p->attrs().getInts("interior");
  int64_t axis = -1;
  for (size_t d = 0; d < lo.size(); ++d) {
    if (in[d] != 0 || lo[d] < 0 || hi[d] < 0) return -1;
    if (lo[d] == 0 && hi[d] == 0) continue;
    if (axis >= 0) return -1;
    axis = static_cast<int64_t>(d);
  }
  return axis;
}

// The sum of two zero pads whose pieces lie side by side along one axis is one pad of
// their concatenation: the gradient of slices that split a value (a fused QKV projection's
// q, k and v) is then assembled by copies instead of pads of the whole and adds.
Value* padsSideBySide(Function& f, Op* add) {
  Value *a = add->operand(0), *b = add->operand(1);
  if (a == b || a->type() != add->result(0)->type() || b->type() != a->type()) return nullptr;
  int64_t axis = zeroPadAxis(a, add);
  if (axis < 0 || zeroPadAxis(b, add) != axis) return nullptr;
  Op *pa = a->definingOp(), *pb = b->definingOp();
  auto at = static_cast<size_t>(axis);
  int64_t dim = a->type().shape[at];
  // Order them: `first` ends where `second` starts.
  if (dim - pa->attrs().getInts("high")[at] != pb->attrs().getInts("low")[at]) std::swap(pa, pb);
  if (dim - pa->attrs().getInts("high")[at] != pb->attrs().getInts("low")[at]) return nullptr;
  Builder bld(f);
  bld.setInsertionPoint(add);
  bld.setLoc(add->loc());
  Value* joined = bld.value("concat", {pa->operand(0), pb->operand(0)}, {{"axis", axis}});
  std::vector<int64_t> lo = pa->attrs().getInts("low"), hi = pb->attrs().getInts("high");
  if (lo[at] == 0 && hi[at] == 0) return joined;
  return bld.value(
      "pad", {joined},
      {{"low", lo}, {"high", hi}, {"interior", pa->attrs().getInts("interior")}, {"value", 0.0}});
}

// Rewrites that forward an operand or merge an op into its producer. Returns the value
// that replaces result 0, or nullptr.
Value* simplify(Function& f, Op* op) {
  const std::string& n = op->name();
  Value* x = op->numOperands() ? op->operand(0) : nullptr;
  Op* producer = x ? x->definingOp() : nullptr;
  Value* r = op->numResults() ? op->result(0) : nullptr;
  bool sameType = x && r && op->numResults() == 1 && x->type() == r->type();
  if ((n == opname::kReshape || n == opname::kBroadcast || n == opname::kCast ||
       n == opname::kSlice) &&
      sameType)
    return x;
  if ((n == opname::kConcat || n == opname::kSplit) && op->numOperands() == 1 &&
      op->numResults() == 1)
    return x;
  if (n == opname::kTranspose) {
    const auto& perm = op->attrs().getInts("perm");
    if (isIdentityPerm(perm)) return x;
    if (producer && producer->name() == opname::kTranspose) {
      const auto& inner = producer->attrs().getInts("perm");
      std::vector<int64_t> combined;
      for (int64_t p : perm)
        combined.push_back(inner[static_cast<size_t>(p)]);
      Builder b(f);
      b.setInsertionPoint(op);
      b.setLoc(op->loc());
      return b.value("transpose", {producer->operand(0)}, {{"perm", combined}});
    }
  }
  if (n == opname::kAdd) return padsSideBySide(f, op);
  if (n == opname::kReshape && producer && producer->name() == opname::kReshape) {
    Builder b(f);
    b.setInsertionPoint(op);
    b.setLoc(op->loc());
    return b.value("reshape", {producer->operand(0)}, {{"shape", r->type().shape}});
  }
  return nullptr;
}

} // namespace

bool canonicalize(Function& f) {
  bool changed = false, again = true;
  while (again) {
    again = false;
    std::vector<Op*> order;
    for (auto& op : f.ops())
      order.push_back(op.get());
    for (Op* op : order) {
      if (!op->hasUses()) continue;
      if (foldConstant(f, op)) {
        again = true;
      } else if (Value* v = simplify(f, op)) {
        op->result(0)->replaceAllUsesWith(v);
        again = true;
      }
    }
    // The ops replaced above are dead now, and so may be their producers.
    again |= eliminateDeadCode(f);
    changed |= again;
  }
  return changed;
}

} // namespace shardc
