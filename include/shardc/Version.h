#pragma once

namespace shardc {
inline constexpr const char* kShardcVersion = "0.1.0";
} // namespace shardc
