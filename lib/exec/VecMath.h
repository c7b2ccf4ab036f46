// f32 math written with arithmetic, compares and selects only, so loops over arrays of them
// vectorize (the callers are compiled for AVX-512, AVX2 and baseline x86-64 and picked at
// run time). Relative error a few ulp, except erf (absolute error below 2e-7 for |x| >= 0.5).
// NaN and infinities behave as in <cmath>.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#define SHARDC_INLINE inline __attribute__((always_inline))
// The loops of the elementwise, normalization and reduction kernels: `name` runs the
// always-inlined `name##Loop`, compiled for AVX-512, AVX2 with FMA and baseline x86-64 and
// picked at run time (GCC's function multiversioning). target_clones cannot name AVX2 and
// FMA together, and without FMA every step of a polynomial is a multiply and an add.
#define SHARDC_VECTOR_VERSIONS(ret, name, params, args)                                            \
  __attribute__((target("avx512f,fma"))) ret name params {                                         \
    return name##Loop args;                                                                        \
  }                                                                                                \
  __attribute__((target("avx2,fma"))) ret name params {                                            \
    return name##Loop args;                                                                        \
  }                                                                                                \
  __attribute__((target("default"))) ret name params {                                             \
    return name##Loop args;                                                                        \
  }

namespace shardc::vm {

SHARDC_INLINE float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
SHARDC_INLINE uint32_t floatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// e^x: x = n ln2 + r with |r| <= ln2 / 2, e^r by its Taylor series to r^7, times 2^n.
SHARDC_INLINE float exp(float x) {
  // Past hi 2^n would overflow the exponent; below lo the result is subnormal: flushed to 0.
  const float hi = 88.37f, lo = -87.33f;
  float xc = x > hi ? hi : (x >= lo ? x : lo); // NaN to lo: n stays an int32 (NaN returned below)
  float n = __builtin_rintf(xc * 1.44269504088896341f);
  float r = xc - n * 0.693145751953125f - n * 1.428606765330187e-06f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n with n in [-126, 127]: the exponent field directly.
  float scale = bitsToFloat(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
  float y = p * scale;
  y = x > hi ? std::numeric_limits<float>::infinity() : y;
  y = x < lo ? 0.0f : y;
  return x != x ? x : y;
}

// ln x = k ln2 + 2 atanh(s), s = (m - 1) / (m + 1), m in [sqrt(1/2), sqrt(2)).
SHARDC_INLINE float log(float x) {
  bool sub = x < 1.17549435e-38f;
  float xs = sub ? x * 8388608.0f : x; // 2^23: subnormals to normal range
  uint32_t u = floatToBits(xs);
  int32_t k = static_cast<int32_t>((u >> 23) & 0xff) - 127;
  float m = bitsToFloat((u & 0x007fffff) | 0x3f800000); // [1, 2)
  bool big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  k = big ? k + 1 : k;
  float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
  float p = 1.0f / 11;
  p = p * s2 + 1.0f / 9;
  p = p * s2 + 1.0f / 7;
  p = p * s2 + 1.0f / 5;
  p = p * s2 + 1.0f / 3;
  p = p * s2 + 1.0f;
  float kf = static_cast<float>(sub ? k - 23 : k);
  float y = 2.0f * s * p + kf * 0.693147180559945f;
  y = x == std::numeric_limits<float>::infinity() ? x : y;
  y = x == 0.0f ? -std::numeric_limits<float>::infinity() : y;
  y = x < 0.0f ? std::numeric_limits<float>::quiet_NaN() : y;
  return x != x ? x : y;
}

// Odd Taylor series near 0 (|x| < 0.2), else 1 - 2 / (e^2|x| + 1) with the sign of x.
SHARDC_INLINE float tanh(float x) {
  float a = x < 0 ? -x : x;
  float z = x * x;
  float p = -1382.0f / 155925;
  p = p * z + 62.0f / 2835;
  p = p * z - 17.0f / 315;
  p = p * z + 2.0f / 15;
  p = p * z - 1.0f / 3;
  float small = x + x * z * p;
  float e = exp(2.0f * (a > 20.0f ? 20.0f : a));
  float t = 1.0f - 2.0f / (e + 1.0f);
  t = x < 0 ? -t : t;
  float y = a < 0.2f ? small : t;
  return x != x ? x : y;
}

// Taylor series for |x| < 0.5; Abramowitz & Stegun 7.1.26 beyond.
SHARDC_INLINE float erf(float x) {
  float a = x < 0 ? -x : x;
  float z = x * x;
  float p = 1.0f / 9360;
  p = -p * z + 1.0f / 1320;
  p = -p * z + 1.0f / 216;
  p = -p * z + 1.0f / 42;
  p = -p * z + 1.0f / 10;
  p = -p * z + 1.0f / 3;
  p = -p * z + 1.0f;
  float small = 1.12837916709551257f * x * p;
  float t = 1.0f / (1.0f + 0.3275911f * a);
  float q = 1.061405429f;
  q = q * t - 1.453152027f;
  q = q * t + 1.421413741f;
  q = q * t - 0.284496736f;
  q = q * t + 0.254829592f;
  float big = 1.0f - q * t * exp(-z);
  big = x < 0 ? -big : big;
  float y = a < 0.5f ? small : big;
  return x != x ? x : y;
}

SHARDC_INLINE float sigmoid(float x) {
  return 1.0f / (1.0f + exp(-x));
}

SHARDC_INLINE float geluErf(float x) {
  return 0.5f * x * (1.0f + erf(x * 0.70710678118654752f));
}

// (1 + tanh u) / 2 = sigmoid(2u): one exp and one division, not tanh's two branches.
SHARDC_INLINE float geluTanh(float x) {
  float u2 = 1.5957691216057308f * (x + 0.044715f * x * x * x); // 2u, u = sqrt(2/pi) (...)
  return x / (1.0f + exp(-u2));
}

// gelu'(x) times dy: Phi(x) + x phi(x) for the erf form.
SHARDC_INLINE float geluErfGrad(float x, float dy) {
  float slope =
      0.5f * (1.0f + erf(x * 0.70710678118654752f)) + x * 0.3989422804014327f * exp(-0.5f * x * x);
  return dy * slope;
}

// With s = sigmoid(2u): s + x s (1 - s) 2u', u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2). Where
// s saturates the second term is 0 (its limit), also when x^2 overflows.
SHARDC_INLINE float geluTanhGrad(float x, float dy) {
  float x2 = x * x;
  float s = 1.0f / (1.0f + exp(-1.5957691216057308f * (x + 0.044715f * x2 * x)));
  float w = s * (1.0f - s);
  float du2 = 1.5957691216057308f * (1.0f + 0.134145f * x2);
  return dy * (s + (w == 0.0f ? 0.0f : x * w * du2));
}

} // namespace shardc::vm
