// What section formation knows of each op and value of a program, and the figures of a
// candidate section (a contiguous run of ops), grown one op at a time.
#pragma once

#include "shardc/dataflow/Sections.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace shardc {
class Function;
class Op;
struct Target;

// Views and constants: no arithmetic, no section resources, not worth a hypersection body.
bool computesNothing(const Op& op);

struct SectionFigures {
  int64_t computeUnits = 0, stages = 0; // stages: ops that compute
  int64_t onChipBytes = 0, inputBytes = 0, outputBytes = 0;
  double flopSeconds = 0, libraryOverhead = 0;
  std::vector<int64_t> inputs, outputs; // filled by ProgramFigures::measure only
};

class ProgramFigures {
public:
  ProgramFigures(const Function& f, const Target& t);

  std::vector<Phase> phase;   // per op
  std::vector<int64_t> units; // per op: compute units (0: computes nothing)

  bool communicates(int64_t op) const;
  bool callsFunction(int64_t op) const;
  std::string describeOp(int64_t op) const;
  SectionFigures measure(int64_t begin, int64_t end) const;
  double seconds(const Target& t, const SectionFigures& fig) const;

private:
  friend class SectionGrower;
  const Target& t_;
  std::vector<const Op*> ops_;
  std::vector<double> flopSeconds_, libraryOverhead_;
  std::vector<std::vector<int64_t>> operands_, results_;     // value ids per op
  std::vector<int64_t> valueBytes_, definedBy_, lastReader_; // -1: an argument / no reader
  std::vector<bool> isResult_, isWeight_;
  mutable std::vector<int64_t> inStamp_, innerStamp_;
  mutable int64_t token_ = 0;
};

// The figures of [begin, begin + k) as ops are added in order. One grower at a time per
// ProgramFigures (they share its scratch stamps).
class SectionGrower {
public:
  SectionGrower(const ProgramFigures& pf, int64_t begin);
  void add(int64_t op);
  const SectionFigures& figures() const { return fig_; }

private:
  const ProgramFigures& pf_;
  int64_t begin_, token_;
  SectionFigures fig_;
};

// Reorders `f`'s ops by phase (a stable topological order) keeping each group's ops together;
// returns each op's group (-1: none) in the new order. Groups must be convex (see isConvex).
// `forRepeats` orders for hypersections: the ops of no group computed from constants alone go
// first in their phase (CSE leaves a constant or a mask's slice that repeated layers share in
// the first of them, which would set it apart from the others), and a reshape read by one op of its
// phase goes just before that op (autodiff makes the gradients' reshapes before any update, which
// would leave them out of the optimizer's repeated bodies).
std::vector<int64_t> scheduleByPhase(Function& f, const std::vector<Phase>& phases,
                                     const std::vector<std::vector<int64_t>>& groups,
                                     bool forRepeats = false);

// Every `call` of `f` as a one-op instance of its callee's body (bodies numbered by each
// callee's first call in program order).
std::vector<HyperInstance> callInstances(const Function& f);

// Runs of ops repeated back to back within one phase of `f` (ordered by phase), found from
// the left: at each op, the period of largest coverage among the distances to the next ops
// of its signature. Logs every body, its instances, and why a run next to them differs.
std::vector<HyperInstance> findRepeats(const Function& f, const std::vector<Phase>& phase,
                                       const SectionLog& log);

// No path leaves the ops `members` (program-order indices) and comes back into them.
bool isConvex(const std::unordered_map<const Op*, int64_t>& index,
              const std::vector<int64_t>& members, const std::vector<const Op*>& ops);

} // namespace shardc
