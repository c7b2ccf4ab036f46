// --dump-kernels: a function's kernels, section by section, as the compiled runtime runs them.
#pragma once

#include <string>
#include <vector>

namespace shardc {
class Function;
struct ExecPlan;
struct Section;

// Per section (phase, ops, the rule that formed it), its kernels in run order: each kernel's
// name and the ops it runs (a fused kernel's several) as text IR, every result followed by
// where the plan keeps it (arena offset and size, an argument's buffer, a view, a bind-time
// constant, fused: never stored); then the section's ops that no kernel runs (views,
// constants).
std::string dumpKernels(const Function& f, const ExecPlan& plan,
                        const std::vector<Section>& sections);

} // namespace shardc
