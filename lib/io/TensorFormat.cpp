#include "shardc/io/TensorFormat.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>

namespace shardc {
namespace {

std::string element(const Tensor& t, int64_t i) {
  if (!isFloat(t.dtype())) return std::to_string(t.getInt(i));
  double v = t.getDouble(i);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = t.dtype() == DType::F64 ? std::to_chars(buf, buf + sizeof buf, v)
                                   : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  return std::string(buf, r.ptr);
}

} // namespace

std::string formatTensor(const Tensor& t, int64_t maxElements) {
  int64_t n = t.numel();
  std::string s = t.type().str() + " [";
  if (n <= maxElements) {
    for (int64_t i = 0; i < n; ++i)
      s += (i ? ", " : "") + element(t, i);
    return s + "]";
  }
  for (int64_t i = 0; i < 4; ++i)
    s += element(t, i) + ", ";
  s += "...";
  for (int64_t i = n - 4; i < n; ++i)
    s += ", " + element(t, i);
  double sum = 0, mn = INFINITY, mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    double v = t.getDouble(i);
    sum += v;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  char stats[128];
  std::snprintf(stats, sizeof stats, "] sum=%.9g min=%.9g max=%.9g", sum, mn, mx);
  return s + stats;
}

Tensor randomTensor(const TensorType& type, uint64_t seed, int64_t intBound) {
  std::mt19937_64 gen(seed);
  Tensor t(type);
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t bits = gen();
    if (isFloat(type.dtype))
      t.setDouble(i, static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0);
    else if (isBool(type.dtype))
      t.setInt(i, static_cast<int64_t>(bits >> 63));
    else
      t.setInt(i,
               static_cast<int64_t>(bits % static_cast<uint64_t>(std::max<int64_t>(intBound, 1))));
  }
  return t;
}

} // namespace shardc
