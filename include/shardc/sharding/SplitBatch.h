// The model at a fraction of its batch, for micro-batches the compiler chooses: every input's
// first dimension (the batch) divided by `pieces`, and every shape that follows from it (the
// attributes of reshapes, broadcasts, iotas, slices) made to match. It is the program one
// device of a data-parallel split over `pieces` devices runs: the SPMD lowering already makes
// those shapes local, and its all-reduces show where the samples of the batch meet.
#pragma once

#include <cstdint>
#include <memory>

namespace shardc {
class Function;
class Module;
class Op;

// The axis of the all-reduces splitBatch leaves in its program: sums over the whole batch of
// values no parameter reaches (the count of a loss's valid labels, say), which the training
// step computes from every micro-batch before the first one reads them (accumulateMicroBatches).
inline constexpr char kMicroBatchAxis[] = "micro";
// Whether `op` is such a sum (an all_reduce over kMicroBatchAxis).
bool sumOverBatch(const Op& op);

// A module holding `f` at batch B / pieces, its arguments and results named and ordered as
// `f`'s. Where the samples meet in a sum over the batch:
// - a sum the parameters do not reach stays an all_reduce over kMicroBatchAxis;
// - a sum the loss depends on affinely (a mean loss, or the numerator of a loss divided by the
//   count of its valid labels) becomes the micro-batch's own sum times `pieces`, so that the
//   mean of the micro-batches' losses and gradients is the whole batch's.
// Throws shardc::Error naming the input or op when the batch cannot be split: an input whose
// first dimension does not divide, or an op that mixes the samples of the batch otherwise (batch
// statistics feeding the activations, a loss not affine in a sum over the batch), which the
// pieces would compute apart; or a result that neither keeps the batch as its first dimension
// nor is such a scalar loss.
std::unique_ptr<Module> splitBatch(const Function& f, int64_t pieces);

} // namespace shardc
