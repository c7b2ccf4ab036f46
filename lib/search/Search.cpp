#include "shardc/search/Search.h"

#include "Baselines.h"
#include "TreeSearch.h"

#include "shardc/cost/CostModel.h"
#include "shardc/cost/Target.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"
#include "shardc/support/Interrupt.h"
#include "shardc/support/Stopwatch.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

namespace shardc {
namespace {

using Clock = std::chrono::steady_clock;

// Every complete plan of the space, depth first; the cheapest few (by the step-by-step
// propagation's cost, as in the tree search). nullopt when `deadline` passes first.
std::optional<Leaderboard> enumerate(const SearchSpace& space, const SearchState& root,
                                     PlanEvaluator& ev, Clock::time_point deadline,
                                     int64_t rescored) {
  Leaderboard best(static_cast<size_t>(rescored));
  bool late = false;
  std::function<void(const SearchState&)> visit = [&](const SearchState& s) {
    if (late || (late = Clock::now() > deadline)) return;
    throwIfInterrupted();
    if (!s.terminal()) {
      for (const Action& a : space.actions(s))
        visit(space.apply(s, a));
      return;
    }
    best.offer(ev.key(s.plan), s, ev.evaluateState(s.plan, s.propagated));
  };
  visit(root);
  if (late) return std::nullopt;
  return best;
}

// The candidates' plans propagated all at once, as the compile will: the cheapest of them.
// `needFit` false: plans over the memory capacity count too.
std::optional<Leaderboard::Entry> rescore(const Leaderboard& candidates, PlanEvaluator& ev,
                                          bool needFit = true) {
  std::optional<Leaderboard::Entry> best;
  for (const Leaderboard::Entry& e : candidates.entries()) {
    PlanCost c = ev.evaluate(e.state.plan);
    if ((needFit ? c.feasible : c.valid) && (!best || c.stepSeconds < best->cost.stepSeconds))
      best = Leaderboard::Entry{e.key, e.state, c};
  }
  return best;
}

// Why nothing fits, from the plan with the least peak memory, and what would: fewer
// activations (they grow with the batch, as long as every device still has samples of its
// own) if the state fits, else more devices. `smallerBatch`: whether a smaller batch may fit.
std::string doesNotFit(const Function& f, const MemoryCost& m, const Target& target,
                       const Mesh& mesh, bool& smallerBatch) {
  smallerBatch = false;
  if (m.peak() == 0)
    return "no plan found: the SPMD lowering refused every plan tried (see the log's "
           "baselines), so none could be checked against " +
           target.name + "'s memory";
  double capacity = target.memoryCapacity;
  double state = static_cast<double>(m.parameters + m.optimizerState + m.inputs);
  std::string msg = "no plan found fits in memory: the smallest needs " +
                    formatBytes(static_cast<double>(m.peak())) + " per device (parameters " +
                    formatBytes(static_cast<double>(m.parameters)) + ", optimizer state " +
                    formatBytes(static_cast<double>(m.optimizerState)) + ", inputs " +
                    formatBytes(static_cast<double>(m.inputs)) + ", activations " +
                    formatBytes(static_cast<double>(m.activations)) + "); the target " +
                    target.name + " has " + formatBytes(capacity) + ". ";
  if (state >= capacity)
    return msg + "Its parameters and optimizer state alone do not fit: use a mesh with more "
                 "devices";
  int64_t batch = 0;
  for (size_t i = 0; i < f.numArguments() && !batch; ++i)
    if (f.argument(i)->argKind() == ArgKind::Input && f.argument(i)->type().rank() > 0)
      batch = f.argument(i)->type().shape[0];
  if (m.activations == 0 || batch == 0) return msg + "Use a mesh with more devices";
  double scale = (capacity - state) / static_cast<double>(m.activations);
  auto fitting = static_cast<int64_t>(static_cast<double>(batch) * scale);
  int64_t onePerDevice = std::min(batch, mesh.numDevices());
  if (fitting < onePerDevice)
    return msg + "Even a batch of " + std::to_string(onePerDevice) +
           " would not fit: use a mesh with more devices";
  smallerBatch = true;
  return msg + "Activations grow with the batch: a batch of about " + std::to_string(fitting) +
         " (now " + std::to_string(batch) + ") would fit, or use a mesh with more devices";
}

// One tree search per mesh axis, in mesh order, each continuing from the best plan of the one
// before: the first axis's decisions, then the second's on top (an argument may end up split
// over both). The budget is shared evenly. Only the last axis's plans must fit in memory (one
// axis alone seldom brings a big model under the capacity); an axis on which nothing valid is
// found is skipped.
std::optional<Leaderboard::Entry> searchAxisByAxis(const Function& f,
                                                   const std::vector<ArgumentGroup>& groups,
                                                   const ShardingPlan& fixed, PlanEvaluator& ev,
                                                   const SearchParams& params, double reference,
                                                   double seconds, int64_t& episodes) {
  auto start = Clock::now();
  std::vector<std::string> axes;
  for (const MeshAxis& a : fixed.mesh().axes())
    if (a.size > 1) axes.push_back(a.name);
  std::optional<Leaderboard::Entry> best;
  ShardingPlan plan = fixed;
  std::vector<std::string> decisions;
  for (size_t i = 0; i < axes.size(); ++i) {
    SearchSpace space(f, groups, ev.propagator(), ev.times().propagation, params.headAware,
                      std::vector<std::string>{axes[i]});
    SearchState root = space.root(plan, decisions);
    ev.newStage();
    SearchParams stage = params;
    stage.episodes = std::max<int64_t>(1, params.episodes / static_cast<int64_t>(axes.size()));
    double left = seconds - std::chrono::duration<double>(Clock::now() - start).count();
    bool last = i + 1 == axes.size();
    TreeSearchResult tree = runTreeSearch(space, root, ev, stage, reference,
                                          left / static_cast<double>(axes.size() - i), last);
    episodes += tree.episodes;
    if (std::optional<Leaderboard::Entry> b = rescore(tree.best, ev, last)) {
      plan = b->state.plan;
      decisions = b->state.decisions;
      if (b->cost.feasible && (!best || b->cost.stepSeconds < best->cost.stepSeconds))
        best = std::move(b);
    }
  }
  return best;
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
  out.push_back(planSpace > kPlanSpaceCap
                    ? "  plan space: more than 1e12 complete plans"
                    : "  plan space: " + std::to_string(planSpace) + " complete plans");
  for (const std::string& h : headGroups)
    out.push_back("  head-aware: " + h + ", split only between whole heads");
  for (const BaselineCost& b : baselines)
    out.push_back("  baseline " + b.name + ": " + b.cost.str());
  out.push_back(
      exhaustive
          ? "  exhaustive optimum: " + (exhaustive->feasible ? exhaustive->str() : "none feasible")
          : "  exhaustive: not run (more plans than the enumeration limit, or no time left)");
  out.push_back("  search: " + std::to_string(episodes) + " episodes, " +
                std::to_string(evaluations) + " plans evaluated, best " +
                (searchCost.feasible ? searchCost.str() : "none feasible"));
  for (size_t i = 0; i < decisions.size(); ++i)
    out.push_back("  decision " + std::to_string(i + 1) + ": " + decisions[i]);
  for (const std::string& split : searchSplits)
    out.push_back("  search plan splits " + split);
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "  time %.2f s: baselines %.2f s; search propagation %.2f s, lowering %.2f s, "
                "cost model %.2f s",
                times.total, times.baselines, times.propagation, times.lowering, times.costModel);
  out.push_back(buf);
  out.push_back("auto-partition chose " + source + ": " + cost.str());
  return out;
}

SearchResult searchPartition(const Function& f, const ShardingPlan& fixed, const CostModel& model,
                             const SearchParams& params) {
  SearchResult r;
  auto start = Clock::now();
  Stopwatch total(r.times.total);
  r.groups = groupArguments(f, fixed, params.signatureDepth);
  PlanEvaluator evaluator(f, model, params);
  SearchSpace space(f, r.groups, evaluator.propagator(), evaluator.times().propagation,
                    params.headAware);
  for (size_t g = 0; g < r.groups.size() && params.headAware; ++g)
    if (HeadSplit h = attentionHeads(r.groups[g].args.front()); h.heads)
      r.headGroups.push_back("group " + std::to_string(g) + ": dim " + std::to_string(h.dim) +
                             ", " + std::to_string(h.heads) + " heads" +
                             (h.pieces > 1 ? " per piece of " + std::to_string(h.pieces) : ""));
  std::vector<Baseline> baselines;
  if (params.baselines) {
    Stopwatch w(r.times.baselines);
    baselines = evaluateBaselines(f, fixed, evaluator);
  }
  evaluator.times() = {}; // from here on: the search's own
  double reference = 0;
  for (const Baseline& b : baselines) {
    r.baselines.push_back(b.cost);
    const PlanCost& c = b.cost.cost;
    if (c.feasible && (reference <= 0 || c.stepSeconds < reference)) reference = c.stepSeconds;
  }

  SearchState root = space.root(fixed);
  // What is left of the time budget, less the final scoring of the best few plans (about
  // one baseline's time each).
  double perPlan =
      baselines.empty() ? 0 : r.times.baselines / static_cast<double>(baselines.size());
  double treeSeconds =
      std::max(0.0, params.seconds - std::chrono::duration<double>(Clock::now() - start).count() -
                        static_cast<double>(params.rescored + 1) * perPlan);
  std::optional<Leaderboard::Entry> best;
  if (params.perAxis) {
    best =
        searchAxisByAxis(f, r.groups, fixed, evaluator, params, reference, treeSeconds, r.episodes);
  } else {
    TreeSearchResult tree = runTreeSearch(space, root, evaluator, params, reference, treeSeconds);
    r.episodes = tree.episodes;
    best = rescore(tree.best, evaluator);
  }
  r.plan = fixed;
  if (best) {
    r.plan = best->state.plan;
    r.cost = r.searchCost = best->cost;
    r.source = "search";
    r.decisions = best->state.decisions;
    ShardingPlan propagated = best->state.plan; // as the compile will propagate it
    evaluator.propagator().propagate(propagated);
    for (size_t i = 0; i < f.numArguments(); ++i) {
      const Value* a = f.argument(i);
      TensorSharding split = propagated.shardingOf(a);
      if (!split.isReplicated()) r.searchSplits.push_back(a->name() + ": " + split.str());
    }
  }
  r.planSpace = space.leafBound(fixed, SearchResult::kPlanSpaceCap);
  if (r.planSpace <= params.exhaustiveLimit) {
    auto deadline = params.seconds > 1e9
                        ? Clock::time_point::max()
                        : start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(params.seconds));
    std::optional<Leaderboard> all = enumerate(space, root, evaluator, deadline, params.rescored);
    std::optional<Leaderboard::Entry> e = all ? rescore(*all, evaluator) : std::nullopt;
    if (all) r.exhaustive = e ? e->cost : PlanCost{};
    if (e && cheaper(e->cost, r)) r.plan = e->state.plan, r.cost = e->cost, r.source = "exhaustive";
  }
  for (Baseline& b : baselines)
    if (cheaper(b.cost.cost, r))
      r.plan = std::move(b.plan), r.cost = b.cost.cost, r.source = "baseline " + b.cost.name;
  const SearchTimes& t = evaluator.times();
  r.times.propagation = t.propagation;
  r.times.lowering = t.lowering;
  r.times.costModel = t.costModel;
  r.evaluations = evaluator.evaluations();
  if (!r.cost.feasible) {
    bool smallerBatch;
    std::string why =
        doesNotFit(f, evaluator.smallest(), model.target(), fixed.mesh(), smallerBatch);
    if (evaluator.smallest().peak() == 0) throw Error(why); // nothing could be priced
    throw NoPlanFits(why, smallerBatch);
  }
  total.stop();
  return r;
}

} // namespace shardc
