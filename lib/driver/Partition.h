// The partitioning step of `shardc compile`: the mesh from the flags, the user's strategy,
// the tactics or the search (--auto-partition), propagation and SPMD lowering.
#pragma once

#include "shardc/cost/Target.h"
#include "shardc/driver/Driver.h"
#include "shardc/search/Search.h"
#include "shardc/sharding/Plan.h"
#include "shardc/sharding/SpmdLowering.h"
#include "shardc/sharding/Strategy.h"

#include <optional>

#include <functional>
#include <string>

namespace shardc {
class Function;

struct Partitioned {
  ShardingPlan plan;
  SpmdProgram program;
  std::string searchJson; // --auto-partition: searchResultJson
};

// What the flags say before the model is read: the mesh and the strategy file, checked, so
// that bad flags fail fast. Throws shardc::Error.
struct PartitionSetup {
  Mesh mesh;
  std::optional<Strategy> strategy;
  SearchParams search; // --auto-partition's budget and seed
};
PartitionSetup preparePartition(const PartitionOptions& o);

// Throws shardc::Error for an impossible strategy or shardings that do not fit. `log`
// receives one line per decision.
// `target` is what --auto-partition plans for.
Partitioned partitionProgram(const Function& f, const PartitionOptions& o,
                             const PartitionSetup& setup, const Target& target,
                             const std::function<void(const std::string&)>& log);

} // namespace shardc
