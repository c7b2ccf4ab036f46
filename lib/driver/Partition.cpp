#include "Partition.h"

#include "shardc/cost/CostModel.h"
#include "shardc/ir/IR.h"
#include "shardc/search/Search.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/sharding/Strategy.h"
#include "shardc/sharding/Tactics.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace shardc {
namespace {

// The mesh the flags describe: --mesh as given, else `data` (data parallel or tensor
// parallel batch) then `model` (tensor parallel weight) axes.
Mesh meshFromFlags(const PartitionOptions& o, const std::optional<Mesh>& fromStrategy) {
  if (o.dataParallel != (o.worldSize > 0))
    throw Error("--data-parallel and -ws/--world-size N go together");
  if (!o.tensorParallel.empty() && o.tensorParallel != "batch" && o.tensorParallel != "weight")
    throw Error("--tensor-parallel must be batch or weight, not '" + o.tensorParallel + "'");
  if (o.tensorParallel.empty() != (o.nChips == 0))
    throw Error("--tensor-parallel batch|weight and --n-chips N go together");
  if (o.worldSize < 0 || o.nChips < 0) throw Error("-ws and --n-chips must be positive");
  if (!o.autoPartition && (!o.searchBudget.empty() || o.searchSeed || !o.searchMode.empty() ||
                           o.searchExploration || o.searchRolloutContinue || o.searchRescored))
    throw Error("--search-budget, --search-seed, --search-mode, --search-exploration, "
                "--search-rollout-continue and --search-rescored go with --auto-partition");
  if (o.autoPartition) {
    if (o.dataParallel || !o.tensorParallel.empty() || o.shardOptimizerState)
      throw Error("--auto-partition chooses the tactics itself; give --mesh AXIS=N,... (and "
                  "optionally --strategy FILE), not -ws, --tensor-parallel or "
                  "--shard-optimizer-state");
    if (o.mesh.empty() && !fromStrategy)
      throw Error("--auto-partition needs a mesh: --mesh AXIS=N,... (e.g. data=2,model=2)");
  }
  if (!o.mesh.empty()) {
    if (o.dataParallel || !o.tensorParallel.empty())
      throw Error("--mesh names the whole mesh; give either --mesh with --strategy FILE, or "
                  "the tactics (-ws N, --n-chips N), not both");
    if (o.strategy.empty() && !o.autoPartition)
      throw Error("--mesh needs --strategy FILE saying how to shard the arguments, or "
                  "--auto-partition (or use the tactics: --data-parallel -ws N, "
                  "--tensor-parallel weight --n-chips N)");
    Mesh m = Mesh::parse(o.mesh);
    if (fromStrategy && !(*fromStrategy == m))
      throw Error("--mesh " + m.str() + " differs from the strategy file's mesh " +
                  fromStrategy->str());
    return m;
  }
  std::vector<MeshAxis> axes;
  if (o.dataParallel) axes.push_back({"data", o.worldSize});
  if (o.tensorParallel == "batch") {
    if (o.dataParallel)
      throw Error("--tensor-parallel batch and --data-parallel both split the batch; use one");
    axes.push_back({"data", o.nChips});
  }
  if (o.tensorParallel == "weight") axes.push_back({"model", o.nChips});
  if (axes.empty()) {
    if (!fromStrategy) throw Error("--strategy needs a mesh: a `mesh` line in it, or --mesh");
    return *fromStrategy;
  }
  Mesh m(axes);
  if (o.worldSize > Mesh::kMaxDevices || o.nChips > Mesh::kMaxDevices ||
      m.numDevices() > Mesh::kMaxDevices)
    throw Error("the mesh " + m.str() + " from -ws and --n-chips has more than " +
                std::to_string(Mesh::kMaxDevices) + " devices");
  if (fromStrategy && !(*fromStrategy == m))
    throw Error("the strategy file's mesh " + fromStrategy->str() +
                " differs from the mesh the flags make, " + m.str());
  return m;
}

// --search-budget: "200" episodes or "10s" (or "2.5s") of wall-clock time.
SearchParams searchParams(const PartitionOptions& o) {
  SearchParams p;
  if (o.searchSeed) p.seed = *o.searchSeed;
  if (!o.searchMode.empty() && o.searchMode != "joint" && o.searchMode != "per-axis")
    throw Error("--search-mode must be joint or per-axis, not '" + o.searchMode + "'");
  p.perAxis = o.searchMode == "per-axis";
  if (o.searchExploration) {
    if (!(*o.searchExploration >= 0 && *o.searchExploration <= 1e6))
      throw Error("--search-exploration must lie in [0, 1e6]");
    p.exploration = *o.searchExploration;
  }
  if (o.searchRolloutContinue) {
    if (!(*o.searchRolloutContinue >= 0 && *o.searchRolloutContinue < 1))
      throw Error("--search-rollout-continue must lie in [0, 1)");
    p.rolloutContinue = *o.searchRolloutContinue;
  }
  if (o.searchRescored) {
    if (!(*o.searchRescored >= 1 && *o.searchRescored <= 1000))
      throw Error("--search-rescored must lie in [1, 1000]");
    p.rescored = *o.searchRescored;
  }
  const std::string& b = o.searchBudget;
  if (b.empty()) return p;
  bool seconds = b.back() == 's';
  std::string number = seconds ? b.substr(0, b.size() - 1) : b;
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (number.empty() || used != number.size() || !(value > 0) || value > 1e12 ||
      (!seconds && value != std::floor(value)))
    throw Error("--search-budget: expected a number of episodes (200) or of seconds (10s), not '" +
                b + "'");
  if (seconds) {
    p.seconds = value;
    p.episodes = std::numeric_limits<int64_t>::max();
  } else {
    p.episodes = static_cast<int64_t>(value);
    p.seconds = std::numeric_limits<double>::infinity(); // N episodes asked: all of them
  }
  return p;
}

} // namespace

