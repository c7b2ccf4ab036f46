// Section formation: the program ordered by phase, then cut per optimization level. -o3 cuts
// each phase by dynamic programming over contiguous runs: the cuts of least total estimated
// time (sectionSeconds) among those whose every section fits the phase's budget.
#include "SectionUtil.h"

#include "shardc/cost/CostModel.h"
#include "shardc/cost/Target.h"
#include "shardc/dataflow/FusionRules.h"
#include "shardc/dataflow/Sections.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace shardc {
namespace {

// The smallest scaling factor under which `units` and `bytes` fit the target's budget.
double factorNeeded(const SectionSpec& s, const SectionFigures& fig) {
  return std::max(static_cast<double>(fig.computeUnits) / static_cast<double>(s.computeUnits),
                  static_cast<double>(fig.onChipBytes) / s.memory);
}

void requireAlone(const ProgramFigures& pf, const Target& t, const SectionOptions& o, int64_t op) {
  Section s;
  s.phase = pf.phase[static_cast<size_t>(op)];
  SectionFigures fig = pf.measure(op, op + 1);
  double need = factorNeeded(t.section, fig), have = o.scaling.of(s.phase);
  if (need <= have) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "the smallest %s factor that fits it is %.3g",
                std::string(phaseName(s.phase)).c_str(), need);
  throw Error("--resources-scaling-factors: op " + std::to_string(op) + " (" + pf.describeOp(op) +
              ", " + std::string(phaseName(s.phase)) + ") does not fit one section of " + t.name +
              " even alone (" + std::to_string(fig.computeUnits) + " compute units, " +
              formatBytes(static_cast<double>(fig.onChipBytes)) + " on chip; " + buf + ")");
}

// The joins of [begin, end) but those of a kernel whose ops do not fit one section together:
// such a kernel runs split over sections, and the others keep their ops together.
std::vector<bool> joinsThatFit(const ProgramFigures& pf, double units, double memory,
                               std::vector<bool> joined, int64_t begin, int64_t end) {
  for (int64_t s = begin; s < end;) {
    int64_t e = s + 1;
    while (e < end && joined[static_cast<size_t>(e)])
      ++e;
    SectionGrower grow(pf, s);
    for (int64_t op = s; op < e; ++op) {
      grow.add(op);
      const SectionFigures& fig = grow.figures();
      if (static_cast<double>(fig.computeUnits) > units ||
          static_cast<double>(fig.onChipBytes) > memory) {
        std::fill(joined.begin() + s + 1, joined.begin() + e, false);
        break;
      }
    }
    s = e;
  }
  return joined;
}

// -o3: least-time cuts of [begin, end) (one phase) into sections within the budget, never
// before an op that `joined` marks (one kernel with the op before it) unless no cut fits then.
void cutPhase(const ProgramFigures& pf, const Target& t, const SectionOptions& o,
              std::vector<bool> joined, int64_t begin, int64_t end, std::vector<Section>& out) {
  Phase phase = pf.phase[static_cast<size_t>(begin)];
  double units = static_cast<double>(t.section.computeUnits) * o.scaling.of(phase);
  double memory = t.section.memory * o.scaling.of(phase);
  if (!joined.empty()) joined = joinsThatFit(pf, units, memory, joined, begin, end);
  size_t n = static_cast<size_t>(end - begin);
  std::vector<double> best(n + 1, std::numeric_limits<double>::infinity());
  std::vector<int64_t> from(n + 1, -1);
  best[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(best[i]) || (i > 0 && !joined.empty() && joined[begin + i])) continue;
    SectionGrower grow(pf, begin + static_cast<int64_t>(i));
    for (size_t j = i; j < n; ++j) {
      int64_t op = begin + static_cast<int64_t>(j);
      // A collective is a section of its own: its time is the link's, not the chip's.
      if (pf.communicates(op) && j > i) break;
      grow.add(op);
      const SectionFigures& fig = grow.figures();
      bool fits = static_cast<double>(fig.computeUnits) <= units &&
                  static_cast<double>(fig.onChipBytes) <= memory;
      if (!fits && j > i) break;
      double c = best[i] + pf.seconds(t, fig);
      // The target's figures are range-checked when read, so a cost is always finite.
      if (!std::isfinite(c))
        throw InternalError("section former: the cost of ops " +
                            std::to_string(begin + static_cast<int64_t>(i)) + ".." +
                            std::to_string(op) + " on " + t.name + " is not finite");
      if (c < best[j + 1]) best[j + 1] = c, from[j + 1] = static_cast<int64_t>(i);
      if (pf.communicates(op)) break;
    }
  }
  if (!std::isfinite(best[n]) && !joined.empty())
    return cutPhase(pf, t, o, {}, begin, end, out); // a kernel larger than a section
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t j = static_cast<int64_t>(n); j > 0; j = from[static_cast<size_t>(j)]) {
    if (from[static_cast<size_t>(j)] < 0)
      throw InternalError("section former: no cut reaches op " + std::to_string(begin + j - 1));
    runs.emplace_back(begin + from[static_cast<size_t>(j)], begin + j);
  }
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    Section s;
    s.phase = phase;
    s.firstOp = it->first;
    s.numOps = it->second - it->first;
    out.push_back(std::move(s));
  }
}

