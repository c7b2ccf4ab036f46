// A 64-bit digest of bytes, so that MPI ranks can compare what each was given (a PEF, an
// input, the weights) without sending it. Not cryptographic: it guards against mistakes.
#pragma once

#include <cstdint>
#include <cstring>

namespace shardc {

inline uint64_t digestBytes(const void* data, size_t n, uint64_t seed = 0) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull);
  auto mix = [&](uint64_t w) {
    h ^= w * 0xbf58476d1ce4e5b9ull;
    h = ((h << 31) | (h >> 33)) * 0x94d049bb133111ebull;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    mix(w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  mix(tail);
  return h ^ (h >> 29);
}

} // namespace shardc
