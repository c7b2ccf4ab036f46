// SPMD lowering: from a function whose values all have shardings (after propagation), the
// one program every device runs: local shapes, and explicit collectives wherever an op needs
// its operands laid out differently from how they are, or leaves partial sums.
//
// Per op: each factor of its sharding rule takes the sharding of the results' annotations
// (then of the operands, for factors only they have: reductions); factors that need
// replication are whole; a mesh axis shards one factor. Operands are resharded to that,
// the op runs on local pieces (with shape attributes made local), and its results, partial
// over the axes of sharded reduction factors, are resharded to their annotations. A mean over
// a sharded dimension becomes a partial sum of local means scaled by 1/shards.
#pragma once

#include "shardc/ir/IR.h"
#include "shardc/sharding/Mesh.h"

#include <memory>
#include <vector>

namespace shardc {
class ShardingPlan;

struct SpmdProgram {
  std::unique_ptr<Module> module; // one function: the per-device program
  Mesh mesh;
  std::vector<TensorSharding> argShardings;    // the layout of each argument's local piece
  std::vector<TensorSharding> resultShardings; // and of each result's (never partial)
  const Function& function() const { return *module->functions().front(); }
};

// Lowering of one function under many plans (the search lowers the same function for every
// candidate): each op's sharding rule is made once.
class SpmdLowerer {
public:
  explicit SpmdLowerer(const Function& f);
  ~SpmdLowerer();
  SpmdLowerer(const SpmdLowerer&) = delete;
  SpmdLowerer& operator=(const SpmdLowerer&) = delete;
  // Throws shardc::Error when a sharding cannot be lowered: it does not fit the value's type
  // or the mesh (naming the value, dimension and axis), or it is partial.
  SpmdProgram lower(const ShardingPlan& plan);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot SpmdLowerer(f).lower(plan).
SpmdProgram lowerToSpmd(const Function& f, const ShardingPlan& plan);

} // namespace shardc
