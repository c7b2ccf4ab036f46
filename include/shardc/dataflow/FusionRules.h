// Fusion rules for -o1 (--optimization-rules FILE.yaml), in the style of the seed compiler's
// files. A file is a map of rules:
//
//   linear_bias_act:               # the rule's name
//     priority: 10                 # an integer >= 0; higher wins where matches overlap
//     heuristic: single_consumer   # optional: NAME, or {name: NAME, PARAM: VALUE...}
//     pattern:                     # named nodes forming a tree
//       mm:   {op_type: matmul, child: bias}
//       bias: {op_type: add, child: act}
//       act:  {op_type: [relu, gelu, tanh], required: false}
//
// A node has `op_type` (a shardc op, or a list of alternatives), links to the nodes that read
// its result (`child: NAME` or `children: [NAME, ...]`), and may be optional (`required:
// false`: matched when present, skipped otherwise; it must sit on a chain, one link in and one
// out, or be a leaf) or context (`included: false`: it must match, but stays outside the
// section). Heuristics: `single_consumer` (no op outside the match reads a value the match
// makes, other than its last node's) and `max_elements` with `limit: N` (no result of the match
// holds more than N elements).
//
// A rule may take a run instead of a pattern, for the work between two big kernels that a
// library fuses (a layer norm's backward pass, a softmax with its scale and mask):
//
//   pointwise:
//     priority: 0
//     run: {op_type: [add, mul, softmax, reduce_sum], max_ops: 32}
//
// A run is consecutive ops in program order, each one of `op_type`, in one phase, not taken by
// a rule of higher priority; each run of two ops or more becomes a section, cut every `max_ops`
// ops (optional). Consecutive ops form a convex group, whatever the data flow between them.
//
// A match becomes one section. Ops each belong to one section: rules are tried by priority
// (then file order), anchors in program order, larger variants (optional nodes present)
// first; a match whose ops span phases, or that some path leaves and re-enters, is not taken.
#pragma once

#include "shardc/dataflow/Sections.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shardc {
class Function;

struct FusionMatch {
  std::string rule;
  std::vector<int64_t> ops; // the included ops, program order
};

class FusionRules {
public:
  struct Node {
    std::string name;
    std::vector<std::string> opTypes;
    std::vector<size_t> children; // node indices
    bool required = true, included = true;
    int line = 0;
  };
  struct Rule {
    std::string name;
    int64_t priority = 0;
    std::string heuristic; // "" none
    int64_t limit = 0;     // max_elements
    std::vector<Node> nodes;
    std::vector<std::string> runOps; // a run rule's op types (then `nodes` is empty)
    int64_t maxOps = 0;              // a run's largest section; 0: no limit
    int line = 0;
  };

  // Throws shardc::Error naming `file`:line and what is wrong: a duplicate key, an unknown op or
  // field, a pattern that is not a tree, a bad priority, an unknown heuristic.
  static FusionRules parse(const std::string& text, const std::string& file);
  // shardc's default rules (rules/default.yaml, compiled in).
  static const FusionRules& defaults();
  static const std::string& defaultsText();
  // --compiler-mode nlp's rules at -o1: rules/nlp.yaml's transformer blocks, then the
  // default rules.
  static const FusionRules& nlp();

  const std::vector<Rule>& rules() const { return rules_; }
  const std::string& file() const { return file_; }

  // Non-overlapping matches over `f` (phases: opPhases(f)). `log` gets one line per rule: how
  // many times it matched and where.
  std::vector<FusionMatch> match(const Function& f, const std::vector<Phase>& phases,
                                 const SectionLog& log) const;

private:
  std::string file_;
  std::vector<Rule> rules_;
};

} // namespace shardc