// -o0 and -o1: a section per group (a rule's match) and per computing op; ops that compute
// nothing (constants, reshapes) join the section after them, or the last one.
// Over [begin, end), which a group may overhang (a hypersection instance's edge).
void cutByGroups(const ProgramFigures& pf, const std::vector<int64_t>& groupOf,
                 const std::vector<std::string>& groupRule, int64_t begin, int64_t n,
                 std::vector<Section>& out) {
  int64_t start = begin;
  for (int64_t i = begin; i < n; ++i) {
    int64_t g = groupOf[static_cast<size_t>(i)];
    bool lastOfGroup = g < 0 || i + 1 == n || groupOf[static_cast<size_t>(i + 1)] != g;
    if (!lastOfGroup || (g < 0 && pf.units[static_cast<size_t>(i)] == 0 && i + 1 < n &&
                         pf.phase[static_cast<size_t>(i + 1)] == pf.phase[static_cast<size_t>(i)]))
      continue;
    Section s;
    s.phase = pf.phase[static_cast<size_t>(i)];
    s.firstOp = start;
    s.numOps = i + 1 - start;
    if (g >= 0) s.rule = groupRule[static_cast<size_t>(g)];
    out.push_back(std::move(s));
    start = i + 1;
  }
}

} // namespace

std::vector<Section> formSections(Function& f, const Target& t, const SectionOptions& o,
                                  const SectionLog& log, std::vector<HyperInstance>* instances) {
  if (o.level != 0 && o.level != 1 && o.level != 3)
    throw Error("optimization level " + std::to_string(o.level) + " is not one of 0, 1, 3");
  std::vector<Phase> phases = opPhases(f);
  std::vector<std::vector<int64_t>> groups; // -o1: the rules' matches (op indices)
  std::vector<std::string> rules;
  if (o.level == 1) {
    const FusionRules& r = o.rules ? *o.rules : FusionRules::defaults();
    for (FusionMatch& m : r.match(f, phases, log)) {
      groups.push_back(std::move(m.ops));
      rules.push_back(m.rule);
    }
  }
  std::vector<int64_t> groupOf = scheduleByPhase(f, phases, groups, o.hypersections);
  ProgramFigures pf(f, t);
  // A call's needs are its body's sections' (cut on their own).
  std::vector<HyperInstance> calls = callInstances(f);
  for (int64_t i = 0; i < static_cast<int64_t>(pf.phase.size()); ++i)
    if (!pf.callsFunction(i)) requireAlone(pf, t, o, i);
  std::vector<HyperInstance> found;
  if (o.hypersections && calls.empty()) found = findRepeats(f, pf.phase, log);
  std::vector<bool> joined; // -o3: op i runs in one kernel with op i - 1
  if (o.level == 3 && o.kernels) {
    std::vector<int64_t> phaseOf;
    for (Phase p : pf.phase)
      phaseOf.push_back(static_cast<int64_t>(p));
    joined.assign(pf.phase.size(), false);
    for (const std::vector<int64_t>& k : o.kernels(f, phaseOf))
      for (int64_t i = k.front() + 1; i <= k.back(); ++i)
        joined[static_cast<size_t>(i)] = true;
  }
  auto cut = [&](int64_t begin, int64_t end, std::vector<Section>& into) {
    if (o.level != 3) return cutByGroups(pf, groupOf, rules, begin, end, into);
    for (int64_t b = begin; b < end;) { // one phase at a time
      int64_t e = b + 1;
      while (e < end && pf.phase[static_cast<size_t>(e)] == pf.phase[static_cast<size_t>(b)])
        ++e;
      cutPhase(pf, t, o, joined, b, e, into);
      b = e;
    }
  };
  // Each body is cut once, at its first instance; the others repeat its cuts.
  std::vector<Section> out;
  std::map<int64_t, std::vector<Section>> bodyCuts; // relative to the instance's first op
  int64_t n = static_cast<int64_t>(pf.phase.size()), at = 0;
  for (const HyperInstance& h : calls.empty() ? found : calls) {
    cut(at, h.firstOp, out);
    auto [it, first] = bodyCuts.try_emplace(h.body);
    if (first) {
      cut(h.firstOp, h.firstOp + h.numOps, it->second);
      for (Section& s : it->second)
        s.firstOp -= h.firstOp;
    }
    for (Section s : it->second) {
      s.firstOp += h.firstOp;
      s.body = h.body;
      out.push_back(std::move(s));
    }
    at = h.firstOp + h.numOps;
  }
  cut(at, n, out);
  if (instances) *instances = std::move(found);
  measureSections(f, t, out);
  if (log) log(describeSections(out));
  return out;
}

