#include "SectionUtil.h"

#include "shardc/cost/CostModel.h"
#include "shardc/cost/Target.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_set>

namespace shardc {

bool computesNothing(const Op& op) {
  return op.name() == opname::kConstant || op.name() == opname::kReshape;
}

ProgramFigures::ProgramFigures(const Function& f, const Target& t) : phase(opPhases(f)), t_(t) {
  std::unordered_map<const Value*, int64_t> id;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    id[a] = static_cast<int64_t>(valueBytes_.size());
    valueBytes_.push_back(a->type().bytes());
    definedBy_.push_back(-1);
    isWeight_.push_back(a->argKind() != ArgKind::Input);
  }
  std::vector<TensorType> in, out;
  for (const auto& op : f.ops()) {
    int64_t i = static_cast<int64_t>(ops_.size());
    ops_.push_back(op.get());
    in.clear();
    out.clear();
    std::vector<int64_t> opnds, res;
    for (const Value* v : op->operands()) {
      in.push_back(v->type());
      opnds.push_back(id.at(v));
    }
    for (size_t k = 0; k < op->numResults(); ++k) {
      const Value* v = op->result(k);
      out.push_back(v->type());
      id[v] = static_cast<int64_t>(valueBytes_.size());
      res.push_back(id[v]);
      valueBytes_.push_back(v->type().bytes());
      definedBy_.push_back(i);
      isWeight_.push_back(false);
    }
    operands_.push_back(std::move(opnds));
    results_.push_back(std::move(res));
    bool free = computesNothing(*op);
    units.push_back(free ? 0 : 1);
    double seconds = 0, library = 0;
    if (!free && !op->def().communicates) {
      OpSig sig{in, op->attrs()};
      DType dt = out.empty() ? DType::F32 : out[0].dtype;
      seconds = op->def().flopCount(sig, out) / (t.flopsFor(dt) * t.computeEfficiency);
      if (isLibraryGemm(op->name()) && t.section.model == SectionSpec::Model::Kernel)
        library = t.gemmOverhead;
    }
    flopSeconds_.push_back(seconds);
    libraryOverhead_.push_back(library);
  }
  lastReader_.assign(valueBytes_.size(), -1);
  isResult_.assign(valueBytes_.size(), false);
  for (size_t i = 0; i < ops_.size(); ++i)
    for (int64_t v : operands_[i])
      lastReader_[static_cast<size_t>(v)] = static_cast<int64_t>(i);
  for (const auto& r : f.results())
    isResult_[static_cast<size_t>(id.at(r.value))] = true;
  inStamp_.assign(valueBytes_.size(), -1);
  innerStamp_.assign(valueBytes_.size(), -1);
}

bool ProgramFigures::communicates(int64_t op) const {
  return ops_[static_cast<size_t>(op)]->def().communicates;
}

bool ProgramFigures::callsFunction(int64_t op) const {
  return ops_[static_cast<size_t>(op)]->def().callsFunction;
}

std::vector<HyperInstance> callInstances(const Function& f) {
  std::map<std::string, int64_t> body;
  std::vector<HyperInstance> out;
  int64_t i = 0;
  for (const auto& op : f.ops()) {
    if (op->def().callsFunction) {
      auto it = body.try_emplace(op->attrs().getString("callee"), static_cast<int64_t>(body.size()))
                    .first;
      out.push_back({it->second, i, 1});
    }
    ++i;
  }
  return out;
}

std::string ProgramFigures::describeOp(int64_t op) const {
  const Op& o = *ops_[static_cast<size_t>(op)];
  std::string s = o.name();
  if (o.numResults() && !o.result(0)->name().empty()) s += " %" + o.result(0)->name();
  if (o.numResults()) s += " -> " + o.result(0)->type().str();
  return s;
}

SectionFigures ProgramFigures::measure(int64_t begin, int64_t end) const {
  SectionGrower g(*this, begin);
  for (int64_t i = begin; i < end; ++i)
    g.add(i);
  SectionFigures fig = g.figures();
  std::set<int64_t> inputs;
  for (int64_t i = begin; i < end; ++i) {
    for (int64_t v : operands_[static_cast<size_t>(i)])
      if (definedBy_[static_cast<size_t>(v)] < begin) inputs.insert(v);
    for (int64_t v : results_[static_cast<size_t>(i)])
      if (isResult_[static_cast<size_t>(v)] || lastReader_[static_cast<size_t>(v)] >= end)
        fig.outputs.push_back(v);
  }
  fig.inputs.assign(inputs.begin(), inputs.end());
  return fig;
}

