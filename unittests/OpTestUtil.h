// Extra helpers for the per-family numeric op tests (on top of TestUtil.h).
#pragma once

#include "TestUtil.h"

#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <cmath>
#include <limits>
#include <string>

namespace shardc::testing {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A float tensor of any float dtype; values round to the dtype as the kernels' results do,
// so expected values for f16/bf16 should be exactly representable.
inline Tensor typed(DType t, Shape shape, const std::vector<double>& values) {
  return Tensor::fromDoubles(TensorType{t, std::move(shape)}, values);
}
inline Tensor i32(Shape shape, const std::vector<int64_t>& values) {
  return Tensor::fromInts(TensorType{DType::I32, std::move(shape)}, values);
}

// The shape rule's message for op `name` on operands of `types`, "" if it accepts them.
inline std::string shapeError(const std::string& name, const std::vector<TensorType>& types,
                              AttrDict attrs = {}) {
  const OpDef* def = OpRegistry::get().lookup(name);
  if (!def) return "no op " + name;
  std::vector<TensorType> results;
  return checkOp(*def, types, attrs, results);
}

// Runs the op expecting the kernel to throw shardc::Error; returns its message ("" if none).
inline std::string kernelError(const std::string& name, const std::vector<Tensor>& inputs,
                               AttrDict attrs = {}) {
  try {
    runOp(name, inputs, std::move(attrs));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Exact comparison (same type, same values, NaN matches NaN).
inline ::testing::AssertionResult same(const Tensor& a, const Tensor& b) {
  return allClose(a, b, 0, 0);
}

} // namespace shardc::testing
