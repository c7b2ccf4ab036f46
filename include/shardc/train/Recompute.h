// Activation recomputation: the backward pass of a training step recomputes forward values
// from a few kept ones instead of keeping them all from the forward pass.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace shardc {
class Function;

enum class Recompute {
  None,
  // The attention core: the values between an activation-by-activation matmul that grows its
  // operands (scores = Q K^T) and the next such matmul (P V), softmax, masking and dropout
  // included; Q, K, V and the attention's output stay kept. Its memory grows with the square
  // of the sequence and its arithmetic is a small part of a layer's.
  Selective,
  // Every layer: the forward pass is cut where a single activation flows from one op to the
  // next (the residual stream between layers) and the cuts are grouped by the period of the
  // ops between them, so one checkpoint per repeated layer is kept. The backward pass of each
  // layer first recomputes the layer's forward from its checkpoint. The part after the last
  // checkpoint (the head and the loss) is not recomputed: its backward runs first.
  Full,
};

// "none", "selective", "full"; nullopt for anything else.
std::optional<Recompute> parseRecompute(const std::string& name);
const char* recomputeName(Recompute r);

struct RecomputeSummary {
  int64_t regions = 0;                   // parts of the forward pass recomputed
  int64_t clonedOps = 0;                 // forward ops that run a second time
  int64_t keptBefore = 0, keptAfter = 0; // keptActivationBytes before and after
  std::string str() const;
};

// Rewrites the training step `f` (a whole step or a per-device program; result 0 its loss)
// so that its backward pass recomputes what `mode` does not keep: copies of the forward ops
// that make the values the backward pass reads, placed right before the first backward op
// that reads one of them. The copies compute from the same kept values with the same ops, so
// the step's numbers do not change (dropout draws its mask from its operands, so the copy draws
// the same). Must run after the last CSE, which would merge the copies back.
RecomputeSummary recomputeActivations(Function& f, Recompute mode);

} // namespace shardc
