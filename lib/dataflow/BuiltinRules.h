// rules/default.yaml and rules/nlp.yaml, compiled into the library (their .cpp files are
// generated at build time by EmbedRules.cmake), so that an installed shardc needs no data
// folder.
#pragma once

namespace shardc {

extern const char* const kDefaultRules;
extern const char* const kNlpRules;

} // namespace shardc
