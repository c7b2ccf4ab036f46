#include "CostJson.h"

#include <nlohmann/json.hpp>

namespace shardc {

std::string costReportJson(const CostReport& r) {
  nlohmann::json j;
  j["target"] = r.target;
  j["devices"] = r.devices;
  j["step_seconds"] = r.stepSeconds;
  j["compute_seconds"] = r.computeSeconds;
  j["communication_seconds"] = r.commSeconds;
  j["overlap_seconds"] = r.overlapSeconds;
  j["communication_by_kind"] = r.commByKind();
  j["compute_by_op"] = r.computeByOp;
  j["flops_per_device"] = r.flops;
  j["flop_utilization"] = r.flopUtilization;
  j["memory"] = {{"parameters", r.memory.parameters},
                 {"optimizer_state", r.memory.optimizerState},
                 {"inputs", r.memory.inputs},
                 {"activations", r.memory.activations},
                 {"peak_bytes", r.memory.peak()},
                 {"capacity_bytes", r.memoryCapacity},
                 {"fits", r.fits()}};
  j["collectives"] = nlohmann::json::array();
  for (const CollectiveCost& c : r.collectives)
    j["collectives"].push_back({{"kind", c.kind},
                                {"axes", c.axes},
                                {"group", c.group},
                                {"bytes", c.bytes},
                                {"seconds", c.seconds},
                                {"crosses_nodes", c.crossesNodes}});
  return j.dump();
}

namespace {
nlohmann::json planCostJson(const PlanCost& c) {
  return {{"valid", c.valid},
          {"feasible", c.feasible},
          {"step_seconds", c.stepSeconds},
          {"peak_bytes", c.peakBytes}};
}
} // namespace

std::string searchResultJson(const SearchResult& r) {
  nlohmann::json j;
  j["chosen"] = r.source;
  j["cost"] = planCostJson(r.cost);
  j["search_cost"] = planCostJson(r.searchCost);
  j["baselines"] = nlohmann::json::array();
  for (const BaselineCost& b : r.baselines) {
    nlohmann::json c = planCostJson(b.cost);
    c["name"] = b.name;
    j["baselines"].push_back(c);
  }
  if (r.exhaustive) j["exhaustive"] = planCostJson(*r.exhaustive);
  j["decisions"] = r.decisions;
  j["splits"] = r.searchSplits;
  j["groups"] = nlohmann::json::array();
  for (const ArgumentGroup& g : r.groups)
    j["groups"].push_back({{"name", g.str()}, {"arguments", g.args.size()}});
  j["episodes"] = r.episodes;
  j["evaluations"] = r.evaluations;
  j["plan_space"] = r.planSpace;
  j["seconds"] = r.times.total;
  return j.dump();
}

} // namespace shardc
