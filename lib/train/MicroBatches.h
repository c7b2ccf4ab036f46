// Gradient accumulation (--micro-batches): the forward and backward ops of a training step,
// built for one micro-batch, repeated over the micro-batches of a bigger batch.
#pragma once

#include "shardc/ir/IR.h"

#include <cstdint>
#include <vector>

namespace shardc {

// What the optimizer and the step's results read of the forward and backward pass.
struct StepValues {
  Value* loss = nullptr;
  std::vector<Value*> grads;       // one per trained parameter; nullptr where none flows
  std::vector<FuncResult> outputs; // the model's other outputs
  std::vector<FuncResult> carried; // state updates tied to arguments (dropout's rng, ...)
};

// Rewrites `f`, whose ops compute `s` from one batch of B samples, into a step over M x B
// samples: each data input grows to M x B along its first dimension, and the ops run once per
// micro-batch, one after the other, so that one micro-batch's activations are alive at a time.
// Micro-batch i holds samples i, i + M, i + 2M, ... (the input seen as [B, M, ...]): with a
// mean loss every grouping gives the same step, and this one keeps the batch dimension first,
// so a data-parallel split of an input splits every micro-batch alike. Afterwards `s` holds
// the loss and gradients averaged over the micro-batches, the outputs joined back into sample
// order and the state after the last micro-batch. Throws shardc::Error for an input or output
// without the batch as its first dimension.
void accumulateMicroBatches(Function& f, int64_t m, StepValues& s);

} // namespace shardc
