#include "shardc/ir/Types.h"
#include "shardc/support/Error.h"

namespace shardc {

std::string_view dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I1:
    return "i1";
  }
  SHARDC_CHECK(false, "unknown dtype");
  return "?";
}

std::optional<DType> parseDType(std::string_view s) {
  for (DType t :
       {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64, DType::I32, DType::I1})
    if (dtypeName(t) == s) return t;
  return std::nullopt;
}

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I1:
    return 1;
  }
  return 0;
}

std::optional<int64_t> checkedNumel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0)
      n = 0;
    else if (n > kMaxElements / d)
      return std::nullopt;
    else
      n *= d;
  }
  for (int64_t d : shape)
    if (d == 0) return 0;
  return n;
}

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeStr(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string TensorType::str() const {
  return std::string(dtypeName(dtype)) + shapeStr(shape);
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

} // namespace shardc
