// Reverse-mode automatic differentiation as an IR transformation.
#pragma once

#include <vector>

namespace shardc {
class Function;
class Value;

// Appends to `f` the ops computing d(loss)/d(w) for each w in `wrt` (values of `f`, usually
// its parameter arguments), using each op's gradient rule from the registry. `loss` must be
// a floating-point scalar. Returns one gradient per w, nullptr where no gradient path
// connects w to the loss. Ops on a gradient path without a rule raise shardc::Error naming
// the op and its location.
//
// Activations: the backward ops read the forward values directly (everything the forward
// pass computed stays available, nothing is recomputed); dead forward values are removed
// by dead-code elimination afterwards.
std::vector<Value*> buildGradients(Function& f, Value* loss, const std::vector<Value*>& wrt);

} // namespace shardc
