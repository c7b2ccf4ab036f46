// Differential checks of the partitioner, shared by the per-op and the random-program tests:
// a function with some shardings fixed by the user is propagated, lowered to SPMD, run on
// thread devices, and its assembled results compared with the interpreter's on the whole
// function.
#pragma once

#include "shardc/ir/IR.h"
#include "shardc/ir/Tensor.h"
#include "shardc/sharding/Plan.h"

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace shardc::testing {

// A function (the only one of `module`) and what the user fixes of its layout.
struct PartitionCase {
  std::unique_ptr<Module> module;
  Mesh mesh;
  std::vector<std::pair<const Value*, TensorSharding>> fixed;
  // Per function result, the layout asked of it (ShardingPlan::setResult), if any.
  std::vector<std::optional<TensorSharding>> resultShardings;
  // Propagate the fixed shardings one after another, each continuing from the last
  // (ShardingPropagator::propagateFrom, as the search takes its decisions), not all at once.
  bool stepwise = false;

  const Function& function() const { return *module->functions().front(); }
  // The fixed shardings (without `withFixed`: only the asked result layouts) as a plan, every
  // one OriginKind::User.
  ShardingPlan plan(bool withFixed = true) const;
  // The mesh and the module annotated with the fixed shardings: text IR that reproduces
  // the case (shardc-opt reads it).
  std::string str() const;
};

struct PartitionOutcome {
  std::string failure;  // "" when the partitioned results match the interpreter's
  bool sharded = false; // some value or result was laid out over the mesh after propagation
};

// Propagates, lowers and runs `c` on one thread per device with `args` (one whole tensor
// per argument); float results must match within rtol 1e-5 / atol 1e-6, the rest exactly.
// The failure names the case (str()), the propagated shardings and the per-device program.
PartitionOutcome runPartitioned(const PartitionCase& c, const std::vector<Tensor>& args);

// A random layout of a tensor of type `t` valid on `mesh` (checkSharding passes): each mesh
// axis on at most one dimension that it divides, in random major-to-minor order, sometimes
// none; with `chunks`, now and then a sharded dimension cut into 2 or 3 chunks first.
TensorSharding randomSharding(std::mt19937_64& rng, const TensorType& t, const Mesh& mesh,
                              bool chunks);

// The meshes every differential test runs on.
std::vector<Mesh> testMeshes();

} // namespace shardc::testing
