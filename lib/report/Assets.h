// The report page's own style sheet and script, inlined into every page (no network).
#pragma once

namespace shardc::report {

extern const char* const kStyle;
extern const char* const kScript;

} // namespace shardc::report
