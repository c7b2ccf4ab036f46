// A guard for JSON from files: nlohmann's parser recurses once per nesting level, so text
// nested without bound (a forged PEF, a hostile --stats file) would overflow the stack.
#pragma once

#include <cstddef>
#include <string>

namespace shardc {

// The deepest nesting of brackets and braces in JSON text (outside strings).
size_t jsonDepth(const std::string& text);

} // namespace shardc
