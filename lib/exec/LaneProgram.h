// A group of f32/i1 lane ops (and casts between f32 and bf16) compiled to a little vector program:
// inputs read per block (in place when they have the group's shape, else gathered with broadcast
// strides, or one value filled once), one vector loop per op over the block, and the values other
// steps read stored at the end of the block (so an output may overwrite an input it came from). The
// elementwise kernel runs it over every block; row kernels (softmax, layer norm) run it one row at
// a time as their prologue and read the row from its slot.
#pragma once

#include "shardc/ir/Types.h"

#include <map>
#include <vector>

namespace shardc {
struct BindArgs;
struct ExecContext;
class Op;
class Value;

class LaneProgram {
public:
  // `ops` in program order, all lane ops over one shape; `block`: elements per evaluation.
  LaneProgram(const BindArgs& a, const std::vector<const Op*>& ops, int64_t block);
  ~LaneProgram();

  int slots() const { return slots_; }
  int64_t block() const { return block_; }
  // The slot holding value `v` (an input or an op result) after evalBlock.
  int slot(const Value* v) const;
  // Once per run, before any evalBlock: fills the blocks of single-value inputs and sizes
  // the working blocks of ctx.threads threads.
  void prepare(const ExecContext& ctx);
  // Elements [p0, p0 + len) (len <= block) on the working blocks of thread `thread`
  // (< ctx.threads); returns where each slot's values are.
  float* const* evalBlock(const ExecContext& ctx, int64_t p0, int64_t len, int thread);

private:
  struct Input;
  struct Output;
  struct Ins;
  Ins instruction(const Op& op, int dst, const std::vector<int>& src, const BindArgs& a);
  void fuseMultiplyAdds();
  void load(const ExecContext& ctx, const Input& in, int64_t p0, int64_t len, float* slotBuf,
            float** slot) const;

  int64_t block_;
  Shape shape_;
  int slots_ = 0, uniforms_ = 0;
  std::map<const Value*, int> slotOf_;
  std::vector<Input> inputs_;
  std::vector<Ins> code_;
  std::vector<Output> outputs_;
  std::vector<float> uniform_;
  std::vector<float> scratch_;   // slots() blocks per thread
  std::vector<float*> slotPtrs_; // slots() pointers per thread
};

} // namespace shardc