double ProgramFigures::seconds(const Target& t, const SectionFigures& fig) const {
  return sectionSeconds(t, fig.flopSeconds, static_cast<double>(fig.inputBytes + fig.outputBytes),
                        fig.stages, fig.libraryOverhead);
}

SectionGrower::SectionGrower(const ProgramFigures& pf, int64_t begin)
    : pf_(pf), begin_(begin), token_(++pf.token_) {}

void SectionGrower::add(int64_t op) {
  if (op < begin_ || op >= static_cast<int64_t>(pf_.ops_.size()))
    throw InternalError("section former: op " + std::to_string(op) + " is outside [" +
                        std::to_string(begin_) + ", " + std::to_string(pf_.ops_.size()) + ")");
  size_t i = static_cast<size_t>(op);
  fig_.computeUnits += pf_.units[i];
  fig_.stages += pf_.units[i] > 0;
  fig_.flopSeconds += pf_.flopSeconds_[i];
  fig_.libraryOverhead += pf_.libraryOverhead_[i];
  bool weightsOnChip = pf_.t_.section.weightsOnChip;
  for (int64_t v : pf_.operands_[i]) {
    size_t vi = static_cast<size_t>(v);
    int64_t bytes = pf_.valueBytes_[vi];
    if (pf_.definedBy_[vi] < begin_) {
      if (pf_.inStamp_[vi] == token_) continue;
      pf_.inStamp_[vi] = token_;
      fig_.inputBytes += bytes;
      if (weightsOnChip && pf_.isWeight_[vi]) fig_.onChipBytes += bytes;
      continue;
    }
    if (pf_.innerStamp_[vi] == token_) continue;
    pf_.innerStamp_[vi] = token_;
    // An intermediate in flight: double-buffered tiles.
    fig_.onChipBytes +=
        2 * std::min<int64_t>(bytes, static_cast<int64_t>(pf_.t_.section.tileBytes));
    if (pf_.lastReader_[vi] == op && !pf_.isResult_[vi]) fig_.outputBytes -= bytes;
  }
  for (int64_t v : pf_.results_[i]) {
    size_t vi = static_cast<size_t>(v);
    if (pf_.isResult_[vi] || pf_.lastReader_[vi] > op) fig_.outputBytes += pf_.valueBytes_[vi];
  }
}

bool isConvex(const std::unordered_map<const Op*, int64_t>& index,
              const std::vector<int64_t>& members, const std::vector<const Op*>& ops) {
  std::unordered_set<int64_t> in(members.begin(), members.end()), seen;
  int64_t last = *std::max_element(members.begin(), members.end());
  std::vector<int64_t> work;
  auto leave = [&](int64_t from, bool fromMember) {
    const Op& op = *ops[static_cast<size_t>(from)];
    for (size_t k = 0; k < op.numResults(); ++k)
      for (const Use& u : op.result(k)->uses()) {
        if (!u.user) continue;
        int64_t r = index.at(u.user);
        if (r > last || (fromMember && in.count(r))) continue;
        if (in.count(r)) return false; // a path out of the group came back in
        if (seen.insert(r).second) work.push_back(r);
      }
    return true;
  };
  for (int64_t m : members)
    if (!leave(m, true)) return false;
  while (!work.empty()) {
    int64_t x = work.back();
    work.pop_back();
    if (!leave(x, false)) return false;
  }
  return true;
}

