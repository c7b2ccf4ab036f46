#include "shardc/ir/Tensor.h"
#include "shardc/support/Error.h"

#include <cstring>
#include <utility>

#include <bit>
#include <cmath>

namespace shardc {

Tensor::Tensor(TensorType type)
    : type_(std::move(type)), bytes_(static_cast<size_t>(type_.bytes()), 0) {}

Tensor::Tensor(TensorType type, uint8_t* bytes, std::shared_ptr<const void> keeper)
    : type_(std::move(type)), kept_(bytes), keeper_(std::move(keeper)) {
  SHARDC_CHECK(kept_ && keeper_, "a kept tensor without its bytes or their keeper");
}

Tensor::Tensor(const Tensor& other)
    : type_(other.type_), bytes_(other.data(), other.data() + other.byteSize()) {}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

Tensor::Tensor(Tensor&& other) noexcept
    : type_(std::move(other.type_)), bytes_(std::move(other.bytes_)),
      kept_(std::exchange(other.kept_, nullptr)), keeper_(std::move(other.keeper_)) {}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  type_ = std::move(other.type_);
  bytes_ = std::move(other.bytes_);
  kept_ = std::exchange(other.kept_, nullptr);
  keeper_ = std::move(other.keeper_);
  return *this;
}

uint16_t floatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absx < 0x38800000u) { // result is subnormal or zero
    // Scale into the subnormal range; float addition performs round-to-nearest-even.
    float scaled = std::bit_cast<float>(absx) + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(scaled) - 0x3f000000u));
  }
  uint32_t mant_odd = (absx >> 13) & 1u;
  absx += 0xc8000fffu + mant_odd; // rebias exponent (-112 << 23) and round to nearest even
  return static_cast<uint16_t>(sign | (absx >> 13));
}

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

namespace {
template <typename T> T load(const uint8_t* p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}
template <typename T> void store(uint8_t* p, int64_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}
} // namespace

double loadDouble(const uint8_t* p, DType t, int64_t i) {
  switch (t) {
  case DType::F32:
    return load<float>(p, i);
  case DType::F64:
    return load<double>(p, i);
  case DType::F16:
    return halfToFloat(load<uint16_t>(p, i));
  case DType::BF16:
    return bf16ToFloat(load<uint16_t>(p, i));
  default:
    return static_cast<double>(loadInt(p, t, i));
  }
}

int64_t loadInt(const uint8_t* p, DType t, int64_t i) {
  switch (t) {
  case DType::I64:
    return load<int64_t>(p, i);
  case DType::I32:
    return load<int32_t>(p, i);
  case DType::I1:
    return load<uint8_t>(p, i) ? 1 : 0;
  default: {
    double d = loadDouble(p, t, i);
    // Float to int conversion truncates toward zero; out-of-range values saturate.
    if (std::isnan(d)) return 0;
    if (d >= 9.2233720368547758e18) return INT64_MAX;
    if (d <= -9.2233720368547758e18) return INT64_MIN;
    return static_cast<int64_t>(d);
  }
  }
}

void storeDouble(uint8_t* p, DType t, int64_t i, double v) {
  switch (t) {
  case DType::F32:
    store<float>(p, i, static_cast<float>(v));
    return;
  case DType::F64:
    store<double>(p, i, v);
    return;
  case DType::F16:
    store<uint16_t>(p, i, floatToHalf(static_cast<float>(v)));
    return;
  case DType::BF16:
    store<uint16_t>(p, i, floatToBF16(static_cast<float>(v)));
    return;
  case DType::I1:
    store<uint8_t>(p, i, v != 0.0 ? 1 : 0);
    return;
  default: {
    int64_t n = 0;
    if (!std::isnan(v))
      n = v >= 9.2233720368547758e18    ? INT64_MAX
          : v <= -9.2233720368547758e18 ? INT64_MIN
                                        : static_cast<int64_t>(v);
    storeInt(p, t, i, n);
  }
  }
}

void storeInt(uint8_t* p, DType t, int64_t i, int64_t v) {
  switch (t) {
  case DType::I64:
    store<int64_t>(p, i, v);
    return;
  case DType::I32:
    store<int32_t>(p, i, static_cast<int32_t>(static_cast<uint32_t>(v)));
    return;
  case DType::I1:
    store<uint8_t>(p, i, v != 0 ? 1 : 0);
    return;
  default:
    storeDouble(p, t, i, static_cast<double>(v));
  }
}

double Tensor::getDouble(int64_t i) const {
  return loadDouble(data(), type_.dtype, i);
}
int64_t Tensor::getInt(int64_t i) const {
  return loadInt(data(), type_.dtype, i);
}
void Tensor::setDouble(int64_t i, double v) {
  storeDouble(data(), type_.dtype, i, v);
}
void Tensor::setInt(int64_t i, int64_t v) {
  storeInt(data(), type_.dtype, i, v);
}

std::vector<double> Tensor::toDoubles() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  if (type_.dtype == DType::F32) {
    const float* f = reinterpret_cast<const float*>(data());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = f[i];
  } else {
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = getDouble(static_cast<int64_t>(i));
  }
  return out;
}

std::vector<int64_t> Tensor::toInts() const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = getInt(static_cast<int64_t>(i));
  return out;
}

Tensor Tensor::fromDoubles(TensorType type, const std::vector<double>& values) {
  Tensor t(std::move(type));
  SHARDC_CHECK(static_cast<int64_t>(values.size()) == t.numel(),
               "a tensor built from the wrong number of values");
  if (t.dtype() == DType::F32) {
    float* f = reinterpret_cast<float*>(t.data());
    for (size_t i = 0; i < values.size(); ++i)
      f[i] = static_cast<float>(values[i]);
  } else {
    for (size_t i = 0; i < values.size(); ++i)
      t.setDouble(static_cast<int64_t>(i), values[i]);
  }
  return t;
}

Tensor Tensor::fromInts(TensorType type, const std::vector<int64_t>& values) {
  Tensor t(std::move(type));
  SHARDC_CHECK(static_cast<int64_t>(values.size()) == t.numel(),
               "a tensor built from the wrong number of values");
  for (size_t i = 0; i < values.size(); ++i)
    t.setInt(static_cast<int64_t>(i), values[i]);
  return t;
}

bool Tensor::identical(const Tensor& other) const {
  return type_ == other.type_ && byteSize() == other.byteSize() &&
         (byteSize() == 0 || std::memcmp(data(), other.data(), byteSize()) == 0);
}

void copyAlong(const Tensor& src, int64_t srcAt, Tensor& dst, int64_t dstAt, int64_t dim,
               int64_t len) {
  const Shape& s = src.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i)
    outer *= s[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(dim) + 1; i < s.size(); ++i)
    inner *= s[i];
  int64_t sn = s[static_cast<size_t>(dim)], dn = dst.shape()[static_cast<size_t>(dim)];
  size_t es = dtypeSize(src.dtype()), run = static_cast<size_t>(len * inner) * es;
  if (run == 0) return;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst.data() + static_cast<size_t>((o * dn + dstAt) * inner) * es,
                src.data() + static_cast<size_t>((o * sn + srcAt) * inner) * es, run);
}

} // namespace shardc
