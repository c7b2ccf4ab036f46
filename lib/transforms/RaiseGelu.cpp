// GELU's tanh approximation written out in elementwise ops (what PyTorch exports for
// gelu(approximate="tanh") below opset 20, and what models that spell the formula produce):
//   y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// becomes one gelu op: one kernel, or a GEMM epilogue, instead of nine elementwise ops, and
// in training one gradient rule instead of the chain rule through each of them.
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/transforms/Passes.h"

#include <cmath>
#include <vector>

namespace shardc {
namespace {

// Whether `v` is a constant whose every element is `want` (to float precision).
bool isScalar(const Value* v, double want) {
  const Op* c = v->definingOp();
  if (!c || c->name() != opname::kConstant) return false;
  const Tensor& t = c->attrs().getTensor("value");
  if (t.numel() == 0) return false;
  for (int64_t i = 0; i < t.numel(); ++i)
    if (std::fabs(t.getDouble(i) - want) > 1e-6 * std::fabs(want)) return false;
  return true;
}

// The operand of a commutative binary `op` other than `known`, or nullptr.
Value* other(const Op* op, const Value* known) {
  if (op->operand(0) == known) return op->operand(1);
  if (op->operand(1) == known) return op->operand(0);
  return nullptr;
}

// `v` is x^3 as x * (x * x), (x * x) * x or pow(x, 3): returns x.
Value* cubeBase(Value* v) {
  Op* op = v->definingOp();
  if (!op) return nullptr;
  if (op->name() == opname::kPow && isScalar(op->operand(1), 3)) return op->operand(0);
  if (op->name() != opname::kMul) return nullptr;
  for (int i = 0; i < 2; ++i) {
    Value *sq = op->operand(i), *x = op->operand(1 - i);
    Op* s = sq->definingOp();
    if (s && s->name() == opname::kMul && s->operand(0) == x && s->operand(1) == x) return x;
  }
  return nullptr;
}

// The x of u = sqrt(2/pi) * (x + 0.044715 * x^3), or nullptr.
Value* tanhArgument(Value* u) {
  Op* scale = u->definingOp();
  if (!scale || scale->name() != opname::kMul) return nullptr;
  for (int i = 0; i < 2; ++i) {
    if (!isScalar(scale->operand(i), 0.7978845608028654)) continue;
    Op* sum = scale->operand(1 - i)->definingOp();
    if (!sum || sum->name() != opname::kAdd) continue;
    for (int j = 0; j < 2; ++j) {
      Value *x = sum->operand(j), *term = sum->operand(1 - j);
      Op* t = term->definingOp();
      if (!t || t->name() != opname::kMul) continue;
      for (int k = 0; k < 2; ++k)
        if (isScalar(t->operand(k), 0.044715) && cubeBase(t->operand(1 - k)) == x) return x;
    }
  }
  return nullptr;
}

// The single op reading `v`, or nullptr.
Op* soleUser(const Function& f, const Value* v) {
  if (v->uses().size() != 1) return nullptr;
  for (const auto& r : f.results())
    if (r.value == v) return nullptr;
  return v->uses()[0].user;
}

// From a = 1 + tanh(..): the op whose result is 0.5 * x * a in any association, or nullptr.
Op* halfProduct(const Function& f, Value* a, Value* x) {
  Op* m1 = soleUser(f, a);
  if (!m1 || m1->name() != opname::kMul) return nullptr;
  Value* p = other(m1, a);
  if (p == x || isScalar(p, 0.5)) { // (x * a) * 0.5 or (0.5 * a) * x
    Op* m2 = soleUser(f, m1->result(0));
    if (!m2 || m2->name() != opname::kMul) return nullptr;
    Value* q = other(m2, m1->result(0));
    return (p == x && isScalar(q, 0.5)) || (p != x && q == x) ? m2 : nullptr;
  }
  Op* h = p->definingOp(); // (0.5 * x) * a
  if (h && h->name() == opname::kMul && other(h, x) && isScalar(other(h, x), 0.5)) return m1;
  return nullptr;
}

} // namespace

bool raiseGelu(Function& f) {
  std::vector<Op*> tanhs;
  for (auto& op : f.ops())
    if (op->name() == opname::kTanh) tanhs.push_back(op.get());
  bool changed = false;
  for (Op* t : tanhs) {
    Value* x = tanhArgument(t->operand(0));
    if (!x || !isFloat(x->type().dtype)) continue;
    Op* a = soleUser(f, t->result(0));
    if (!a || a->name() != opname::kAdd || !isScalar(other(a, t->result(0)), 1)) continue;
    Op* y = halfProduct(f, a->result(0), x);
    if (!y || y->result(0)->type() != x->type()) continue;
    Builder b(f);
    b.setInsertionPoint(y);
    b.setLoc(y->loc());
    y->result(0)->replaceAllUsesWith(b.value("gelu", {x}, {{"approximate", std::string("tanh")}}));
    changed = true;
  }
  if (changed) eliminateDeadCode(f);
  return changed;
}

} // namespace shardc
