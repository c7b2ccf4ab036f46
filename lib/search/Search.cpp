#include "shardc/search/Search.h"

#include "Baselines.h"
#include "TreeSearch.h"

#include "shardc/cost/CostModel.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"

#include <cstdio>
#include <functional>

namespace shardc {
namespace {

struct Enumerated {
  std::optional<SearchState> best;
  PlanCost cost;
};

// Every complete plan of the space, depth first.
Enumerated enumerate(const SearchSpace& space, const SearchState& root, PlanEvaluator& ev) {
  Enumerated e;
  std::function<void(const SearchState&)> visit = [&](const SearchState& s) {
    if (!s.terminal()) {
      for (const Action& a : space.actions(s))
        visit(space.apply(s, a));
      return;
    }
    PlanCost c = ev.evaluate(s.plan, s.propagated);
    if (c.feasible && (!e.best || c.stepSeconds < e.cost.stepSeconds)) e.best = s, e.cost = c;
  };
  visit(root);
  return e;
}

bool cheaper(const PlanCost& c, const SearchResult& r) {
  return c.feasible && (!r.cost.feasible || c.stepSeconds < r.cost.stepSeconds);
}

} // namespace

std::vector<std::string> SearchResult::reportLines() const {
  std::vector<std::string> out;
  size_t args = 0;
  for (const ArgumentGroup& g : groups)
    args += g.args.size();
  out.push_back("auto-partition: " + std::to_string(args) + " open arguments in " +
                std::to_string(groups.size()) + " structural groups");
  for (size_t i = 0; i < groups.size(); ++i) {
    std::string names;
    for (const Value* v : groups[i].args)
      names += (names.empty() ? "" : ", ") + v->name();
    out.push_back("  group " + std::to_string(i) + ": " + names);
  }
  for (const BaselineCost& b : baselines)
    out.push_back("  baseline " + b.name + ": " + b.cost.str());
  out.push_back(exhaustive ? "  exhaustive optimum: " +
                                 (exhaustive->feasible ? exhaustive->str() : "none feasible")
                           : "  exhaustive: not run (space too large)");
  out.push_back("  search: " + std::to_string(episodes) + " episodes, " +
                std::to_string(evaluations) + " plans evaluated, best " +
                (searchCost.feasible ? searchCost.str() : "none feasible"));
  for (size_t i = 0; i < decisions.size(); ++i)
    out.push_back("  decision " + std::to_string(i + 1) + ": " + decisions[i]);
  for (const std::string& split : searchSplits)
    out.push_back("  search plan splits " + split);
  out.push_back("auto-partition chose " + source + ": " + cost.str());
  return out;
}

SearchResult searchPartition(const Function& f, const ShardingPlan& fixed, const CostModel& model,
                             const SearchParams& params) {
  SearchResult r;
  r.groups = groupArguments(f, fixed, params.signatureDepth);
  SearchSpace space(f, r.groups);
  PlanEvaluator evaluator(f, model);
  std::vector<Baseline> baselines;
  if (params.baselines) baselines = evaluateBaselines(f, fixed, evaluator);
  double reference = 0;
  for (const Baseline& b : baselines) {
    r.baselines.push_back(b.cost);
    const PlanCost& c = b.cost.cost;
    if (c.feasible && (reference <= 0 || c.stepSeconds < reference)) reference = c.stepSeconds;
  }

  SearchState root = space.root(fixed);
  TreeSearchResult tree = runTreeSearch(space, root, evaluator, params, reference);
  r.episodes = tree.episodes;
  r.searchCost = tree.cost;
  r.plan = fixed;
  if (tree.best) {
    r.plan = tree.best->plan;
    r.cost = tree.cost;
    r.source = "search";
    r.decisions = tree.best->decisions;
    for (size_t i = 0; i < f.numArguments(); ++i) {
      const Value* a = f.argument(i);
      TensorSharding split = tree.best->propagated.shardingOf(a);
      if (!split.isReplicated()) r.searchSplits.push_back(a->name() + ": " + split.str());
    }
  }
  if (space.leafBound(fixed, params.exhaustiveLimit) <= params.exhaustiveLimit) {
    Enumerated e = enumerate(space, root, evaluator);
    r.exhaustive = e.cost;
    if (e.best && cheaper(e.cost, r))
      r.plan = e.best->plan, r.cost = e.cost, r.source = "exhaustive";
  }
  for (Baseline& b : baselines)
    if (cheaper(b.cost.cost, r))
      r.plan = std::move(b.plan), r.cost = b.cost.cost, r.source = "baseline " + b.cost.name;
  r.evaluations = evaluator.evaluations();
  if (!r.cost.feasible) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "no plan found fits in memory: the smallest needs %.3g MB per device, the "
                  "target %s has %.3g MB; use a larger mesh or a smaller batch",
                  static_cast<double>(evaluator.smallestPeak()) / 1e6, model.target().name.c_str(),
                  model.target().memoryCapacity / 1e6);
    throw Error(buf);
  }
  return r;
}

} // namespace shardc
