// Helpers shared by the plan builder, the plan checker and the kernel binder.
#pragma once

#include "shardc/exec/ExecPlan.h"
#include "shardc/ir/Types.h"

#include <exception>
#include <map>
#include <string_view>
#include <vector>

namespace shardc {
class Function;
class Op;
class Value;

// The plan's numbering of a function's values: arguments, then op results in program order.
class ValueNumbering {
public:
  explicit ValueNumbering(const Function& f);
  int64_t count() const { return static_cast<int64_t>(values_.size()); }
  int64_t id(const Value* v) const { return ids_.at(v); }
  const Value* value(int64_t id) const { return values_[static_cast<size_t>(id)]; }
  const TensorType& type(int64_t id) const;
  const std::vector<const Op*>& ops() const { return ops_; }
  const Op* op(int64_t i) const { return ops_[static_cast<size_t>(i)]; }
  int64_t index(const Op* op) const { return opIndex_.at(op); }
  bool isResult(const Value* v) const;

private:
  const Function& f_;
  std::vector<const Value*> values_;
  std::map<const Value*, int64_t> ids_;
  std::vector<const Op*> ops_;
  std::map<const Op*, int64_t> opIndex_;
};

// Byte offsets into operand 0 of each result, when `op` only selects contiguous bytes of it
// (reshape; a slice or split picking one contiguous block); empty otherwise.
std::vector<int64_t> viewOffsets(const Op& op);

// A step whose kernel computes element i of every output from element i of its aligned
// inputs (so an output may take over a dying input's buffer).
bool isElementwiseStep(const PlanStep& step, const ValueNumbering& num);

// The value whose buffer holds `id`'s bytes: itself, or the root of its chain of views.
int64_t viewRoot(const ExecPlan& plan, int64_t id);

// Per value (plan numbering): the step that writes it and the last step that reads its buffer
// (through views); a function result is read at the end (steps.size()); -1 where none. The
// builder allocates the arena from these ranges and the checker proves it against them.
struct LiveRanges {
  std::vector<int64_t> def, last;
};
LiveRanges liveRanges(const ExecPlan& plan, const ValueNumbering& num, const Function& f);

// Whether step `s` is elementwise and reads value `id` (if at all) element for element at
// its own shape: then a result of the step may take over `id`'s buffer as `id` dies.
bool readsAligned(const ExecPlan& plan, const ValueNumbering& num, size_t s, int64_t id);

// Element strides (per dim of `out`, 0 where broadcast) at which numpy broadcasting reads a
// row-major tensor of shape `in` (right-aligned) for every position of `out`.
std::vector<int64_t> broadcastStrides(const Shape& out, const Shape& in);

// A data-dependent kernel failure, named as the interpreter names it: "'op' op at line N: ...".
class Error;
Error opError(const Op& op, const std::exception& e);

// Whether the kernel library has a native kernel for this step (else the plan marks it
// reference).
bool hasNativeKernel(std::string_view kernel, const Op& anchor);

} // namespace shardc
