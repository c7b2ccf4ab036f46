#include "shardc/cost/CostModel.h"

#include "shardc/cost/Memory.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <unordered_set>

namespace shardc {
namespace {

std::vector<std::string> splitAxes(const std::string& s) {
  std::vector<std::string> axes;
  for (size_t start = 0; start <= s.size();) {
    size_t end = std::min(s.find(',', start), s.size());
    if (end > start) axes.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return axes;
}

// Devices per node in the group of device 0 for `axes`, and how many nodes it spans.
std::pair<int64_t, int64_t> groupLayout(const Target& t, const Mesh& mesh,
                                        const std::vector<std::string>& axes) {
  std::vector<int64_t> coords(mesh.axes().size(), 0);
  std::map<int64_t, int64_t> perNode;
  std::vector<size_t> idx;
  for (const std::string& a : axes)
    idx.push_back(*mesh.axisIndex(a));
  int64_t g = mesh.groupSize(axes);
  for (int64_t r = 0; r < g; ++r) {
    int64_t rest = r;
    for (size_t i = idx.size(); i-- > 0;) {
      int64_t n = mesh.axes()[idx[i]].size;
      coords[idx[i]] = rest % n;
      rest /= n;
    }
    ++perNode[mesh.device(coords) / std::max<int64_t>(t.devicesPerNode, 1)];
  }
  return {perNode.begin()->second, static_cast<int64_t>(perNode.size())};
}

double ring(double steps, const LinkSpec& l, double bytesPerStep) {
  return steps * (l.latency + bytesPerStep / l.bandwidth);
}

// A library call's fixed cost: per call, and for a batched matmul per matrix past the first.
// A batch on the left operand alone is one GEMM of more rows.
double libraryOverhead(const Target& t, const Op& op, const std::vector<TensorType>& in,
                       const std::vector<TensorType>& out) {
  if (!isLibraryGemm(op.name())) return 0;
  double matrices = 1;
  if (op.name() == opname::kMatmul && in.size() == 2 && in[1].rank() > 2)
    for (size_t i = 0; i + 2 < out[0].shape.size(); ++i)
      matrices *= static_cast<double>(out[0].shape[i]);
  return t.gemmOverhead + std::max(0.0, matrices - 1) * t.gemmBatchOverhead;
}

// Per group of ops priced as a unit: its arithmetic and the bytes crossing its boundary.
struct GroupTotals {
  struct Totals {
    double flopSeconds = 0, ioBytes = 0, library = 0;
    int64_t stages = 0;
    std::vector<std::string> opNames;
  };
  std::vector<Totals> totals;
  std::vector<int64_t> effective; // per op: its group, or -1 (priced alone)

  GroupTotals(const Function& f, const std::vector<int64_t>* g) {
    SHARDC_CHECK(!g || g->size() == f.ops().size(), "fusion groups do not cover the function");
    if (!g) return;
    // A group of one op is priced as that op alone; collectives always are.
    std::map<int64_t, int64_t> members;
    size_t i = 0;
    for (const auto& op : f.ops())
      if (int64_t k = (*g)[i++]; k >= 0 && !op->def().communicates) ++members[k];
    std::map<const Op*, int64_t> groupOfOp;
    i = 0;
    for (const auto& op : f.ops()) {
      int64_t k = (*g)[i++];
      if (op->def().communicates || (k != CostModel::kNoKernel && members[k] < 2)) k = -1;
      groupOfOp[op.get()] = k;
      if (k >= static_cast<int64_t>(totals.size())) totals.resize(static_cast<size_t>(k) + 1);
      effective.push_back(k);
    }
    auto groupOfValue = [&](const Value* v) {
      return v->isArgument() ? -1 : groupOfOp.at(v->definingOp());
    };
    std::set<const Value*> results;
    for (const auto& r : f.results())
      results.insert(r.value);
    for (const auto& op : f.ops()) {
      int64_t k = groupOfOp.at(op.get());
      if (k < 0) continue;
      std::set<const Value*> read;
      for (const Value* v : op->operands())
        if (groupOfValue(v) != k && read.insert(v).second)
          totals[static_cast<size_t>(k)].ioBytes += static_cast<double>(v->type().bytes());
      for (size_t r = 0; r < op->numResults(); ++r) {
        const Value* v = op->result(r);
        bool leaves = results.count(v) > 0;
        for (const Use& u : v->uses())
          leaves = leaves || (u.user && groupOfOp.at(u.user) != k);
        if (leaves)
          totals[static_cast<size_t>(k)].ioBytes += static_cast<double>(v->type().bytes());
        else
          onChip.insert(v);
      }
    }
  }
  int64_t of(size_t op) const { return op < effective.size() ? effective[op] : -1; }
  std::unordered_set<const Value*> onChip; // made and read within one group only
};

class AnalyticCostModel : public CostModel {
public:
  explicit AnalyticCostModel(Target t) : t_(std::move(t)) {}
  const Target& target() const override { return t_; }

  CostReport
  evaluate(const Function& f, const Mesh& mesh, const std::vector<int64_t>* groupOf,
           const std::map<std::string, std::vector<int64_t>>* bodyGroupOf) const override {
    CostReport r;
    r.target = t_.name;
    r.devices = mesh.numDevices();
    r.memoryCapacity = t_.memoryCapacity;
    for (size_t i = 0; i < f.numArguments(); ++i) {
      const Value* a = f.argument(i);
      int64_t& slot = a->argKind() == ArgKind::Param      ? r.memory.parameters
                      : a->argKind() == ArgKind::OptState ? r.memory.optimizerState
                                                          : r.memory.inputs;
      slot += a->type().bytes();
    }
    // Devices sharing a host's cores (see Target::computeUnits).
    double d = static_cast<double>(r.devices), throughputSlower = 1, fixedSlower = 1;
    if (t_.computeUnits > 0) {
      double units = static_cast<double>(t_.computeUnits);
      throughputSlower = std::max(1.0, d * static_cast<double>(t_.deviceComputeUnits) / units);
      fixedSlower = std::max(1.0, d / units);
    }
    std::map<DType, double> flopsByType;
    std::map<std::string, CostReport> bodies; // per callee: one run of it
    CostReport called;                        // the calls' collectives, scaled already
    std::vector<TensorType> in, out;
    GroupTotals groups(f, groupOf);
    size_t opIndex = 0;
    for (const auto& op : f.ops()) {
      int64_t group = groups.of(opIndex++);
      in.clear();
      out.clear();
      for (Value* v : op->operands())
        in.push_back(v->type());
      for (size_t i = 0; i < op->numResults(); ++i)
        out.push_back(op->result(i)->type());
      OpSig sig{in, op->attrs()};
      if (op->def().callsFunction) {
        addCall(r, called, flopsByType, *op, mesh, bodyGroupOf, bodies);
        continue;
      }
      if (op->def().communicates && op->name() != opname::kShardSlice) {
        CollectiveCost c =
            collectiveCost(t_, mesh, op->name(), splitAxes(op->attrs().getString("axes")),
                           static_cast<double>(in[0].bytes()));
        r.commSeconds += c.seconds;
        r.collectives.push_back(std::move(c));
        continue;
      }
      if (group == kNoKernel) continue;
      double flops = op->def().flopCount(sig, out), bytes = op->def().byteCount(sig, out);
      DType dt = out.empty() ? DType::F32 : out[0].dtype;
      r.flops += flops;
      flopsByType[dt] += flops;
      if (group >= 0) {
        GroupTotals::Totals& g = groups.totals[static_cast<size_t>(group)];
        g.flopSeconds += flops / (t_.flopsFor(dt) * t_.computeEfficiency);
        g.library += libraryOverhead(t_, *op, in, out);
        g.stages += 1;
        g.opNames.push_back(op->name());
        continue;
      }
      double seconds =
          throughputSlower * std::max(flops / (t_.flopsFor(dt) * t_.computeEfficiency),
                                      bytes / (t_.memoryBandwidth * t_.memoryEfficiency)) +
          fixedSlower * (t_.opOverhead + libraryOverhead(t_, *op, in, out));
      r.computeSeconds += seconds;
      r.computeByOp[op->name()] += seconds;
    }
    for (const GroupTotals::Totals& g : groups.totals) {
      if (g.stages == 0) continue;
      // A CPU kernel is dispatched like one op; a section pays its target's switch.
      double seconds =
          t_.computeUnits > 0
              ? throughputSlower * std::max(g.flopSeconds, g.ioBytes / (t_.memoryBandwidth *
                                                                        t_.memoryEfficiency)) +
                    fixedSlower * (t_.opOverhead + g.library)
              : throughputSlower * sectionSeconds(t_, g.flopSeconds, g.ioBytes, g.stages, 0) +
                    fixedSlower * g.library;
      r.computeSeconds += seconds;
      for (const std::string& name : g.opNames) // shared evenly by the group's ops
        r.computeByOp[name] += seconds / static_cast<double>(g.opNames.size());
    }
    // A collective's copies and waits run on the devices' own threads, which take turns
    // once they outnumber the cores, and it waits for its descheduled peers.
    r.commSeconds = 0;
    for (CollectiveCost& c : r.collectives) {
      const LinkSpec& link = c.crossesNodes ? t_.interNode : t_.intraNode;
      c.seconds *= fixedSlower;
      if (c.group > 1) c.seconds += (fixedSlower - 1) * link.oversubscribedWait;
      r.commSeconds += c.seconds;
    }
    r.commSeconds += called.commSeconds;
    r.collectives.insert(r.collectives.end(), called.collectives.begin(), called.collectives.end());
    r.overlapSeconds = t_.commOverlap * std::min(r.computeSeconds, r.commSeconds);
    r.stepSeconds = r.computeSeconds + r.commSeconds - r.overlapSeconds;
    r.memory.activations = peakActivationBytes(f, &groups.onChip);
    r.memory.kept = keptActivationBytes(f);
    DType main = DType::F32;
    for (const auto& [dt, fl] : flopsByType)
      if (fl > flopsByType[main]) main = dt;
    if (r.stepSeconds > 0) r.flopUtilization = r.flops / (r.stepSeconds * t_.flopsFor(main));
    return r;
  }

private:
  // Adds one run of the call's callee (priced once per callee) to `r`, or a scan's `length`.
  void addCall(CostReport& r, CostReport& called, std::map<DType, double>& flopsByType,
               const Op& call, const Mesh& mesh,
               const std::map<std::string, std::vector<int64_t>>* bodyGroupOf,
               std::map<std::string, CostReport>& bodies) const {
    const Function* callee =
        call.parent()->module() ? call.parent()->module()->callee(call) : nullptr;
    if (!callee) throw InternalError("a call names no function of the module");
    auto it = bodies.find(callee->name());
    if (it == bodies.end()) {
      const std::vector<int64_t>* groups = nullptr;
      if (bodyGroupOf)
        if (auto g = bodyGroupOf->find(callee->name()); g != bodyGroupOf->end())
          groups = &g->second;
      it = bodies.emplace(callee->name(), evaluate(*callee, mesh, groups, bodyGroupOf)).first;
    }
    const CostReport& b = it->second;
    auto runs = static_cast<double>(runsOf(call));
    r.flops += runs * b.flops;
    flopsByType[DType::F32] += runs * b.flops;
    r.computeSeconds += runs * b.computeSeconds;
    for (const auto& [name, seconds] : b.computeByOp)
      r.computeByOp[name] += runs * seconds;
    called.commSeconds += runs * b.commSeconds;
    for (double n = 0; n < runs; ++n)
      called.collectives.insert(called.collectives.end(), b.collectives.begin(),
                                b.collectives.end());
  }

  Target t_;
};

} // namespace

std::string formatSeconds(double s) {
  char buf[32];
  double a = std::fabs(s);
  if (a >= 1 || a == 0)
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  else if (a >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  return buf;
}

std::string formatBytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4)
    b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %s", b, units[u]);
  return buf;
}

CollectiveCost collectiveCost(const Target& t, const Mesh& mesh, const std::string& kind,
                              const std::vector<std::string>& axes, double n) {
  CollectiveCost c;
  c.kind = kind;
  c.axes = axes;
  c.group = mesh.groupSize(axes);
  double g = static_cast<double>(c.group);
  if (c.group == 1) return c;
  auto [perNode, nodes] = groupLayout(t, mesh, axes);
  c.crossesNodes = nodes > 1;
  double k = static_cast<double>(perNode), m = static_cast<double>(nodes);
  const LinkSpec& in = t.intraNode;
  const LinkSpec& out = t.interNode;
  const LinkSpec& flat = c.crossesNodes ? out : in;
  if (kind == opname::kAllReduce) {
    c.bytes = 2 * (g - 1) / g * n;
    if (!c.crossesNodes) {
      double ringTime = ring(2 * (g - 1), in, n / g);
      double treeTime = ring(2 * std::ceil(std::log2(g)), in, n);
      c.seconds = std::min(ringTime, treeTime);
    } else { // reduce-scatter in nodes, all-reduce across them, all-gather in nodes
      double across = std::min(ring(2 * (m - 1), out, n / k / m),
                               ring(2 * std::ceil(std::log2(m)), out, n / k));
      c.seconds = ring(k - 1, in, n / k) + across + ring(k - 1, in, n / k);
    }
  } else if (kind == opname::kAllGather) {
    c.bytes = (g - 1) * n;
    c.seconds = c.crossesNodes ? ring(k - 1, in, n) + ring(m - 1, out, k * n) : ring(g - 1, in, n);
  } else if (kind == opname::kReduceScatter) {
    c.bytes = (g - 1) / g * n;
    c.seconds = c.crossesNodes ? ring(k - 1, in, n / k) + ring(m - 1, out, n / k / m)
                               : ring(g - 1, in, n / g);
  } else if (kind == opname::kAllToAll) {
    c.bytes = (g - 1) / g * n;
    c.seconds = ring(g - 1, flat, n / g);
  } else if (kind == opname::kCollectivePermute) {
    c.bytes = n;
    c.seconds = ring(1, flat, n);
  }
  return c;
}

std::map<std::string, double> CostReport::commByKind() const {
  std::map<std::string, double> m;
  for (const CollectiveCost& c : collectives)
    m[c.kind] += c.seconds;
  return m;
}

std::string CostReport::str() const {
  char util[32];
  std::snprintf(util, sizeof util, "%.1f%%", flopUtilization * 100);
  std::string s = "estimate on " + target + " (" + std::to_string(devices) +
                  (devices == 1 ? " device" : " devices") + "): step " +
                  formatSeconds(stepSeconds) + " = compute " + formatSeconds(computeSeconds) +
                  " + communication " + formatSeconds(commSeconds) +
                  (overlapSeconds > 0 ? " - overlapped " + formatSeconds(overlapSeconds) : "");
  std::string kinds;
  for (const auto& [kind, sec] : commByKind()) {
    char share[16];
    std::snprintf(share, sizeof share, "%.0f%%", commSeconds > 0 ? 100 * sec / commSeconds : 0.0);
    kinds += (kinds.empty() ? "" : ", ") + kind + " " + formatSeconds(sec) + " (" + share + ")";
  }
  if (!kinds.empty()) s += " [" + kinds + "]";
  char gf[32];
  std::snprintf(gf, sizeof gf, "%.3g", flops / 1e9);
  s += "\n  " + std::string(gf) + " GFLOP per device per step, FLOP utilization " + util;
  s += "\n  memory per device: " + formatBytes(static_cast<double>(memory.peak())) + " of " +
       formatBytes(memoryCapacity) + (fits() ? "" : " (DOES NOT FIT)") + ": parameters " +
       formatBytes(static_cast<double>(memory.parameters)) + ", optimizer state " +
       formatBytes(static_cast<double>(memory.optimizerState)) + ", inputs " +
       formatBytes(static_cast<double>(memory.inputs)) + ", activations and temporaries " +
       formatBytes(static_cast<double>(memory.activations)) +
       (memory.kept > 0
            ? " (kept for the backward pass: " + formatBytes(static_cast<double>(memory.kept)) + ")"
            : "");
  return s;
}

std::unique_ptr<CostModel> makeAnalyticCostModel(Target target) {
  return std::make_unique<AnalyticCostModel>(std::move(target));
}

double sectionSeconds(const Target& t, double flopSeconds, double ioBytes, int64_t stages,
                      double libraryOverhead) {
  double traffic = ioBytes / (t.memoryBandwidth * t.memoryEfficiency);
  double body = std::max(flopSeconds, traffic) + t.section.switchOverhead;
  if (t.section.model == SectionSpec::Model::Pipeline)
    return body + static_cast<double>(stages) * t.section.stageLatency;
  return body + libraryOverhead;
}

} // namespace shardc
