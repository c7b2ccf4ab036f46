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
//
// Ops are swept forward then backward; an op none of whose tensors changed since its last
// visit is skipped (visiting it again could not change anything), so a sweep costs little
// where nothing moves.
#pragma once

#include <memory>
#include <vector>

namespace shardc {
class Function;
class ShardingPlan;
class Value;

// Propagation over one function, reusable: it keeps each op's sharding rule between runs
// (the search and the Megatron tactic propagate the same function many times).
class ShardingPropagator {
public:
  explicit ShardingPropagator(const Function& f);
  ~ShardingPropagator();
  ShardingPropagator(const ShardingPropagator&) = delete;
  ShardingPropagator& operator=(const ShardingPropagator&) = delete;

  // Infers every value's sharding from those in `plan`.
  void propagate(ShardingPlan& plan);
  // `plan` was propagated, then `changed` values were given new (fixed) shardings: continues
  // from there, revisiting only what they reach. This takes decisions one after another (an
  // earlier decision's inferred shardings stay), which can differ from propagating all the
  // fixed shardings at once where decisions conflict. Values it does not reach keep what they
  // had (no entry reads as replicated). `plan` need not have been propagated: then only what
  // `changed` reaches is inferred (the Megatron tactic's trials use this).
  void propagateFrom(ShardingPlan& plan, const std::vector<const Value*>& changed);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot ShardingPropagator(f).propagate(plan).
void propagateShardings(const Function& f, ShardingPlan& plan);

} // namespace shardc
