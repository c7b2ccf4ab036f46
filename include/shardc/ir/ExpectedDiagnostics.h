// `--verify-diagnostics` support: a test file states the errors it expects with comments
//   // expected-error {{text}}        on the line the error points at
//   // expected-error@+1 {{text}}     on the next line (@-N: N lines above)
// and the check passes when every diagnostic is expected and every expectation is met.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardc {
class DiagEngine;

// Returns one message per mismatch; empty when the diagnostics are exactly as expected.
std::vector<std::string> checkExpectedDiagnostics(std::string_view source, const DiagEngine& diags);

} // namespace shardc
