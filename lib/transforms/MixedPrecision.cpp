// bf16 mixed precision: the program that computes in bf16 (computeInBf16), and the same
// program on the CPU runtime's kernels, most of which compute in f32 (emulateBf16).
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/transforms/Passes.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace shardc {
namespace {

Value* castTo(Builder& b, Value* v, DType t) {
  return b.value(opname::kCast, {v}, {{"to", t}});
}

std::string where(const Op& op) {
  return op.loc().line ? " at line " + std::to_string(op.loc().line) : "";
}

// Gives `op` the result types its shape rule infers from its operands as they are now.
void reinferTypes(Op& op) {
  std::vector<TensorType> in, out;
  for (const Value* v : op.operands())
    in.push_back(v->type());
  AttrDict attrs = op.attrs();
  std::string err = checkOp(op.def(), in, attrs, out);
  if (!err.empty())
    throw Error("--precision bf16: '" + op.name() + "'" + where(op) +
                " does not take bf16 operands: " + err);
  for (size_t r = 0; r < op.numResults(); ++r)
    op.result(r)->setType(out[r]);
}

// A call's results take its callee's result types; a scan's carried results too, and its ys
// and saved carries the stacked types of the callee's ys and carries. A carried value must
// stay one type from step to step: a body that makes a bf16 carry f32 (or back) is refused.
void retypeCallResults(Op& op, const Function& callee) {
  if (!isScan(op)) {
    for (size_t r = 0; r < op.numResults(); ++r)
      op.result(r)->setType(callee.results()[r].value->type());
    return;
  }
  ScanLayout l = ScanLayout::of(op);
  for (size_t c = 0; c < l.carried; ++c) {
    const TensorType& in = callee.argument(c)->type();
    const TensorType& out = callee.results()[c].value->type();
    if (in != out)
      throw Error("--precision bf16: the scan" + where(op) + " carries " + in.str() +
                  " into its body and gets back " + out.str());
    op.result(c)->setType(out);
    if (l.saveCarries) op.result(l.firstSaved() + c)->setType(stackedType(l.length, out));
  }
  for (size_t y = 0; y < l.ys; ++y)
    op.result(l.firstY() + y)
        ->setType(stackedType(l.length, callee.results()[l.carried + y].value->type()));
}

// Casts every f32 operand to bf16 before its first reader, and retypes what follows. A called
// function computes in bf16 as its caller does: its f32 arguments and the results made from
// them become bf16 (the caller casts what it passes), once for all its calls (`bodies`).
bool lowerOps(Function& f, std::unordered_set<Function*>& bodies) {
  std::vector<Op*> ops;
  for (const auto& op : f.ops())
    ops.push_back(op.get());
  Builder b(f);
  std::unordered_map<Value*, Value*> low; // an f32 value's bf16 copy, made before its first reader
  bool changed = false;
  for (Op* op : ops) {
    Function* callee = nullptr;
    if (op->def().callsFunction) {
      callee = f.module() ? f.module()->findFunction(op->attrs().getString("callee")) : nullptr;
      if (!callee)
        throw Error("--precision bf16: '" + op->name() + "'" + where(*op) +
                    " calls a function the module does not hold");
      if (bodies.insert(callee).second) {
        for (size_t i = 0; i < callee->numArguments(); ++i) {
          Value* a = callee->argument(i);
          if (a->type().dtype == DType::F32) a->setType({DType::BF16, a->type().shape});
        }
        lowerOps(*callee, bodies);
      }
    }
    bool lowered = false;
    for (size_t i = 0; i < op->numOperands(); ++i) {
      Value* v = op->operand(i);
      lowered = lowered || v->type().dtype == DType::BF16;
      if (v->type().dtype != DType::F32) continue;
      auto [it, fresh] = low.try_emplace(v, nullptr);
      if (fresh) {
        b.setInsertionPoint(op);
        it->second = castTo(b, v, DType::BF16);
      }
      op->setOperand(i, it->second);
      lowered = true;
    }
    if (callee)
      retypeCallResults(*op, *callee);
    else if (lowered)
      reinferTypes(*op);
    changed = changed || lowered;
  }
  return changed;
}

bool allBf16(const Op& op) {
  for (const Value* v : op.operands())
    if (v->type().dtype != DType::BF16) return false;
  for (size_t r = 0; r < op.numResults(); ++r)
    if (op.result(r)->type().dtype != DType::BF16) return false;
  return true;
}

// The sum over the batch dims of transpose(X) x G (a weight gradient), which the runtime's
// matmul kernel folds into one GEMM with the batch in the contraction: kept in bf16 with its
// matmul, it is summed in f32 and rounded once. The conditions are the fold's (Fusion.cpp:
// the transpose read by the matmul alone, both operands of the product's batch dims, neither
// sum nor product a function result); a sum it does not fold would run on the reference kernel.
bool batchSumOfMatmul(const Op& red) {
  if (red.name() != opname::kReduceSum || !allBf16(red)) return false;
  const Value* p = red.operand(0);
  const Op* mm = p->definingOp();
  if (!mm || mm->name() != opname::kMatmul || p->uses().size() != 1 || !p->uses()[0].user ||
      !allBf16(*mm))
    return false;
  const Value* xt = mm->operand(0);
  const Op* t = xt->definingOp();
  const Shape& out = p->type().shape;
  int64_t rank = p->type().rank();
  if (!t || t->name() != opname::kTranspose || rank < 3 || xt->uses().size() != 1 ||
      !xt->uses()[0].user)
    return false;
  const auto& perm = t->attrs().getInts("perm");
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  for (int64_t i = 0; i < rank; ++i)
    if (perm[static_cast<size_t>(i)] != (i < rank - 2 ? i : 2 * rank - 3 - i)) return false;
  for (const Value* v : mm->operands())
    if (v->type().rank() != rank ||
        !std::equal(out.begin(), out.end() - 2, v->type().shape.begin()))
      return false;
  std::vector<int64_t> axes;
  for (int64_t a : red.attrs().getInts("axes"))
    axes.push_back(a < 0 ? a + rank : a);
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != static_cast<int64_t>(i)) return false;
  return static_cast<int64_t>(axes.size()) == rank - 2;
}

// The ops the CPU runtime runs on bf16 values as they are: matmuls and convolutions (oneDNN's
// bf16 kernels where the CPU has them, else widened inside the kernel; a convolution computes
// in whichever of bf16 and f32 is timed faster), a weight gradient's batch sum, and the ops
// that only move values.
bool runsInBf16(const Op& op) {
  static const std::unordered_set<std::string_view> moves = {
      opname::kTranspose, opname::kBroadcast, opname::kSlice,   opname::kReverse, opname::kConcat,
      opname::kSplit,     opname::kPad,       opname::kReshape, opname::kGather};
  const std::string& n = op.name();
  if (n == opname::kCast || op.def().callsFunction || moves.count(n)) return true;
  static const std::unordered_set<std::string_view> library = {opname::kMatmul, opname::kConv2d,
                                                               opname::kConv2dBackwardInput,
                                                               opname::kConv2dBackwardFilter};
  return (library.count(n) && allBf16(op)) || batchSumOfMatmul(op);
}

} // namespace

