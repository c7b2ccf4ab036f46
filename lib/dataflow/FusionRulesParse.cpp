// Reading fusion rules files: every mistake named with file:line.
#include "BuiltinRules.h"

#include "shardc/dataflow/FusionRules.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/support/Yaml.h"

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>

namespace shardc {
namespace {

constexpr size_t kMaxOptional = 6; // variants grow as 2^optional nodes

class RulesReader {
public:
  explicit RulesReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const {
    YAML::Mark m = at.Mark();
    throw Error(file_ + (m.is_null() ? "" : ":" + std::to_string(m.line + 1)) + ": " + message);
  }

  // The entries of map `n` in file order; duplicate keys and keys outside `known` refused.
  std::vector<std::pair<std::string, YAML::Node>>
  entries(const YAML::Node& n, const std::string& what, const std::set<std::string>& known) const {
    if (!n.IsMap()) fail(n, what + " must be a map");
    std::vector<std::pair<std::string, YAML::Node>> out;
    std::set<std::string> seen;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar() || kv.first.Scalar().empty())
        fail(kv.first, "keys of " + what + " must be plain names");
      std::string key = kv.first.Scalar();
      if (!known.empty() && !known.count(key)) {
        std::string list;
        for (const auto& k : known)
          list += (list.empty() ? "" : ", ") + k;
        fail(kv.first, "unknown field '" + key + "' in " + what + " (fields: " + list + ")");
      }
      if (!seen.insert(key).second) fail(kv.first, "'" + key + "' is given twice in " + what);
      out.emplace_back(key, kv.second);
    }
    return out;
  }

