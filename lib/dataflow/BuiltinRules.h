// rules/default.yaml, compiled into the library (BuiltinRules.cpp is generated at build time
// by EmbedRules.cmake), so that an installed shardc needs no data folder.
#pragma once

namespace shardc {

extern const char* const kDefaultRules;

} // namespace shardc