bool computeInBf16(Function& f) {
  std::vector<DType> resultTypes;
  for (const FuncResult& r : f.results())
    resultTypes.push_back(r.value->type().dtype);
  std::unordered_set<Function*> bodies;
  bool changed = lowerOps(f, bodies);
  // The outputs and the state updates keep their types: the loss is computed in f32 from them.
  Builder b(f);
  b.setInsertionPointToEnd();
  for (size_t i = 0; i < f.results().size(); ++i) {
    Value* v = f.results()[i].value;
    if (v->type().dtype != resultTypes[i]) f.setResultValue(i, castTo(b, v, resultTypes[i]));
  }
  return changed;
}

bool emulateBf16(Function& f) {
  std::vector<Op*> ops;
  for (const auto& op : f.ops())
    ops.push_back(op.get());
  Builder b(f);
  bool changed = false;
  for (Op* op : ops) {
    bool bf16 = false;
    for (const Value* v : op->operands())
      bf16 = bf16 || v->type().dtype == DType::BF16;
    for (size_t r = 0; r < op->numResults(); ++r)
      bf16 = bf16 || op->result(r)->type().dtype == DType::BF16;
    if (!bf16 || runsInBf16(*op)) continue;
    // Widened per reader, so an f32 copy lives no longer than the op that reads it.
    b.setInsertionPoint(op);
    std::vector<Value*> operands;
    for (Value* v : op->operands())
      operands.push_back(v->type().dtype == DType::BF16 ? castTo(b, v, DType::F32) : v);
    AttrDict attrs = op->attrs();
    Op* wide = b.create(op->name(), operands, attrs);
    for (size_t r = 0; r < op->numResults(); ++r) {
      Value* v = wide->result(r);
      if (op->result(r)->type().dtype == DType::BF16) v = castTo(b, v, DType::BF16);
      v->setName(op->result(r)->name());
      op->result(r)->replaceAllUsesWith(v);
    }
    f.eraseOp(op);
    changed = true;
  }
  return changed;
}

} // namespace shardc