PartitionSetup preparePartition(const PartitionOptions& o) {
  std::optional<Strategy> strategy;
  if (!o.strategy.empty()) strategy = parseStrategy(readFile(o.strategy), o.strategy);
  Mesh mesh = meshFromFlags(o, strategy ? strategy->mesh : std::nullopt);
  return {std::move(mesh), std::move(strategy), searchParams(o)};
}

Partitioned partitionProgram(const Function& f, const PartitionOptions& o,
                             const PartitionSetup& setup, const Target& target,
                             const std::function<void(const std::string&)>& log) {
  const Mesh& mesh = setup.mesh;
  const std::optional<Strategy>& strategy = setup.strategy;
  log("mesh " + mesh.str() + " (" + std::to_string(mesh.numDevices()) + " devices)");
  Partitioned p{ShardingPlan(mesh), {}, {}};
  if (strategy) {
    applyStrategy(*strategy, f, p.plan, o.strategy);
    log("strategy " + o.strategy + ": " + std::to_string(strategy->entries.size()) +
        " arguments fixed");
  }
  if (o.autoPartition) {
    auto model = makeAnalyticCostModel(target);
    char params[160];
    std::snprintf(params, sizeof params,
                  "search parameters: exploration %g, rollout continue %g, %lld plans re-scored",
                  setup.search.exploration, setup.search.rolloutContinue,
                  static_cast<long long>(setup.search.rescored));
    log(params);
    SearchParams search = setup.search;
    search.headAware = o.headAware;
    SearchResult r = searchPartition(f, p.plan, *model, search);
    for (const std::string& line : r.reportLines())
      log(line);
    p.searchJson = searchResultJson(r);
    p.plan = std::move(r.plan);
  }
  if (o.dataParallel || o.tensorParallel == "batch") {
    applyDataParallel(f, p.plan, "data");
    log("tactic data-parallel: inputs split by batch over `data`, parameters replicated");
  }
  if (o.shardOptimizerState) {
    if (!mesh.axisIndex("data"))
      throw Error("--shard-optimizer-state shards over the `data` axis, which the mesh " +
                  mesh.str() + " lacks");
    applyOptimizerStateSharding(f, p.plan, "data");
    log("tactic optimizer-state sharding over `data`");
  }
  if (o.tensorParallel == "weight") {
    std::vector<TacticDecision> decisions = megatronDecisions(f, p.plan, "model");
    // Nothing split would run the same program on every chip: a mistake, not a plan.
    if (decisions.empty())
      throw Error("--tensor-parallel weight over " + std::to_string(mesh.axisSize("model")) +
                  " chips: no column/row matmul pair of the model has feature dimensions that " +
                  "divide by " + std::to_string(mesh.axisSize("model")) +
                  ", so nothing would be split; choose --n-chips dividing the hidden sizes " +
                  "(and head counts)");
    applyDecisions(p.plan, decisions, "tensor-parallel weight");
    log("tactic tensor-parallel weight over `model`: " + std::to_string(decisions.size()) +
        " weights split");
  }
  if (o.dataParallel || !o.tensorParallel.empty()) replicateUnfixedParameters(f, p.plan);
  propagateShardings(f, p.plan);
  p.program = lowerToSpmd(f, p.plan);
  return p;
}

} // namespace shardc
