// Memory of a program as it runs in order: a value lives from the op that makes it to its
// last use; function results live to the end, but an updated parameter or state goes into its
// argument's buffer when nothing reads the argument later (as the compiled runtime does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace shardc {
class Function;
class Op;
class Value;

// The most bytes of op results alive at once, arguments not counted; the resident constants
// (shardc/ops/ResidentConstants.h) count for the whole step. `onChip` (optional):
// values a fused group keeps to itself (made and read within one section or kernel), which
// never take device memory.
int64_t peakActivationBytes(const Function& f,
                            const std::unordered_set<const Value*>* onChip = nullptr);

// A training step's forward pass: every op its loss (result 0, as buildTrainStep lays the
// step out) depends on, in program order. Its activations are the values that depend on a
// data input; the others (weights' casts and transposes, masks from iotas) are static.
struct ForwardPass {
  std::vector<Op*> ops;
  std::unordered_map<const Op*, size_t> index; // position in `ops`
  std::unordered_set<const Value*> activations;
  bool contains(const Op* op) const { return index.count(op) > 0; }
  bool isActivation(const Value* v) const { return activations.count(v) > 0; }
};
ForwardPass forwardPass(const Function& f);

// The most bytes alive at once of the forward pass's activations that ops outside it read:
// what the forward pass keeps for the backward pass (0 for an inference program). With
// micro-batches, one micro-batch's.
int64_t keptActivationBytes(const Function& f);

} // namespace shardc
