// Matching fusion rules on a program: tree patterns over the data flow, by backtracking, and
// runs of consecutive ops.
#include "SectionUtil.h"

#include "shardc/dataflow/FusionRules.h"
#include "shardc/ir/IR.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace shardc {
namespace {

// A rule with some optional nodes skipped: the nodes kept, and its links (parent, child)
// where a skipped node on a chain joins its parent to its child.
struct Variant {
  std::vector<size_t> nodes;
  std::vector<std::pair<size_t, size_t>> links;
};

std::vector<Variant> variantsOf(const FusionRules::Rule& r) {
  std::vector<size_t> optional;
  for (size_t i = 0; i < r.nodes.size(); ++i)
    if (!r.nodes[i].required) optional.push_back(i);
  std::vector<Variant> out;
  for (uint32_t skip = 0; skip < (1u << optional.size()); ++skip) {
    std::vector<bool> gone(r.nodes.size(), false);
    for (size_t b = 0; b < optional.size(); ++b)
      if (skip & (1u << b)) gone[optional[b]] = true;
    Variant v;
    for (size_t i = 0; i < r.nodes.size(); ++i)
      if (!gone[i]) v.nodes.push_back(i);
    // Follow each kept node's links through skipped nodes (each has at most one child).
    for (size_t i : v.nodes)
      for (size_t c : r.nodes[i].children) {
        while (gone[c] && !r.nodes[c].children.empty())
          c = r.nodes[c].children[0];
        if (!gone[c]) v.links.emplace_back(i, c);
      }
    out.push_back(std::move(v));
  }
  // Larger variants first: an optional node is matched when it is there.
  std::stable_sort(out.begin(), out.end(), [](const Variant& a, const Variant& b) {
    return a.nodes.size() > b.nodes.size();
  });
  return out;
}

class Matcher {
public:
  Matcher(const Function& f, const std::vector<Phase>& phases) : phases_(phases) {
    for (const auto& op : f.ops()) {
      index_[op.get()] = static_cast<int64_t>(ops_.size());
      ops_.push_back(op.get());
    }
    taken_.assign(ops_.size(), false);
    for (const auto& r : f.results())
      results_.insert(r.value);
  }

  std::vector<int64_t> tryRule(const FusionRules::Rule& r, const Variant& v, int64_t anchorOp) {
    rule_ = &r;
    // Visit order: breadth first from the anchor, each node linked to one visited before.
    size_t anchor = v.nodes.size();
    for (size_t k = 0; k < v.nodes.size(); ++k)
      if (r.nodes[v.nodes[k]].required && r.nodes[v.nodes[k]].included) {
        anchor = v.nodes[k];
        break;
      }
    order_.assign(1, {anchor, anchor, false});
    std::vector<bool> visited(r.nodes.size(), false);
    visited[anchor] = true;
    for (size_t q = 0; q < order_.size(); ++q)
      for (auto [p, c] : v.links) {
        size_t at = order_[q].node;
        if (p == at && !visited[c]) visited[c] = true, order_.push_back({c, at, true});
        if (c == at && !visited[p]) visited[p] = true, order_.push_back({p, at, false});
      }
    assigned_.assign(r.nodes.size(), -1);
    if (!fits(anchor, anchorOp)) return {};
    assigned_[anchor] = anchorOp;
    if (!extend(1)) return {};
    std::vector<int64_t> included;
    for (size_t k : v.nodes)
      if (r.nodes[k].included) included.push_back(assigned_[k]);
    std::sort(included.begin(), included.end());
    if (!heuristicHolds(r, included) || !isConvex(index_, included, ops_)) return {};
    for (int64_t i : included)
      taken_[static_cast<size_t>(i)] = true;
    return included;
  }

  // A run rule's groups: runs of consecutive free ops of its types in one phase, cut every
  // maxOps; runs of one op are left alone.
  std::vector<std::vector<int64_t>> takeRuns(const FusionRules::Rule& r) {
    std::vector<std::vector<int64_t>> out;
    std::vector<int64_t> run;
    auto close = [&] {
      if (run.size() >= 2) {
        for (int64_t i : run)
          taken_[static_cast<size_t>(i)] = true;
        out.push_back(run);
      }
      run.clear();
    };
    for (int64_t i = 0; i < static_cast<int64_t>(ops_.size()); ++i) {
      const std::string& name = ops_[static_cast<size_t>(i)]->name();
      bool free = !taken_[static_cast<size_t>(i)] &&
                  std::find(r.runOps.begin(), r.runOps.end(), name) != r.runOps.end();
      if (!free || (!run.empty() &&
                    (phases_[static_cast<size_t>(i)] != phases_[static_cast<size_t>(run[0])] ||
                     static_cast<int64_t>(run.size()) == r.maxOps)))
        close();
      if (free) run.push_back(i);
    }
    close();
    return out;
  }

