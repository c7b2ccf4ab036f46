// The model at a fraction of its batch, for micro-batches the compiler chooses: every input's
// first dimension (the batch) divided by `pieces`, and every shape that follows from it (the
// attributes of reshapes, broadcasts, iotas, slices) made to match. It is the program one
// device of a data-parallel split over `pieces` devices runs: the SPMD lowering already makes
// those shapes local.
#pragma once

#include <cstdint>
#include <memory>

namespace shardc {
class Function;
class Module;

// A module holding `f` at batch B / pieces, its arguments and results named and ordered as
// `f`'s. Throws shardc::Error naming the input or op when the batch cannot be split: an input
// whose first dimension does not divide, or an op that mixes the samples of the batch (a mean
// over it, say), which the pieces would compute apart; or a result that does not keep the batch
// as its first dimension.
std::unique_ptr<Module> splitBatch(const Function& f, int64_t pieces);

} // namespace shardc