std::vector<int64_t> scheduleByPhase(Function& f, const std::vector<Phase>& phases,
                                     const std::vector<std::vector<int64_t>>& groups,
                                     bool forRepeats) {
  std::vector<Op*> ops;
  std::unordered_map<const Op*, int64_t> index;
  for (const auto& op : f.ops()) {
    index[op.get()] = static_cast<int64_t>(ops.size());
    ops.push_back(op.get());
  }
  size_t n = ops.size(), g = groups.size();
  std::vector<int64_t> node(n);
  for (size_t i = 0; i < n; ++i)
    node[i] = static_cast<int64_t>(g + i);
  for (size_t k = 0; k < g; ++k)
    for (int64_t i : groups[k])
      node[static_cast<size_t>(i)] = static_cast<int64_t>(k);
  std::vector<std::vector<int64_t>> members(g + n);
  for (size_t i = 0; i < n; ++i)
    members[static_cast<size_t>(node[i])].push_back(static_cast<int64_t>(i));
  std::vector<int64_t> waiting(g + n, 0);
  for (size_t i = 0; i < n; ++i)
    for (const Value* v : ops[i]->operands())
      if (v->definingOp() && node[static_cast<size_t>(index.at(v->definingOp()))] != node[i])
        ++waiting[static_cast<size_t>(node[i])];
  // Where each op wants to be within its phase: its own place, or a sunk reshape's reader's.
  std::vector<int64_t> place(n);
  for (size_t i = n; i-- > 0;) {
    place[i] = static_cast<int64_t>(i);
    const Op& op = *ops[i];
    if (!forRepeats || op.name() != opname::kReshape || node[i] != static_cast<int64_t>(g + i) ||
        op.result(0)->uses().size() != 1 || !op.result(0)->uses()[0].user)
      continue;
    size_t r = static_cast<size_t>(index.at(op.result(0)->uses()[0].user));
    if (phases[r] == phases[i]) place[i] = place[r];
  }
  // Ops computed from constants alone (a mask and its slices), which CSE shares between layers.
  std::vector<char> fromConstants(n, forRepeats);
  for (size_t i = 0; i < n && forRepeats; ++i)
    for (const Value* v : ops[i]->operands())
      if (!v->definingOp() || !fromConstants[static_cast<size_t>(index.at(v->definingOp()))])
        fromConstants[i] = 0;
  // Micro-batches (gradient accumulation) alternate forward and backward ops in program
  // order: each round of them keeps its place, so that one micro-batch's activations are
  // alive at a time.
  std::vector<int64_t> round(n, 0);
  for (size_t i = 1; i < n; ++i)
    round[i] = round[i - 1] + (phases[i] == Phase::Forward && phases[i - 1] != Phase::Forward);
  // An update-phase op before the last round adds a micro-batch's gradient to the running sum:
  // it runs in place among the backward ops, so that each gradient is summed as it is made.
  auto phaseOf = [&](size_t i) {
    return phases[i] == Phase::Optimizer && round[i] < round[n - 1] ? Phase::Backward : phases[i];
  };
  // round, phase, not hoisted, place, node (a sunk reshape's node is less than its reader's)
  using Key = std::tuple<int64_t, Phase, bool, int64_t, int64_t>;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready;
  auto push = [&](int64_t nd) {
    size_t first = static_cast<size_t>(members[static_cast<size_t>(nd)].front());
    bool hoisted = nd >= static_cast<int64_t>(g) && fromConstants[first];
    ready.emplace(round[first], phaseOf(first), !hoisted, place[first], nd);
  };
  for (size_t nd = 0; nd < g + n; ++nd)
    if (!members[nd].empty() && waiting[nd] == 0) push(static_cast<int64_t>(nd));
  std::vector<int64_t> order;
  while (!ready.empty()) {
    int64_t nd = std::get<4>(ready.top());
    ready.pop();
    for (int64_t i : members[static_cast<size_t>(nd)]) {
      order.push_back(i);
      for (size_t k = 0; k < ops[static_cast<size_t>(i)]->numResults(); ++k)
        for (const Use& u : ops[static_cast<size_t>(i)]->result(k)->uses()) {
          if (!u.user) continue;
          int64_t r = node[static_cast<size_t>(index.at(u.user))];
          if (r != nd && --waiting[static_cast<size_t>(r)] == 0) push(r);
        }
    }
  }
  SHARDC_CHECK(order.size() == n, "fusion groups must be convex");
  std::vector<int64_t> groupOf;
  for (int64_t i : order) {
    f.ops().splice(f.ops().end(), f.ops(), f.position(ops[static_cast<size_t>(i)]));
    int64_t nd = node[static_cast<size_t>(i)];
    groupOf.push_back(nd < static_cast<int64_t>(g) ? nd : -1);
  }
  return groupOf;
}

} // namespace shardc