void measureSections(const Function& f, const Target& t, std::vector<Section>& sections) {
  ProgramFigures pf(f, t);
  for (Section& s : sections) {
    SectionFigures fig = pf.measure(s.firstOp, s.firstOp + s.numOps);
    s.inputs = std::move(fig.inputs);
    s.outputs = std::move(fig.outputs);
    s.inputBytes = fig.inputBytes;
    s.outputBytes = fig.outputBytes;
    s.onChipBytes = fig.onChipBytes;
    s.computeUnits = fig.computeUnits;
  }
}

std::vector<double> estimateSections(const Function& f, const Target& t,
                                     const std::vector<Section>& sections) {
  ProgramFigures pf(f, t);
  std::vector<double> out;
  for (const Section& s : sections)
    out.push_back(pf.seconds(t, pf.measure(s.firstOp, s.firstOp + s.numOps)));
  return out;
}

std::vector<int64_t> sectionOfOps(const std::vector<Section>& sections, int64_t numOps) {
  std::vector<int64_t> of(static_cast<size_t>(numOps), -1);
  for (size_t k = 0; k < sections.size(); ++k)
    for (int64_t i = sections[k].firstOp; i < sections[k].firstOp + sections[k].numOps; ++i)
      if (i >= 0 && i < numOps) of[static_cast<size_t>(i)] = static_cast<int64_t>(k);
  return of;
}

std::string checkSections(const std::vector<Section>& sections, const Function& f,
                          const std::vector<std::string>& bodyFunctions,
                          std::optional<Phase> bodyPhase) {
  int64_t ops = static_cast<int64_t>(f.ops().size()), next = 0;
  int64_t values = static_cast<int64_t>(f.numArguments());
  for (const auto& op : f.ops())
    values += static_cast<int64_t>(op->numResults());
  std::vector<Phase> phases;
  if (bodyPhase)
    phases.assign(static_cast<size_t>(ops), *bodyPhase);
  else if (!sections.empty())
    phases = opPhases(f);
  std::vector<const Op*> opList;
  for (const auto& op : f.ops())
    opList.push_back(op.get());
  for (size_t k = 0; k < sections.size(); ++k) {
    const Section& s = sections[k];
    std::string at = "section " + std::to_string(k);
    if (s.firstOp != next || s.numOps < 1 || s.numOps > ops - next)
      return at + " covers ops [" + std::to_string(s.firstOp) + ", +" + std::to_string(s.numOps) +
             "), not a run starting at op " + std::to_string(next) + " of " + std::to_string(ops);
    for (int64_t i = s.firstOp; i < s.firstOp + s.numOps; ++i)
      if (phases[static_cast<size_t>(i)] != s.phase)
        return at + " is a " + std::string(phaseName(s.phase)) + " section, but op " +
               std::to_string(i) + " is in the " +
               std::string(phaseName(phases[static_cast<size_t>(i)])) + " phase";
    if (s.body != -1) {
      if (bodyPhase) return at + " of a hypersection body names a body itself";
      if (s.body < 0 || s.body >= static_cast<int64_t>(bodyFunctions.size()))
        return at + " names hypersection body " + std::to_string(s.body) + " of " +
               std::to_string(bodyFunctions.size());
      const Op& call = *opList[static_cast<size_t>(s.firstOp)];
      if (s.numOps != 1 || !call.def().callsFunction ||
          call.attrs().getString("callee") != bodyFunctions[static_cast<size_t>(s.body)])
        return at + " names hypersection body " + std::to_string(s.body) +
               " but is not one call of @" + bodyFunctions[static_cast<size_t>(s.body)];
    }
    next += s.numOps;
    for (const auto* list : {&s.inputs, &s.outputs})
      for (int64_t v : *list)
        if (v < 0 || v >= values)
          return at + " names value " + std::to_string(v) + " of " + std::to_string(values);
    if (s.inputBytes < 0 || s.outputBytes < 0 || s.onChipBytes < 0 || s.computeUnits < 0 ||
        s.body < -1)
      return at + " has a negative figure";
  }
  if (!sections.empty() && next != ops)
    return "the sections cover " + std::to_string(next) + " of the program's " +
           std::to_string(ops) + " ops";
  return "";
}

std::string describeSections(const std::vector<Section>& sections) {
  std::map<Phase, std::pair<int64_t, int64_t>> byPhase; // sections, ops
  int64_t largest = 0, ruled = 0;
  for (const Section& s : sections) {
    ++byPhase[s.phase].first;
    byPhase[s.phase].second += s.numOps;
    largest = std::max(largest, s.computeUnits);
    ruled += !s.rule.empty();
  }
  std::string out = std::to_string(sections.size()) + " sections (";
  bool first = true;
  for (const auto& [p, c] : byPhase) {
    out += (first ? "" : ", ") + std::string(phaseName(p)) + " " + std::to_string(c.first) +
           " over " + std::to_string(c.second) + " ops";
    first = false;
  }
  out += "), at most " + std::to_string(largest) + " computing ops in one";
  if (ruled) out += ", " + std::to_string(ruled) + " formed by fusion rules";
  return out;
}

} // namespace shardc
