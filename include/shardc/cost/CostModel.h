// The cost model: what one step of a per-device (SPMD) program costs on a target, in time and
// memory. The search and the reports see only this interface.
//
//  - Compute: per op, a roofline against the target's peaks scaled by its efficiency factors,
//    max(FLOPs / (peak * compute_efficiency), bytes / (bandwidth * memory_efficiency)), plus the
//    target's per-op overhead. FLOPs and bytes come from the op registry's formulas. Devices
//    that share a host's cores (simulated devices on a CPU) split its throughput among them
//    and take turns for fixed costs once they outnumber the cores (Target::computeUnits).
//  - Communication: each collective on its mesh axes with an alpha-beta model (alpha: link
//    latency, beta: 1 / link bandwidth): ring algorithms, and a tree for all-reduce when it is
//    faster. Devices are laid out on nodes in mesh order (device d on node d / devices_per_node,
//    the last mesh axis fastest), so a group spans nodes when its devices do; such collectives
//    are hierarchical (within nodes over the fast link, between nodes over the slow one).
//  - Groups: ops that run as one unit (a section on a dataflow chip or GPU; a fused kernel of
//    shardc's CPU runtime) are priced together: their FLOPs against the bytes the group reads
//    from and writes to device memory (its intermediates stay on chip), plus one start
//    (sectionSeconds). Ops in no group are priced alone, as above.
//    Devices that outnumber the host's cores also wait, per collective, for peers to be
//    scheduled (LinkSpec::oversubscribedWait).
//  - Step time: compute plus communication, less the overlap: the target's comm_overlap
//    fraction of the shorter of the two. shardc's runtime runs one op at a time and its
//    collectives block, so nothing overlaps (cpu: 0); a runtime with asynchronous collectives
//    hides some (--cost-overlap overrides the fraction).
//  - Memory: per device, the arguments (parameters, optimizer state, inputs) plus the peak of op
//    results alive at once when the program runs in order and frees each value after its last
//    use (the reference runtime's policy): saved activations, gradients and temporaries.
#pragma once

#include "shardc/cost/Target.h"
#include "shardc/sharding/Mesh.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace shardc {
class Function;

struct CollectiveCost {
  std::string kind;              // all_reduce, all_gather, ...
  std::vector<std::string> axes; // mesh axes of the group
  int64_t group = 1;             // devices in the group
  double bytes = 0;              // sent per device
  double seconds = 0;
  bool crossesNodes = false;
};

// "1.5 GiB".
std::string formatBytes(double bytes);
// "1.23 ms", "4.5 s", "12 us".
std::string formatSeconds(double seconds);

struct MemoryCost {
  int64_t parameters = 0, optimizerState = 0, inputs = 0;
  int64_t activations = 0; // peak bytes of op results alive at once
  // Of those, what a training step's forward pass keeps for its backward pass (Memory.h).
  int64_t kept = 0;
  int64_t peak() const { return parameters + optimizerState + inputs + activations; }
};

struct CostReport {
  std::string target;
  int64_t devices = 1;
  double flops = 0; // per device per step
  double computeSeconds = 0, commSeconds = 0, stepSeconds = 0;
  double overlapSeconds = 0;                 // communication hidden under compute
  std::map<std::string, double> computeByOp; // seconds per op name
  std::vector<CollectiveCost> collectives;
  MemoryCost memory;
  double memoryCapacity = 0;
  bool fits() const { return memory.peak() <= memoryCapacity; }
  // FLOPs per step over what the device's peak could do in the step time.
  double flopUtilization = 0;
  // Seconds per collective kind.
  std::map<std::string, double> commByKind() const;
  // Several lines: step time split, collectives by kind, memory against capacity.
  std::string str() const;
};

// The report as JSON, kept in the PEF for `shardc inspect --json`, `shardc report` and tools.
std::string costReportJson(const CostReport& r);

class CostModel {
public:
  static constexpr int64_t kNoKernel = -2;
  virtual ~CostModel() = default;
  virtual const Target& target() const = 0;
  // One step of the per-device program `perDevice` on `mesh`; `groupOf` (one entry per op in
  // program order, -1 for none) prices groups of ops as units: a section on targets with a
  // section model, a fused kernel of the executable plan on CPU targets, where an op marked
  // kNoKernel (a view, a constant made when the plan is bound) costs nothing. A `call` costs
  // its callee's ops, grouped by `bodyGroupOf[callee]` where it has an entry.
  virtual CostReport
  evaluate(const Function& perDevice, const Mesh& mesh,
           const std::vector<int64_t>* groupOf = nullptr,
           const std::map<std::string, std::vector<int64_t>>* bodyGroupOf = nullptr) const = 0;
};

std::unique_ptr<CostModel> makeAnalyticCostModel(Target target);

// Time of a group of ops run as one unit on `t` (Target::section): `flopSeconds` of
// arithmetic at the target's efficiency, against `ioBytes` of device-memory traffic; a
// pipeline (dataflow chip) streams both at once and fills one stage per computing op, a kernel
// adds its library calls' fixed costs; either pays one section start.
double sectionSeconds(const Target& t, double flopSeconds, double ioBytes, int64_t stages,
                      double libraryOverhead);

// Alpha-beta time of one collective of `kind` whose operand holds `bytes` on each device, over
// the group for `axes` (see the header comment for the layout on nodes). Exposed for tests.
CollectiveCost collectiveCost(const Target& t, const Mesh& mesh, const std::string& kind,
                              const std::vector<std::string>& axes, double bytes);

} // namespace shardc
