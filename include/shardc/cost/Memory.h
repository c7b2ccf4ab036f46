// Memory of a program as it runs in order (the reference interpreter's policy: a value lives
// from the op that makes it to its last use; function results live to the end).
#pragma once

#include <cstdint>

namespace shardc {
class Function;

// The most bytes of op results alive at once, arguments not counted.
int64_t peakActivationBytes(const Function& f);

} // namespace shardc
