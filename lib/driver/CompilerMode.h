// --compiler-mode: model-type heuristics. `nlp` recognizes a transformer's blocks in the
// imported graph and turns on what pays for them; `default` applies none.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace shardc {
class Function;
class Op;
struct CompileOptions;
struct SectionOptions;

// The modes, in the order the error on an unknown one lists them.
const std::vector<std::string>& compilerModes();

// Throws shardc::Error naming the modes when `mode` is not one.
void checkCompilerMode(const std::string& mode);

// Applies o.compilerMode's heuristics to the options and the section controls, from the model
// `f` and where its ops came from (`origins`, see outlineBlocks); returns the log, one line per
// heuristic applied and where, or why the mode does not fit the model.
std::vector<std::string>
applyCompilerMode(CompileOptions& o, SectionOptions& sections, const Function& f,
                  const std::unordered_map<const Op*, std::string>& origins);

} // namespace shardc
