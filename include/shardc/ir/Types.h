// Element types, shapes and tensor types of the shardc IR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {

enum class DType : uint8_t { F32, F16, BF16, F64, I64, I32, I1 };

std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view s);
size_t dtypeSize(DType t);
inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}
inline bool isInteger(DType t) {
  return t == DType::I64 || t == DType::I32;
}
inline bool isBool(DType t) {
  return t == DType::I1;
}

using Shape = std::vector<int64_t>;

// Largest element count a tensor may have; keeps byte sizes far from int64 overflow.
inline constexpr int64_t kMaxElements = int64_t(1) << 48;

// Element count of a shape, or nullopt when a dimension is negative or the product would
// exceed kMaxElements.
std::optional<int64_t> checkedNumel(const Shape& shape);
int64_t numel(const Shape& shape);
std::string shapeStr(const Shape& shape);

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return shardc::numel(shape); }
  int64_t bytes() const { return numel() * static_cast<int64_t>(dtypeSize(dtype)); }
  bool operator==(const TensorType&) const = default;
  // Text form, e.g. "f32[8,16]"; a scalar is "f32[]".
  std::string str() const;
};

// Normalizes a possibly negative axis for a tensor of the given rank; nullopt if out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace shardc
