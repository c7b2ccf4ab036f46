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

// digestBytes's mixing over four interleaved 64-bit lanes (32-byte blocks), fed in pieces of
// any size: several times its speed on large buffers (a PEF's weights hash at memory speed).
// A changed byte changes its lane's state, and lanes combine by addition before the final mix,
// so any single changed byte and any change of length change the digest.
class StreamDigest {
public:
  void update(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    length_ += n;
    if (fill_) {
      size_t take = n < 32 - fill_ ? n : 32 - fill_;
      std::memcpy(buf_ + fill_, p, take);
      fill_ += take, p += take, n -= take;
      if (fill_ < 32) return;
      block(buf_);
      fill_ = 0;
    }
    for (; n >= 32; p += 32, n -= 32)
      block(p);
    std::memcpy(buf_, p, n);
    fill_ = n;
  }
  uint64_t finish() const {
    uint64_t tail[4] = {0, 0, 0, 0};
    std::memcpy(tail, buf_, fill_);
    uint64_t h = length_ * 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 4; ++i)
      h += rotl(mix(lane_[i], tail[i]), 16 * i + 1);
    h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
  }

private:
  static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static uint64_t mix(uint64_t h, uint64_t w) {
    h ^= w * 0xbf58476d1ce4e5b9ull;
    return rotl(h, 31) * 0x94d049bb133111ebull;
  }
  void block(const unsigned char* p) {
    for (int i = 0; i < 4; ++i) {
      uint64_t w;
      std::memcpy(&w, p + 8 * i, 8);
      lane_[i] = mix(lane_[i], w);
    }
  }
  uint64_t lane_[4] = {1, 2, 3, 4};
  unsigned char buf_[32] = {};
  size_t fill_ = 0;
  uint64_t length_ = 0;
};

} // namespace shardc
