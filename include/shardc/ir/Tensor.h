// A host tensor: a tensor type and its elements, row-major, in the dtype's own
// little-endian layout (f16/bf16 as raw 16-bit patterns, i1 as one byte 0/1).
// Used for constants in the IR, for interpreter values and for .npy files. The elements are
// the tensor's own, or bytes that a keeper holds (a PEF's weights in its mapped file): read
// and written in place, never copied until the tensor is.
#pragma once

#include "shardc/ir/Types.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace shardc {

class Tensor {
public:
  Tensor() = default;
  explicit Tensor(TensorType type);
  // The type's bytes at `bytes`, which `keeper` keeps valid (and writable) while any tensor
  // holds it.
  Tensor(TensorType type, uint8_t* bytes, std::shared_ptr<const void> keeper);
  // A copy owns its bytes.
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor() = default;

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int64_t numel() const { return type_.numel(); }
  const uint8_t* data() const { return kept_ ? kept_ : bytes_.data(); }
  uint8_t* data() { return kept_ ? kept_ : bytes_.data(); }
  size_t byteSize() const { return kept_ ? static_cast<size_t>(type_.bytes()) : bytes_.size(); }
  // Whether the bytes are a keeper's (not the tensor's own).
  bool kept() const { return kept_ != nullptr; }

  // Element access through the widest type of the dtype's family. Floats read and written
  // as double (writes round to the dtype); integers and bools as int64 (writes truncate to
  // i32 / map non-zero to 1 for i1).
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);

  // Whole-tensor conversions used by the reference kernels.
  std::vector<double> toDoubles() const;
  std::vector<int64_t> toInts() const;
  static Tensor fromDoubles(TensorType type, const std::vector<double>& values);
  static Tensor fromInts(TensorType type, const std::vector<int64_t>& values);

  // Same type and bitwise-identical elements.
  bool identical(const Tensor& other) const;

private:
  TensorType type_;
  std::vector<uint8_t> bytes_;
  uint8_t* kept_ = nullptr; // set: the bytes are keeper_'s
  std::shared_ptr<const void> keeper_;
};

// Copies `len` positions along dimension `dim`: src[..., srcAt + j, ...] -> dst[..., dstAt +
// j, ...]; src and dst agree in every other dimension. Concat, split and the collectives
// move slices with it.
void copyAlong(const Tensor& src, int64_t srcAt, Tensor& dst, int64_t dstAt, int64_t dim,
               int64_t len);

// Element i of a raw buffer of dtype `t`, with Tensor::getDouble/getInt/setDouble/setInt's
// conversions (the compiled runtime's kernels for non-f32 dtypes use them too).
double loadDouble(const uint8_t* p, DType t, int64_t i);
int64_t loadInt(const uint8_t* p, DType t, int64_t i);
void storeDouble(uint8_t* p, DType t, int64_t i, double v);
void storeInt(uint8_t* p, DType t, int64_t i, int64_t v);

// IEEE half and bfloat16 conversions, round to nearest even.
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
// Inline: the compiled runtime's bf16 casts vectorize them.
inline uint16_t floatToBF16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u); // nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}
inline float bf16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

} // namespace shardc
