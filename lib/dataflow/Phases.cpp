// The phase of every op of a device program, from its structure (see opPhases).
#include "shardc/dataflow/Sections.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"

#include <map>
#include <set>

namespace shardc {
namespace {

const Function* calleeOf(const Op& op) {
  const Function* f = op.parent();
  return f && f->module() ? f->module()->callee(op) : nullptr;
}

// Whether `op`, or every op of the body it calls, satisfies `pred`.
template <typename Pred> bool allOf(const Op& op, Pred pred) {
  if (!op.def().callsFunction) return pred(op);
  const Function* body = calleeOf(op);
  if (!body || body->ops().empty()) return false;
  for (const auto& inner : body->ops())
    if (!pred(*inner)) return false;
  return true;
}

// Ops an optimizer update is made of: per-element arithmetic and what feeds it scalars (and
// the data movement that makes a gradient of its pieces: the split of a bucketed gradient
// sum, an unrolled scan's per-step gradients padded or concatenated into its stacked
// parameter's).
bool elementwiseUpdate(const Op& op) {
  const ElementFns& e = op.def().element;
  if (e.unaryF || e.unaryI || e.binaryF || e.binaryI) return true;
  static const std::set<std::string_view> kOthers = {"broadcast", "cast",    "constant", "where",
                                                     "compare",   "reshape", "split",    "concat",
                                                     "pad",       "slice"};
  return kOthers.count(op.name()) > 0;
}

// A call is judged by its body's ops: a body of updates is an update, one of collectives a
// collective.
bool updatesElementwise(const Op& op) {
  return allOf(op, elementwiseUpdate);
}
bool communicates(const Op& op) {
  return allOf(op, [](const Op& o) { return o.def().communicates; });
}

} // namespace

std::string_view phaseName(Phase p) {
  switch (p) {
  case Phase::Forward:
    return "forward";
  case Phase::Backward:
    return "backward";
  case Phase::GradReduce:
    return "grad-reduce";
  case Phase::Optimizer:
    return "optimizer";
  }
  return "?";
}

std::optional<Phase> parsePhase(std::string_view name) {
  for (Phase p : {Phase::Forward, Phase::Backward, Phase::GradReduce, Phase::Optimizer})
    if (phaseName(p) == name) return p;
  return std::nullopt;
}

std::vector<Phase> opPhases(const Function& f) {
  std::vector<const Op*> ops;
  std::map<const Op*, size_t> index;
  for (const auto& op : f.ops()) {
    index[op.get()] = ops.size();
    ops.push_back(op.get());
  }
  std::vector<Phase> phase(ops.size(), Phase::Backward);
  std::vector<bool> forward(ops.size(), false);
  std::vector<const Op*> work;
  for (const auto& r : f.results())
    if (r.tiedArg < 0 && r.value->definingOp()) work.push_back(r.value->definingOp());
  while (!work.empty()) {
    const Op* op = work.back();
    work.pop_back();
    size_t i = index.at(op);
    if (forward[i]) continue;
    forward[i] = true;
    phase[i] = Phase::Forward;
    for (const Value* v : op->operands())
      if (v->definingOp()) work.push_back(v->definingOp());
  }
  // Walked back from the tied results: readers come later in program order.
  for (size_t i = ops.size(); i-- > 0;) {
    if (forward[i]) continue;
    bool feedsUpdate = true;
    for (size_t k = 0; k < ops[i]->numResults() && feedsUpdate; ++k)
      for (const Use& u : ops[i]->result(k)->uses()) {
        bool ok = u.user ? phase[index.at(u.user)] == Phase::Optimizer
                         : f.results()[u.index].tiedArg >= 0;
        if (!ok) {
          feedsUpdate = false;
          break;
        }
      }
    if (!feedsUpdate) continue;
    if (updatesElementwise(*ops[i]))
      phase[i] = Phase::Optimizer;
    else if (communicates(*ops[i]))
      phase[i] = Phase::GradReduce;
  }
  // A collective of updated values (the parameters gathered after a sharded optimizer) is
  // part of the optimizer: it runs after it.
  for (size_t i = 0; i < ops.size(); ++i) {
    if (phase[i] != Phase::GradReduce) continue;
    for (const Value* v : ops[i]->operands())
      if (v->definingOp() && phase[index.at(v->definingOp())] == Phase::Optimizer)
        phase[i] = Phase::Optimizer;
  }
  return phase;
}

} // namespace shardc
