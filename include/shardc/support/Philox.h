// Philox4x32-10, the counter-based generator of Salmon et al., "Parallel Random Numbers: As
// Easy as 1, 2, 3" (SC 2011): four 32-bit words of output are a fixed function of a 128-bit
// counter and a 64-bit key, so any element's random number can be computed on its own, in
// any order, on any device. Dropout keeps an element by the first word for the counter
// (its global linear index, the step, the dropout's stream).
#pragma once

#include "shardc/support/Error.h"

#include <cstdint>
#include <string>

namespace shardc::philox {

inline uint32_t firstWord(uint64_t index, uint32_t step, uint32_t stream, uint64_t seed) {
  uint32_t c0 = static_cast<uint32_t>(index), c1 = static_cast<uint32_t>(index >> 32), c2 = step,
           c3 = stream;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t{0xD2511F53} * c0, p1 = uint64_t{0xCD9E8D57} * c2;
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9;
    k1 += 0xBB67AE85;
  }
  return c0;
}

// Dropout's ratio, a run-time value: outside [0, 1] it is the user's error.
inline double checkedDropoutRatio(double p) {
  if (!(p >= 0 && p <= 1)) throw Error("dropout ratio must be in [0, 1], got " + std::to_string(p));
  return p;
}

// An element is dropped when its word is below p 2^32 (so P(drop) = p, to within 2^-32).
inline uint64_t dropThreshold(double p) {
  if (!(p > 0)) return 0;
  if (p >= 1) return uint64_t{1} << 32;
  return static_cast<uint64_t>(p * 4294967296.0);
}

} // namespace shardc::philox
