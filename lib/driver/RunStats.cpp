#include "RunStats.h"

#include "shardc/cost/Target.h"
#include "shardc/dataflow/Sections.h"
#include "shardc/exec/CompiledFunction.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/pef/Pef.h"
#include "shardc/support/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

namespace shardc {

SectionTimes sectionTimes(const LoadedPef& l, const std::vector<double>& byStep, int64_t steps,
                          int64_t devices) {
  const PefProgram& prog = l.pef.programs[0];
  std::vector<int64_t> sectionOf =
      sectionOfOps(prog.sections, static_cast<int64_t>(l.entry->ops().size()));
  SectionTimes t;
  t.measured.assign(prog.sections.size(), 0);
  for (size_t s = 0; s < byStep.size() && s < prog.plan.steps.size(); ++s)
    t.measured[static_cast<size_t>(
        sectionOf[static_cast<size_t>(prog.plan.steps[s].ops.back())])] +=
        byStep[s] / static_cast<double>(steps * devices);
  t.target = l.pef.arch;
  try {
    Target target = loadTarget(l.pef.arch);
    t.estimated = estimateSections(*l.entry, target, prog.sections);
    // A call's estimate is its body's sections', a scan's `length` times theirs.
    std::vector<const Op*> ops;
    for (const auto& op : l.entry->ops())
      ops.push_back(op.get());
    for (size_t k = 0; k < prog.sections.size(); ++k) {
      if (prog.sections[k].body < 0) continue;
      const PefBody& b = prog.bodies[static_cast<size_t>(prog.sections[k].body)];
      const Op& call = *ops.at(static_cast<size_t>(prog.sections[k].firstOp));
      auto runs = static_cast<double>(runsOf(call));
      t.estimated[k] = 0;
      for (double e : estimateSections(*l.module->findFunction(b.function), target, b.sections))
        t.estimated[k] += runs * e;
    }
  } catch (const Error&) {
    t.target += " (not a built-in target: no estimate)";
  }
  return t;
}

void printSectionTimes(const LoadedPef& l, const SectionTimes& t, int64_t opLimit) {
  const std::vector<Section>& sections = l.pef.programs[0].sections;
  std::printf("sections: kernel seconds per step and device, measured, and the section model's "
              "estimate on %s\n",
              t.target.c_str());
  double totalMeasured = 0, totalEstimated = 0;
  for (size_t k = 0; k < sections.size(); ++k) {
    const Section& s = sections[k];
    if (opLimit >= 0 && s.firstOp >= opLimit) break;
    totalMeasured += t.measured[k];
    std::printf("  #%zu %s ops %lld..%lld%s%s: measured %.6f", k,
                std::string(phaseName(s.phase)).c_str(), static_cast<long long>(s.firstOp),
                static_cast<long long>(s.firstOp + s.numOps - 1), s.rule.empty() ? "" : " rule ",
                s.rule.c_str(), t.measured[k]);
    if (!t.estimated.empty()) {
      totalEstimated += t.estimated[k];
      std::printf(", estimated %.6f", t.estimated[k]);
    }
    std::printf("\n");
  }
  std::printf("sections total: measured %.6f", totalMeasured);
  if (!t.estimated.empty()) std::printf(", estimated %.6f", totalEstimated);
  std::printf("\n");
}

namespace {

// Kernel seconds per step (summed over devices) by op kind: each plan step's seconds split over
// the ops it runs (a call's over its body's) in proportion to the cost model's average seconds
// per op of their kinds, collectives' included; equal shares where the PEF holds no estimate.
std::map<std::string, double> secondsByOpKind(const LoadedPef& l, const ExecStats& times,
                                              double steps) {
  std::map<std::string, double> predicted;
  if (!l.pef.costJson.empty()) {
    nlohmann::json cost = nlohmann::json::parse(l.pef.costJson, nullptr, false);
    for (const char* part : {"compute_by_op", "communication_by_kind"})
      if (cost.is_object() && cost.contains(part) && cost[part].is_object())
        for (const auto& [kind, sec] : cost[part].items())
          if (sec.is_number()) predicted[kind] += sec.get<double>();
  }
  std::vector<const Op*> entryOps;
  for (const auto& op : l.entry->ops())
    entryOps.push_back(op.get());
  auto opsOf = [&](const Op* op, int64_t runs, const auto& each) {
    if (!op->def().callsFunction) return each(op->name(), runs);
    for (const auto& inner : l.module->callee(*op)->ops())
      each(inner->name(), runs * runsOf(*op));
  };
  std::map<std::string, double> count;
  for (const Op* op : entryOps)
    opsOf(op, 1,
          [&](const std::string& kind, int64_t n) { count[kind] += static_cast<double>(n); });
  auto weight = [&](const std::string& kind) {
    auto p = predicted.find(kind);
    return p != predicted.end() && p->second > 0 ? p->second / count[kind] : 1e-12;
  };
  std::map<std::string, double> out;
  const std::vector<PlanStep>& plan = l.pef.programs[0].plan.steps;
  for (size_t s = 0; s < times.secondsByStepIndex.size() && s < plan.size(); ++s) {
    std::map<std::string, double> share;
    double total = 0;
    for (int64_t i : plan[s].ops)
      opsOf(entryOps.at(static_cast<size_t>(i)), 1, [&](const std::string& kind, int64_t n) {
        double w = weight(kind) * static_cast<double>(n);
        share[kind] += w;
        total += w;
      });
    for (const auto& [kind, w] : share)
      out[kind] += times.secondsByStepIndex[s] / steps * w / total;
  }
  return out;
}

} // namespace

std::string runStatsJson(const LoadedPef& l, const std::string& pefPath, const RunMeasurements& m,
                         const ExecStats& times) {
  if (m.stepSeconds.empty()) throw Error("--stats-json: no step ran, so nothing was measured");
  auto steps = static_cast<double>(m.stepSeconds.size());
  // Per step and device: the timed devices' sums over their count.
  double perStep = steps * static_cast<double>(std::max<int64_t>(m.timedDevices, 1));
  std::vector<double> sorted = m.stepSeconds;
  std::sort(sorted.begin(), sorted.end());
  nlohmann::json j;
  j["pef"] = pefPath;
  j["pef_checksum"] = checksumText(l.pef.checksum);
  j["mode"] = l.pef.mode;
  j["devices"] = m.devices;
  j["timed_devices"] = m.timedDevices;
  j["reference"] = m.reference;
  j["forward_only"] = m.opLimit >= 0; // --sections forward
  j["steps"] = m.stepSeconds.size();
  j["step_seconds"] = m.stepSeconds;
  j["median_step_seconds"] = sorted[sorted.size() / 2];
  j["peak_bytes_per_device"] =
      m.peakBytes.empty() ? 0 : *std::max_element(m.peakBytes.begin(), m.peakBytes.end());
  j["peak_bytes_by_device"] = m.peakBytes;
  std::map<std::string, double> byKernel;
  for (const auto& [kernel, sec] : times.secondsByKernel)
    byKernel[kernel] = sec / perStep;
  j["seconds_by_kernel"] = byKernel;
  // The interpreter times op by op: its kernels are the op kinds.
  j["seconds_by_op"] = m.reference ? byKernel : secondsByOpKind(l, times, perStep);
  j["sections"] = nlohmann::json::array();
  const std::vector<Section>& sections = l.pef.programs[0].sections;
  if (!m.reference && !sections.empty()) {
    SectionTimes t = sectionTimes(l, times.secondsByStepIndex,
                                  static_cast<int64_t>(m.stepSeconds.size()), m.timedDevices);
    j["estimate_target"] = t.target;
    for (size_t k = 0; k < sections.size(); ++k) {
      if (m.opLimit >= 0 && sections[k].firstOp >= m.opLimit) break;
      nlohmann::json s = {{"index", k},
                          {"phase", std::string(phaseName(sections[k].phase))},
                          {"measured_seconds", t.measured[k]}};
      if (!t.estimated.empty()) s["estimated_seconds"] = t.estimated[k];
      j["sections"].push_back(s);
    }
  }
  return j.dump(1) + "\n";
}

} // namespace shardc
