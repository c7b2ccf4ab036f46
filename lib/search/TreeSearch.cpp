#include "TreeSearch.h"

#include "shardc/support/Interrupt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

namespace shardc {
namespace {

struct Node {
  SearchState state;
  std::vector<Action> actions;
  std::vector<std::unique_ptr<Node>> children; // one per action, null until expanded
  int64_t visits = 0;
  double total = 0;
  bool done = false; // every plan below has been evaluated

  Node(const SearchSpace& space, SearchState s) : state(std::move(s)) {
    actions = space.actions(state);
    children.resize(actions.size());
    done = state.terminal();
  }
  void updateDone() {
    done = state.terminal();
    if (done) return;
    for (const auto& c : children)
      if (!c || !c->done) return;
    done = true;
  }
};

// The open child with the best UCT score; the first on ties, so a seed fixes the walk.
Node* selectChild(Node& n, double c) {
  Node* best = nullptr;
  double bestScore = -1;
  for (const auto& child : n.children) {
    if (child->done) continue;
    double score =
        child->total / static_cast<double>(child->visits) +
        c * std::sqrt(std::log(static_cast<double>(n.visits)) / static_cast<double>(child->visits));
    if (!best || score > bestScore) best = child.get(), bestScore = score;
  }
  return best;
}

} // namespace

void Leaderboard::offer(const std::string& key, const SearchState& s, const PlanCost& c) {
  if (!c.feasible) return;
  for (const Entry& e : entries_)
    if (e.key == key) return;
  auto at = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return c.stepSeconds < e.cost.stepSeconds; });
  if (static_cast<size_t>(at - entries_.begin()) >= capacity_) return;
  entries_.insert(at, {key, s, c});
  if (entries_.size() > capacity_) entries_.pop_back();
}

TreeSearchResult runTreeSearch(const SearchSpace& space, const SearchState& root,
                               PlanEvaluator& evaluator, const SearchParams& params,
                               double referenceSeconds, double seconds, bool needFit) {
  TreeSearchResult r{Leaderboard(static_cast<size_t>(params.rescored))};
  std::mt19937_64 rng(params.seed);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  Node top(space, root);
  while (r.episodes < params.episodes && elapsed() < seconds && !top.done) {
    throwIfInterrupted();
    std::vector<Node*> path{&top};
    Node* n = &top;
    // Descend while every action of the node has been tried.
    while (!n->state.terminal()) {
      std::vector<size_t> untried;
      for (size_t i = 0; i < n->children.size(); ++i)
        if (!n->children[i]) untried.push_back(i);
      if (!untried.empty()) {
        size_t i = untried[pick(untried.size())];
        n->children[i] = std::make_unique<Node>(space, space.apply(n->state, n->actions[i]));
        n = n->children[i].get();
        path.push_back(n);
        break;
      }
      n = selectChild(*n, params.exploration);
      path.push_back(n);
    }
    // Roll out a geometric number of random actions; propagation completes the rest (groups
    // it does not reach stay replicated), which is far cheaper than deciding every group.
    SearchState s = n->state;
    while (!s.terminal() &&
           std::uniform_real_distribution<double>(0, 1)(rng) < params.rolloutContinue) {
      std::vector<Action> actions = space.actions(s);
      s = space.apply(s, actions[pick(actions.size())]);
    }
    PlanCost c = evaluator.evaluateState(s.plan, s.propagated);
    if (!needFit) c.feasible = c.valid;
    if (c.feasible && referenceSeconds <= 0) referenceSeconds = c.stepSeconds;
    double reward = c.feasible ? referenceSeconds / c.stepSeconds : 0;
    r.best.offer(evaluator.key(s.plan), s, c);
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      (*it)->visits += 1;
      (*it)->total += reward;
      (*it)->updateDone();
    }
    ++r.episodes;
    if (params.progressEvery > 0 && r.episodes % params.progressEvery == 0)
      std::fprintf(stderr, "auto-partition: %lld episodes, %lld plans evaluated, best %s\n",
                   static_cast<long long>(r.episodes),
                   static_cast<long long>(evaluator.evaluations()),
                   r.best.entries().empty() ? "none feasible yet"
                                            : r.best.entries().front().cost.str().c_str());
  }
  return r;
}

} // namespace shardc
