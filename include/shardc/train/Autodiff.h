// Reverse-mode automatic differentiation as an IR transformation.
#pragma once

#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace shardc {
class Builder;
class Function;
class Value;
struct TensorType;

// How a call of a function split for differentiation (splitCallsForGradients) is
// differentiated: the call runs a forward whose first results are the callee's and the rest
// values its backward reads; `backward` takes the call's operands, the forward's results
// `residualResults`, and the cotangents of results `cotangents`, and returns the gradients
// of operands `gradOperands`.
// A scanned callee's backward runs as a reverse scan of `scanBackward` (its layout in
// lib/train/CallGradients.cpp): it adds up the gradients of shared operands
// `scanSharedGrads` over the steps, returns those of stacked operands `scanXGrads` stacked, and
// reads the carried values each forward step started from when `scanReadsCarries`.
struct CallVjp {
  std::string backward;
  std::vector<size_t> residualResults, cotangents, gradOperands;
  std::string scanBackward;
  std::vector<size_t> scanSharedGrads, scanXGrads;
  bool scanReadsCarries = false;
};
using CallVjps = std::map<std::string, CallVjp>; // by forward function

// Appends to `f` the ops computing d(loss)/d(w) for each w in `wrt` (values of `f`, usually
// its parameter arguments), using each op's gradient rule from the registry and, for a call
// of a function in `calls`, a call of its backward. `loss` must be a floating-point scalar.
// Returns one gradient per w, nullptr where no gradient path connects w to the loss. Ops on
// a gradient path without a rule raise shardc::Error naming the op and its location.
//
// Activations: the backward ops read the forward values directly (everything the forward
// pass computed stays available, nothing is recomputed); dead forward values are removed
// by dead-code elimination afterwards.
std::vector<Value*> buildGradients(Function& f, Value* loss, const std::vector<Value*>& wrt,
                                   const CallVjps* calls = nullptr);

// Zeros of type `t` (a scalar constant broadcast), built at b's insertion point.
Value* zerosLike(Builder& b, const TensorType& t);

// The floating-point values of `f` computed from any of `from` (and those of `from`).
std::unordered_set<const Value*> floatDependents(const Function& f,
                                                 const std::vector<Value*>& from);

// The vector-Jacobian product: as buildGradients, with the gradient of each seed's first
// value given as its second (a cotangent) instead of a scalar loss's 1.
std::vector<Value*> buildVjp(Function& f, const std::vector<std::pair<Value*, Value*>>& seeds,
                             const std::vector<Value*>& wrt, const CallVjps* calls = nullptr);

// For a training step over `f` whose trained parameters are `trained`: every function `f`
// calls with a floating-point operand computed from a trained parameter is differentiated
// once, as two functions of the module: @<callee>_fwd (the callee's results, then the values
// its gradient reads) and @<callee>_bwd (the gradients of the callee's floating-point
// arguments that may depend on a trained parameter). Each such call becomes a call of the
// forward; buildGradients makes the backward's calls.
CallVjps splitCallsForGradients(Function& f, const std::vector<Value*>& trained);

} // namespace shardc
