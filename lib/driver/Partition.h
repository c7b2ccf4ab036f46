// The partitioning step of `shardc compile`: the mesh from the flags, the user's strategy,
// the tactics, propagation and SPMD lowering.
#pragma once

#include "shardc/driver/Driver.h"
#include "shardc/sharding/Plan.h"
#include "shardc/sharding/SpmdLowering.h"

#include <functional>
#include <string>

namespace shardc {
class Function;

struct Partitioned {
  ShardingPlan plan;
  SpmdProgram program;
};

// Throws shardc::Error for flags that do not make a mesh, an impossible strategy, or
// shardings that do not fit. `log` receives one line per decision.
Partitioned partitionProgram(const Function& f, const PartitionOptions& o,
                             const std::function<void(const std::string&)>& log);

} // namespace shardc
