#include "shardc/search/Search.h"

#include <nlohmann/json.hpp>

namespace shardc {

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
