// Function-level IR passes, registered by name for shardc-opt and the compiler driver.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace shardc {
class Function;

// A pass rewrites one function; it returns whether anything changed.
struct PassInfo {
  std::string name;
  std::string summary;
  std::function<bool(Function&)> run;
};

const std::vector<PassInfo>& allPasses();
const PassInfo* findPass(const std::string& name);

// Folds ops whose operands are all constants (results up to kFoldLimit elements) and
// applies algebraic simplifications (identity transpose/reshape/cast/slice/broadcast,
// transpose of transpose, reshape of reshape, single-piece concat/split).
bool canonicalize(Function& f);
inline constexpr int64_t kFoldLimit = int64_t(1) << 20;
// Replaces every `call` by a copy of its callee's ops, then removes from the module the
// callees no call names any more.
bool inlineCalls(Function& f);
// Removes ops whose results are unused (every op is free of side effects).
bool eliminateDeadCode(Function& f);
// Replaces GELU's tanh approximation spelled out in elementwise ops by one gelu op.
bool raiseGelu(Function& f);
// Replaces an op by an earlier identical one (same op, operands, attributes).
bool eliminateCommonSubexpressions(Function& f);
// Rewrites transpose(A B) (the product possibly summed over batch dims and reshaped to drop
// leading unit dims) as B^T A^T, so a weight gradient's GEMM writes the weight's layout.
// Run on the program the plan is made from, after the search: it changes the program's
// shape, not its cost.
bool foldProductTransposes(Function& f);
// Gives each reader of a large elementwise value built only from iotas and much smaller
// operands (a one-hot mask) its own copy of the ops that make it, so no kernel stores it.
// The last pass before the executable plan: CSE would merge the copies again.
bool rematerialize(Function& f);
// --precision bf16: every f32 operand of an op is read as bf16 (one cast per value, before its
// first reader), so the ops compute in bf16 and keep bf16 results; the function's results
// keep their types (cast back), so a loss built on them is computed in f32. Run on the model
// before the training step: autodiff then gives bf16 activation gradients and, through the
// parameters' casts, f32 gradients of the f32 master weights. The functions it calls compute
// in bf16 too: their f32 arguments and results become bf16, as the values of a flat program.
bool computeInBf16(Function& f);
// For the CPU runtime, whose kernels compute in f32 but for matmul: each op with bf16 operands
// or results reads f32 copies of its bf16 operands and rounds its results to bf16, so the
// values stored between ops are those of a bf16 program whose ops compute internally in f32.
// Matmuls (with a weight gradient's batch sum), casts, calls and the ops that only move
// values (transpose, reshape, slice, gather, ...) keep their bf16 operands.
bool emulateBf16(Function& f);
// Replaces this device's piece (shard_slice) of an iota along another axis, or of a constant
// that gives every device the same piece (all equal, or repeating along the sliced dim), by
// that piece made directly: the SPMD lowering slices
// constants of the whole program's shapes, which every step would otherwise build whole.
bool localizeConstants(Function& f);

} // namespace shardc
