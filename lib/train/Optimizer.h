// The optimizers' update rules as IR (PyTorch's torch.optim.SGD / Adam / AdamW), for one
// parameter at a time, and the update bodies shared by the parameters of repeated calls.
#pragma once

#include "shardc/ir/Types.h"
#include "shardc/train/Autodiff.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc {
class Builder;
class Function;
class Value;
struct TrainOptions;

// A scalar constant of dtype `t`.
Value* scalarOf(Builder& b, DType t, double v);

// The state each parameter carries, as suffixes of its name, in argument order.
std::vector<std::string> stateSuffixes(const TrainOptions& o);

// Values every parameter's Adam update reads: the learning rate over the first bias
// correction, and the square root of the second (in the parameters' dtype).
struct SharedTerms {
  Value* biasStep = nullptr;
  Value* bc2Sqrt = nullptr;
};

struct ParamUpdate {
  Value* param = nullptr;
  std::vector<Value*> state; // new values of the state, in stateSuffixes order
};

// Builds p's update from its gradient g and its state (stateSuffixes order).
ParamUpdate emitUpdate(Builder& b, const TrainOptions& o, Value* p, Value* g,
                       const std::vector<Value*>& state, const SharedTerms& shared);

// Parameters that each call of one split function (a repeated layer) reads alone, at the
// same operand positions in every call, are updated by one function of the module called
// once per call (@<callee>_update, its results tied to its parameter and state arguments).
// Returns each parameter's update for those, nothing for the others.
std::vector<std::optional<ParamUpdate>>
updateInBodies(Function& f, const TrainOptions& o, const CallVjps& calls,
               const std::vector<Value*>& params, const std::vector<Value*>& grads,
               const std::vector<std::vector<Value*>>& states, const SharedTerms& shared);

} // namespace shardc
