// Helpers for the gradient rules in the op definitions.
#pragma once

#include "shardc/ir/Builder.h"
#include "shardc/ops/OpRegistry.h"

namespace shardc::ops {

// A scalar constant of dtype `t`.
Value* scalar(Builder& b, DType t, double v);
// A zero tensor of type `t` (a splat constant).
Value* zeros(Builder& b, const TensorType& t);
// Sums a broadcast gradient back to an operand's shape (numpy broadcasting in reverse).
Value* sumToShape(Builder& b, Value* g, const Shape& target);
// Broadcasts a reduced value (reduced over `axes`, keepdims or not) back to `shape`.
Value* broadcastBack(Builder& b, Value* v, const std::vector<int64_t>& axes, const Shape& shape);
// The result gradient `i`, or zeros of the result's type when none flows.
Value* gradOrZero(const GradArgs& a, size_t i);

} // namespace shardc::ops
