// A transpose of the last two dims of a matmul's product becomes the product of the
// operands transposed and swapped, (A B)^T = B^T A^T, also when the product is first summed
// over batch dims and reshaped to drop leading unit dims. That is how a Linear layer's weight
// gradient reaches its [out, in] weight: the GEMM then writes it in the parameter's layout
// instead of a transpose copying it after, and the operand transposes it adds are read
// through strides by the matmul kernel.
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/transforms/Passes.h"

#include <algorithm>
#include <vector>

namespace shardc {
namespace {

std::vector<int64_t> lastTwoSwapped(int64_t rank) {
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i);
  std::swap(perm[static_cast<size_t>(rank - 1)], perm[static_cast<size_t>(rank - 2)]);
  return perm;
}

bool swapsLastTwo(const Op& op) {
  int64_t rank = op.result(0)->type().rank();
  return op.name() == opname::kTranspose && rank >= 2 &&
         op.attrs().getInts("perm") == lastTwoSwapped(rank);
}

Shape withoutLeadingOnes(const Shape& s) {
  auto first = std::find_if(s.begin(), s.end(), [](int64_t d) { return d != 1; });
  return Shape(first, s.end());
}

// A reshape that only adds or drops leading unit dims, and keeps at least two dims.
bool dropsLeadingOnes(const Op& op) {
  const Shape &in = op.operand(0)->type().shape, &out = op.result(0)->type().shape;
  return op.name() == opname::kReshape && in.size() >= 2 && out.size() >= 2 &&
         withoutLeadingOnes(in) == withoutLeadingOnes(out) && in[in.size() - 1] == out.back() &&
         in[in.size() - 2] == out[out.size() - 2];
}

// A sum over dims before the last two.
bool sumsBatch(const Op& op) {
  if (op.name() != opname::kReduceSum) return false;
  int64_t rank = op.operand(0)->type().rank();
  for (int64_t a : op.attrs().getInts("axes"))
    if ((a < 0 ? a + rank : a) >= rank - 2) return false;
  return true;
}

class Folder {
public:
  explicit Folder(Function& f) : f_(f) {}

  bool run() {
    std::vector<Op*> transposes;
    for (auto& op : f_.ops())
      if (swapsLastTwo(*op)) transposes.push_back(op.get());
    bool changed = false;
    for (Op* t : transposes)
      changed |= fold(*t);
    if (changed) eliminateDeadCode(f_);
    return changed;
  }

private:
  // Read only by the next op of the chain (a function result is a use too).
  bool single(const Value* v) const { return v->uses().size() == 1; }

  bool fold(Op& t) {
    std::vector<Op*> chain; // from the transpose's operand up to the matmul, exclusive
    Value* v = t.operand(0);
    Op* d = v->definingOp();
    while (d && single(v) && d->name() != opname::kMatmul) {
      if (!dropsLeadingOnes(*d) && !sumsBatch(*d)) return false;
      chain.push_back(d);
      v = d->operand(0);
      d = v->definingOp();
    }
    if (!d || !single(v) || d->name() != opname::kMatmul) return false;
    Value *a = d->operand(0), *b = d->operand(1);
    int64_t rank = v->type().rank();
    if (a->type().rank() != rank || b->type().rank() != rank) return false; // broadcasts
    Builder bld(f_);
    bld.setInsertionPoint(&t);
    bld.setLoc(t.loc());
    // An operand that is itself a transpose is transposed once, with the perms composed,
    // so the kernel reads the stored tensor through one set of strides.
    auto transposed = [&](Value* x) {
      Op* p = x->definingOp();
      if (p && swapsLastTwo(*p)) return p->operand(0);
      std::vector<int64_t> perm = lastTwoSwapped(rank);
      if (p && p->name() == opname::kTranspose) {
        const auto& inner = p->attrs().getInts("perm");
        for (int64_t& d : perm)
          d = inner[static_cast<size_t>(d)];
        x = p->operand(0);
      }
      return bld.value("transpose", {x}, {{"perm", perm}});
    };
    Value* bt = transposed(b);
    Value* at = transposed(a);
    Value* r = bld.value("matmul", {bt, at});
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if ((*it)->name() == opname::kReduceSum) {
        r = bld.value("reduce_sum", {r}, (*it)->attrs());
      } else {
        Shape s = (*it)->result(0)->type().shape;
        std::swap(s[s.size() - 1], s[s.size() - 2]);
        r = bld.value("reshape", {r}, {{"shape", s}});
      }
    }
    t.result(0)->replaceAllUsesWith(r);
    return true;
  }

  Function& f_;
};

} // namespace

bool foldProductTransposes(Function& f) {
  return Folder(f).run();
}

} // namespace shardc
