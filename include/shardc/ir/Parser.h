// Parses the text form of the IR. Errors go to the DiagEngine as file:line:col diagnostics;
// parsing stops at the first one.
#pragma once

#include <memory>
#include <string_view>

namespace shardc {
class Module;
class DiagEngine;

// Returns nullptr after reporting an error. Every op is checked against its shape rule
// while parsing (the same check the verifier makes).
std::unique_ptr<Module> parseModule(std::string_view text, DiagEngine& diags);

} // namespace shardc