  std::string word(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar() || n.Scalar().empty()) fail(n, what + " must be a name");
    return n.Scalar();
  }

  bool flag(const YAML::Node& n, const std::string& what) const {
    try {
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      fail(n, what + " must be true or false");
    }
  }

  int64_t count(const YAML::Node& n, const std::string& what, int64_t min) const {
    int64_t v = 0;
    try {
      v = n.as<int64_t>();
    } catch (const YAML::Exception&) {
      fail(n, what + " must be an integer, got '" + (n.IsScalar() ? n.Scalar() : "a map") + "'");
    }
    if (v < min) fail(n, what + " must be at least " + std::to_string(min));
    return v;
  }

  std::vector<std::string> names(const YAML::Node& n, const std::string& what) const {
    std::vector<std::string> out;
    if (n.IsSequence()) {
      if (n.size() == 0) fail(n, what + " must not be empty");
      for (const auto& e : n)
        out.push_back(word(e, what));
    } else {
      out.push_back(word(n, what));
    }
    return out;
  }

  void heuristic(const YAML::Node& n, FusionRules::Rule& r) const {
    const std::string what = "the heuristic of rule '" + r.name + "'";
    std::map<std::string, YAML::Node> params;
    if (n.IsMap()) {
      for (auto& [k, v] : entries(n, what, {"name", "limit"}))
        params[k] = v;
      if (!params.count("name")) fail(n, what + " needs a name");
      r.heuristic = word(params["name"], what);
    } else {
      r.heuristic = word(n, what);
    }
    if (r.heuristic == "single_consumer") {
      if (params.count("limit")) fail(params["limit"], "single_consumer takes no parameters");
    } else if (r.heuristic == "max_elements") {
      if (!params.count("limit"))
        fail(n, "max_elements needs a limit: {name: max_elements, limit: N}");
      r.limit = count(params["limit"], "the limit of max_elements", 1);
    } else {
      fail(n,
           "unknown heuristic '" + r.heuristic + "' (heuristics: single_consumer, max_elements)");
    }
  }

  void run(const YAML::Node& n, FusionRules::Rule& r) const {
    const std::string what = "the run of rule '" + r.name + "'";
    bool typed = false;
    for (auto& [k, v] : entries(n, what, {"op_type", "max_ops"})) {
      if (k == "max_ops") r.maxOps = count(v, "max_ops of " + what, 2);
      if (k != "op_type") continue;
      r.runOps = names(v, "op_type of " + what);
      typed = true;
      for (const std::string& op : r.runOps)
        if (!OpRegistry::get().lookup(op))
          fail(v, "unknown op '" + op + "' in " + what + " (shardc-opt --list-ops lists them)");
    }
    if (!typed) fail(n, what + " has no op_type");
  }

  FusionRules::Rule rule(const std::string& name, const YAML::Node& n) const {
    FusionRules::Rule r;
    r.name = name;
    r.line = n.Mark().line + 1;
    const std::string what = "rule '" + name + "'";
    YAML::Node pattern, runAt, heuristicAt;
    bool hasPattern = false, hasRun = false;
    for (auto& [k, v] : entries(n, what, {"priority", "heuristic", "pattern", "run"})) {
      if (k == "priority") r.priority = count(v, "the priority of " + what, 0);
      if (k == "heuristic") heuristic(v, r), heuristicAt = v;
      if (k == "pattern") pattern = v, hasPattern = true;
      if (k == "run") runAt = v, hasRun = true;
    }
    if (hasPattern && hasRun) fail(runAt, what + " has both a pattern and a run; give one");
    if (hasRun) {
      if (!r.heuristic.empty()) fail(heuristicAt, what + " is a run, which takes no heuristic");
      run(runAt, r);
      return r;
    }
    if (!hasPattern) fail(n, what + " has no pattern (or run)");
    std::map<std::string, size_t> index;
    std::vector<std::pair<std::vector<std::string>, YAML::Node>> links;
    for (auto& [nodeName, v] : entries(pattern, "the pattern of " + what, {})) {
      FusionRules::Node node;
      node.name = nodeName;
      node.line = v.Mark().line + 1;
      const std::string where = "node '" + nodeName + "' of " + what;
      std::vector<std::string> kids;
      YAML::Node kidsAt;
      bool linked = false;
      for (auto& [k, f] :
           entries(v, where, {"op_type", "child", "children", "required", "included"})) {
        if (k == "op_type") node.opTypes = names(f, "op_type of " + where);
        if (k == "required") node.required = flag(f, "required of " + where);
        if (k == "included") node.included = flag(f, "included of " + where);
        if (k == "child" || k == "children") {
          if (linked) fail(f, where + " has both child and children");
          kids = names(f, k + " of " + where);
          kidsAt = f;
          linked = true;
        }
      }
      if (node.opTypes.empty()) fail(v, where + " has no op_type");
      for (const std::string& op : node.opTypes)
        if (!OpRegistry::get().lookup(op))
          fail(v, "unknown op '" + op + "' in " + where + " (shardc-opt --list-ops lists them)");
      if (!node.required && !node.included)
        fail(v, where + " is both optional and context; a context node must be required");
      index[nodeName] = r.nodes.size();
      r.nodes.push_back(std::move(node));
      links.emplace_back(std::move(kids), kidsAt);
    }
    if (r.nodes.empty()) fail(pattern, "the pattern of " + what + " has no nodes");
    // A tree: links name known nodes, no node is linked twice, and n - 1 links connect all.
    size_t edges = 0;
    std::set<std::pair<size_t, size_t>> seen;
    std::vector<std::vector<size_t>> adj(r.nodes.size());
    for (size_t i = 0; i < r.nodes.size(); ++i)
      for (const std::string& kid : links[i].first) {
        auto it = index.find(kid);
        if (it == index.end())
          fail(links[i].second, "node '" + r.nodes[i].name + "' of " + what + " links to '" + kid +
                                    "', which is not a node of the pattern");
        size_t j = it->second;
        if (j == i) fail(links[i].second, "node '" + kid + "' of " + what + " links to itself");
        if (!seen.insert({std::min(i, j), std::max(i, j)}).second)
          fail(links[i].second, "nodes '" + r.nodes[i].name + "' and '" + kid + "' of " + what +
                                    " are linked twice: the pattern must be a tree");
        r.nodes[i].children.push_back(j);
        adj[i].push_back(j);
        adj[j].push_back(i);
        ++edges;
      }
    std::vector<bool> reached(r.nodes.size(), false);
    std::vector<size_t> work{0};
    reached[0] = true;
    while (!work.empty()) {
      size_t x = work.back();
      work.pop_back();
      for (size_t y : adj[x])
        if (!reached[y]) reached[y] = true, work.push_back(y);
    }
    for (size_t i = 0; i < r.nodes.size(); ++i)
      if (!reached[i])
        fail(pattern, "the pattern of " + what + " is not connected: node '" + r.nodes[i].name +
                          "' is linked to no other");
    if (edges + 1 != r.nodes.size())
      fail(pattern, "the pattern of " + what + " has a cycle: it must be a tree");
    size_t optional = 0, anchors = 0;
    for (size_t i = 0; i < r.nodes.size(); ++i) {
      const FusionRules::Node& nd = r.nodes[i];
      anchors += nd.required && nd.included;
      if (nd.required) continue;
      ++optional;
      size_t parents = adj[i].size() - nd.children.size();
      if (adj[i].size() > 2 || (adj[i].size() == 2 && parents != 1))
        fail(pattern, "optional node '" + nd.name + "' of " + what +
                          " must sit on a chain (one link in, one out) or be a leaf");
    }
    if (optional > kMaxOptional)
      fail(pattern, what + " has " + std::to_string(optional) + " optional nodes; at most " +
                        std::to_string(kMaxOptional));
    if (anchors == 0) fail(pattern, what + " needs a node that is required and included");
    return r;
  }

private:
  std::string file_;
};

} // namespace

FusionRules FusionRules::parse(const std::string& text, const std::string& file) {
  RulesReader reader(file);
  YAML::Node root = loadOneYamlDocument(text, file, "a rules file");
  FusionRules rules;
  rules.file_ = file;
  if (!root || root.IsNull()) throw Error(file + ": the rules file holds no rules");
  for (auto& [name, n] : reader.entries(root, "a rules file", {}))
    rules.rules_.push_back(reader.rule(name, n));
  return rules;
}

const std::string& FusionRules::defaultsText() {
  static const std::string text(kDefaultRules);
  return text;
}

const FusionRules& FusionRules::defaults() {
  static const FusionRules rules = parse(defaultsText(), "rules/default.yaml");
  return rules;
}

const FusionRules& FusionRules::nlp() {
  static const FusionRules rules = [] {
    FusionRules r = parse(kNlpRules, "rules/nlp.yaml");
    for (const Rule& rule : defaults().rules_)
      r.rules_.push_back(rule);
    r.file_ = "rules/nlp.yaml + rules/default.yaml";
    return r;
  }();
  return rules;
}

} // namespace shardc
