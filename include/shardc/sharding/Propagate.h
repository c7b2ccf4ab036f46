// Sharding propagation: from the shardings fixed so far (user, tactic), infer one for every
// other value of a function, through each op's factor-based sharding rule, forward and
// backward along use-def chains, to a fixed point.
//
// Priorities, in order:
//  1. Fixed shardings (OriginKind User or Tactic) never change.
//  2. Ops without reduction factors (elementwise, reshapes, transposes, ...) propagate to a
//     fixed point before ops with them (matmul, reductions) are allowed to: a decision
//     travels along the cheap paths first.
//  3. Within one op, each factor takes the most refined sharding that its tensors agree on
//     (one axis list a prefix of the other); when two disagree, the one from a fixed tensor
//     wins, then the one from the larger tensor (resharding the smaller one is cheaper), then
//     operands before results. A mesh axis shards at most one factor of an op, taken in the
//     same order.
// Propagation only refines: an inferred sharding gains axes but never loses them, so it
// ends. A value no decision reaches is replicated (OriginKind::Default). Conflicts left over
// become reshards in the SPMD lowering. A result tied to an argument (updated state)
// propagates to and from that argument.
#pragma once

namespace shardc {
class Function;
class ShardingPlan;

void propagateShardings(const Function& f, ShardingPlan& plan);

} // namespace shardc
