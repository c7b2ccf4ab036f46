// The targets/*.yaml files, compiled into the library so that an installed shardc needs no
// data folder. BuiltinTargets.cpp is generated at build time by EmbedTargets.cmake.
#pragma once

#include <map>
#include <string_view>

namespace shardc {

// File name without .yaml -> the file's text.
const std::map<std::string_view, std::string_view>& builtinTargetFiles();

} // namespace shardc
