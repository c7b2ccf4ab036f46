// The expert tactics a user names on the command line. Each fixes the shardings of some
// function arguments (OriginKind::Tactic) and leaves everything else to propagation;
// arguments already fixed (by the user's strategy file) are never changed.
#pragma once

#include "shardc/sharding/Mesh.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardc {
class Function;
class ShardingPlan;
class Value;

// Data parallelism over `axis`: every input's first dimension (the batch) is split (parameters
// stay whole along `axis`; see replicateUnfixedParameters). Gradients then arrive as partial
// sums and are reduced before the optimizer update. Throws shardc::Error when a batch does not
// divide over the axis.
void applyDataParallel(const Function& f, ShardingPlan& plan, const std::string& axis);

// Megatron-style tensor parallelism over `axis`: matmuls by a parameter weight are taken in
// program order; one whose activation is whole becomes column parallel (weight and bias
// split by output column; split per chunk when its output is cut into equal pieces, like a
// fused q|k|v projection) if propagation then carries the split into a later parameter
// matmul's contracted dimension, which becomes row parallel (or already is: the gate and up
// projections of a gated MLP both feed the down projection). Attention heads follow by
// propagation. A column candidate without a row partner (an LM head) stays whole.
void applyMegatron(const Function& f, ShardingPlan& plan, const std::string& axis);

// What applyMegatron would fix on `plan` (weights and biases with their shardings), without
// fixing it: a caller trying several plans with the same Megatron part computes it once.
struct TacticDecision {
  const Value* value;
  TensorSharding sharding;
};
std::vector<TacticDecision> megatronDecisions(const Function& f, const ShardingPlan& plan,
                                              const std::string& axis);
// Fixes `decisions` (those not fixed already) as tactic `tactic`.
void applyDecisions(ShardingPlan& plan, const std::vector<TacticDecision>& decisions,
                    const std::string& tactic);

// How many equal pieces a parameter's output columns are cut into afterwards, and which of
// its dimensions they are: for the weight of a matmul (its last dimension, or its first when
// the matmul reads it transposed, as nn.Linear exports), or the bias added to one, whose
// (biased) result is split into equal pieces along its last dimension (a fused q|k|v
// projection: 3); {-1, 1} otherwise. Splitting such a dimension per piece ({model}:3) keeps
// each piece's heads on the same devices.
struct OutputSplit {
  int64_t dim = -1;
  int64_t pieces = 1;
};
OutputSplit fusedOutputSplit(const Value* param);

// The attention heads a parameter's dimension holds: for the weight (or bias) of a projection
// into attention (Q, K, V, whose result a reshape cuts into heads) its output columns, for the
// output projection's weight its input rows (the heads merged back); `heads` per piece of
// `pieces` equal ones (a fused q|k|v: 3; 0 when the pieces differ in width, as grouped-query
// attention's). Read from the reshapes: the widths before and after them give the head size.
// {-1, 0, 1} for any other parameter.
struct HeadSplit {
  int64_t dim = -1;
  int64_t heads = 0;
  int64_t pieces = 1;
};
HeadSplit attentionHeads(const Value* param);

// Fixes every parameter no decision has split as replicated: what the command-line tactics
// mean for the parameters they leave alone (left open, propagation could split them).
void replicateUnfixedParameters(const Function& f, ShardingPlan& plan);

// Optimizer-state sharding (ZeRO) over `axis`: each optimizer-state tensor is split along its
// first dimension that divides; propagation then shards the update and gathers parameters.
void applyOptimizerStateSharding(const Function& f, ShardingPlan& plan, const std::string& axis);

} // namespace shardc
