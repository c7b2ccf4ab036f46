#include "PlanUtil.h"

#include "Fusion.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <optional>

namespace shardc {

ValueNumbering::ValueNumbering(const Function& f) : f_(f) {
  for (size_t i = 0; i < f.numArguments(); ++i) {
    ids_[f.argument(i)] = count();
    values_.push_back(f.argument(i));
  }
  for (const auto& op : f.ops()) {
    opIndex_[op.get()] = static_cast<int64_t>(ops_.size());
    ops_.push_back(op.get());
    for (size_t r = 0; r < op->numResults(); ++r) {
      ids_[op->result(r)] = count();
      values_.push_back(op->result(r));
    }
  }
}

const TensorType& ValueNumbering::type(int64_t id) const {
  return value(id)->type();
}

bool ValueNumbering::isResult(const Value* v) const {
  for (const auto& r : f_.results())
    if (r.value == v) return true;
  return false;
}

namespace {

// Byte offset of the block [start, start + extent) of a row-major `shape`, when that block
// is contiguous: some leading dims of extent 1, one dim with any range, the rest whole.
std::optional<int64_t> contiguousBlock(const Shape& shape, const std::vector<int64_t>& start,
                                       const Shape& extent, size_t elemSize) {
  size_t n = shape.size(), k = 0;
  while (k < n && extent[k] == 1)
    ++k;
  for (size_t d = k + 1; d < n; ++d)
    if (start[d] != 0 || extent[d] != shape[d]) return std::nullopt;
  int64_t offset = 0, stride = 1;
  for (size_t d = n; d-- > 0;) {
    offset += start[d] * stride;
    stride *= shape[d];
  }
  return offset * static_cast<int64_t>(elemSize);
}

} // namespace

std::vector<int64_t> viewOffsets(const Op& op) {
  if (op.numOperands() == 0) return {};
  const TensorType& in = op.operand(0)->type();
  size_t es = dtypeSize(in.dtype);
  if (op.name() == opname::kReshape) return {0};
  if (op.name() == opname::kSlice) {
    const auto& stride = op.attrs().getInts("stride");
    const Shape& out = op.result(0)->type().shape;
    for (size_t d = 0; d < out.size(); ++d)
      if (stride[d] != 1 && out[d] > 1) return {};
    auto off = contiguousBlock(in.shape, op.attrs().getInts("start"), out, es);
    if (!off) return {};
    return {*off};
  }
  if (op.name() == opname::kSplit) {
    auto axis = static_cast<size_t>(*normalizeAxis(op.attrs().getInt("axis"), in.rank()));
    std::vector<int64_t> offsets, start(in.shape.size(), 0);
    for (size_t r = 0; r < op.numResults(); ++r) {
      const Shape& piece = op.result(r)->type().shape;
      auto off = contiguousBlock(in.shape, start, piece, es);
      if (!off) return {};
      offsets.push_back(*off);
      start[axis] += piece[axis];
    }
    return offsets;
  }
  return {};
}

bool isElementwiseStep(const PlanStep& step, const ValueNumbering& num) {
  if (step.reference) return false;
  if (step.kernel == "fused_elementwise") return true;
  return step.ops.size() == 1 && isLaneOp(*num.op(step.ops[0]));
}

int64_t viewRoot(const ExecPlan& plan, int64_t id) {
  while (plan.values[static_cast<size_t>(id)].home == ValueHome::View)
    id = plan.values[static_cast<size_t>(id)].base;
  return id;
}

LiveRanges liveRanges(const ExecPlan& plan, const ValueNumbering& num, const Function& f) {
  LiveRanges r;
  r.def.assign(plan.values.size(), -1);
  r.last.assign(plan.values.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (int64_t i : plan.steps[s].ops) {
      const Op& op = *num.op(i);
      for (size_t k = 0; k < op.numResults(); ++k)
        r.def[static_cast<size_t>(num.id(op.result(k)))] = static_cast<int64_t>(s);
      for (const Value* v : op.operands()) {
        auto rv = static_cast<size_t>(viewRoot(plan, num.id(v)));
        r.last[rv] = std::max(r.last[rv], static_cast<int64_t>(s));
      }
    }
  for (const auto& res : f.results())
    r.last[static_cast<size_t>(viewRoot(plan, num.id(res.value)))] =
        static_cast<int64_t>(plan.steps.size());
  return r;
}

bool readsAligned(const ExecPlan& plan, const ValueNumbering& num, size_t s, int64_t id) {
  const PlanStep& st = plan.steps[s];
  if (!isElementwiseStep(st, num)) return false;
  for (int64_t i : st.ops) {
    const Op& op = *num.op(i);
    for (const Value* v : op.operands())
      if (viewRoot(plan, num.id(v)) == id &&
          (op.name() == opname::kBroadcast || v->type().shape != op.result(0)->type().shape))
        return false;
  }
  return true;
}

std::vector<int64_t> broadcastStrides(const Shape& out, const Shape& in) {
  std::vector<int64_t> s(out.size(), 0);
  int64_t acc = 1;
  for (size_t d = in.size(); d-- > 0;) {
    s[out.size() - in.size() + d] = in[d] == 1 ? 0 : acc;
    acc *= in[d];
  }
  return s;
}

Error opError(const Op& op, const std::exception& e) {
  std::string where = op.loc().line ? " at line " + std::to_string(op.loc().line) : "";
  return Error("'" + op.name() + "' op" + where + ": " + e.what());
}

} // namespace shardc