  const Op& op(int64_t i) const { return *ops_[static_cast<size_t>(i)]; }
  size_t numOps() const { return ops_.size(); }

private:
  struct Step {
    size_t node, linkedTo;
    bool isChild; // node reads linkedTo's result (else linkedTo reads node's)
  };

  bool fits(size_t node, int64_t i) const {
    const FusionRules::Node& n = rule_->nodes[node];
    const Op& o = *ops_[static_cast<size_t>(i)];
    if (std::find(n.opTypes.begin(), n.opTypes.end(), o.name()) == n.opTypes.end()) return false;
    if (std::find(assigned_.begin(), assigned_.end(), i) != assigned_.end()) return false;
    if (!n.included) return true;
    int64_t anchor = assigned_[order_[0].node];
    if (taken_[static_cast<size_t>(i)]) return false;
    return anchor < 0 || phases_[static_cast<size_t>(i)] == phases_[static_cast<size_t>(anchor)];
  }

  bool extend(size_t k) {
    if (k == order_.size()) return true;
    const Step& s = order_[k];
    const Op& linked = *ops_[static_cast<size_t>(assigned_[s.linkedTo])];
    std::vector<int64_t> candidates;
    if (s.isChild) {
      for (size_t r = 0; r < linked.numResults(); ++r)
        for (const Use& u : linked.result(r)->uses())
          if (u.user) candidates.push_back(index_.at(u.user));
    } else {
      for (const Value* v : linked.operands())
        if (v->definingOp()) candidates.push_back(index_.at(v->definingOp()));
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (int64_t c : candidates) {
      if (!fits(s.node, c)) continue;
      assigned_[s.node] = c;
      if (extend(k + 1)) return true;
      assigned_[s.node] = -1;
    }
    return false;
  }

  bool heuristicHolds(const FusionRules::Rule& r, const std::vector<int64_t>& included) const {
    if (r.heuristic.empty()) return true;
    std::unordered_set<int64_t> in(included.begin(), included.end());
    for (int64_t i : included) {
      const Op& o = *ops_[static_cast<size_t>(i)];
      for (size_t k = 0; k < o.numResults(); ++k) {
        const Value* v = o.result(k);
        if (r.heuristic == "max_elements" && v->type().numel() > r.limit) return false;
        bool outside = results_.count(v) > 0;
        for (const Use& u : v->uses())
          outside = outside || !u.user || !in.count(index_.at(u.user));
        if (r.heuristic == "single_consumer" && outside && i != included.back()) return false;
      }
    }
    return true;
  }

  const std::vector<Phase>& phases_;
  std::vector<const Op*> ops_;
  std::unordered_map<const Op*, int64_t> index_;
  std::unordered_set<const Value*> results_;
  std::vector<bool> taken_;
  const FusionRules::Rule* rule_ = nullptr;
  std::vector<Step> order_;
  std::vector<int64_t> assigned_;
};

} // namespace

std::vector<FusionMatch> FusionRules::match(const Function& f, const std::vector<Phase>& phases,
                                            const SectionLog& log) const {
  std::vector<size_t> byPriority(rules_.size());
  for (size_t i = 0; i < rules_.size(); ++i)
    byPriority[i] = i;
  std::stable_sort(byPriority.begin(), byPriority.end(),
                   [&](size_t a, size_t b) { return rules_[a].priority > rules_[b].priority; });
  Matcher m(f, phases);
  std::vector<FusionMatch> out;
  for (size_t ri : byPriority) {
    const Rule& r = rules_[ri];
    std::vector<std::string> where;
    int64_t count = 0;
    auto found = [&](int64_t anchor, std::vector<int64_t> ops) {
      ++count;
      const Op& a = m.op(anchor);
      if (where.size() < 6)
        where.push_back(a.numResults() && !a.result(0)->name().empty()
                            ? "%" + a.result(0)->name()
                            : "op " + std::to_string(anchor));
      out.push_back({r.name, std::move(ops)});
    };
    if (!r.runOps.empty()) {
      for (std::vector<int64_t>& ops : m.takeRuns(r)) {
        int64_t first = ops[0];
        found(first, std::move(ops));
      }
    } else {
      std::vector<Variant> variants = variantsOf(r);
      for (int64_t i = 0; i < static_cast<int64_t>(m.numOps()); ++i)
        for (const Variant& v : variants) {
          std::vector<int64_t> ops = m.tryRule(r, v, i);
          if (ops.empty()) continue;
          found(i, std::move(ops));
          break;
        }
    }
    if (!log) continue;
    std::string line = "rule '" + r.name + "' (priority " + std::to_string(r.priority) +
                       "): " + std::to_string(count) + (count == 1 ? " match" : " matches");
    for (size_t k = 0; k < where.size(); ++k)
      line += (k ? ", " : " at ") + where[k];
    if (count > static_cast<int64_t>(where.size())) line += ", ...";
    log(line);
  }
  return out;
}

} // namespace shardc
