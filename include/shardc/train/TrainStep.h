// Turns a forward function into a training step: loss, gradients, optimizer update.
#pragma once

#include "shardc/ir/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace shardc {
class Function;

struct TrainOptions {
  // Loss: "" uses the function's single floating-point scalar result; "cross-entropy"
  // (result 0 holds logits [N, C] or [N, ..., C], labels are class indices) or "mse"
  // (labels have the result's shape) adds one, reading labels from a new input argument.
  std::string loss;
  std::string labels = "labels";
  std::string optimizer = "sgd"; // sgd | adam | adamw
  double learningRate = 0.01;
  double momentum = 0.0;    // sgd
  bool nesterov = false;    // sgd
  double weightDecay = 0.0; // sgd, adam: added to the gradient; adamw: decoupled
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8; // adam, adamw
  // Parameters whose names match one of these shell-style patterns are not trained.
  std::vector<std::string> freeze;
  // Gradient accumulation: a step runs the forward and backward passes over this many
  // micro-batches of the model's batch, one after the other, and updates once.
  int64_t microBatches = 1;
  bool initialState = true; // fill TrainStepInfo::optimizerState (off: shapes only)
};

struct TrainStepInfo {
  std::vector<std::string> trained;             // parameters that get updated
  std::vector<std::string> untrained;           // frozen, or with no gradient path to the loss
  std::map<std::string, Tensor> optimizerState; // initial values of the new opt_state arguments
                                                // (empty without TrainOptions::initialState)
  std::string lossName;
};

// Rewrites `f` in place into
//   (params, opt_state, inputs) -> (loss, [other outputs], new params tied to params,
//                                   new opt_state tied to opt_state)
// with the update rules of PyTorch's torch.optim.SGD / Adam / AdamW, keeping the results `f`
// already ties to its arguments (the model's own state updates). Throws shardc::Error
// for a missing or ambiguous loss, an unknown optimizer, or a gradient path through an op
// without a gradient rule.
TrainStepInfo buildTrainStep(Function& f, const TrainOptions& options);

} // namespace shardc
