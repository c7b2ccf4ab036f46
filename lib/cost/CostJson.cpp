#include "shardc/cost/CostModel.h"

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
  j["memory"] = {{"parameters", r.memory.parameters},  {"optimizer_state", r.memory.optimizerState},
                 {"inputs", r.memory.inputs},          {"activations", r.memory.activations},
                 {"kept_activations", r.memory.kept},  {"peak_bytes", r.memory.peak()},
                 {"capacity_bytes", r.memoryCapacity}, {"fits", r.fits()}};
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

} // namespace shardc
