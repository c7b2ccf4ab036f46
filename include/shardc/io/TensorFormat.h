// Human-readable tensor summaries and seeded random tensors, for tools and tests.
#pragma once

#include "shardc/ir/Tensor.h"

#include <cstdint>
#include <string>

namespace shardc {

// "f32[2,3] [1.0, 2.5, ...]": every element up to `maxElements`, else the first and last
// few with sum, min and max. Floats print in shortest round-trip form.
std::string formatTensor(const Tensor& t, int64_t maxElements = 64);

// Deterministic for a given seed on every platform: floats uniform in [-1, 1), integers
// uniform in [0, intBound), bools 0 or 1.
Tensor randomTensor(const TensorType& type, uint64_t seed, int64_t intBound);

} // namespace shardc
