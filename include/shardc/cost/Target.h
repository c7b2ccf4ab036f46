// A hardware target: the published (or measured) figures the cost model works from. Targets
// are data files under targets/ (one per chip, each figure with its source in a comment);
// `shardc calibrate` measures this machine and writes one.
#pragma once

#include "shardc/ir/Types.h"

#include <map>
#include <string>
#include <vector>

namespace shardc {

// A link between devices: time to send n bytes is latency + n / bandwidth.
struct LinkSpec {
  double bandwidth = 0; // bytes per second, one direction, per device
  double latency = 0;   // seconds
  // Devices that outnumber the host's cores (computeUnits) take turns on them: a collective
  // then also waits for peers to be scheduled, this many seconds per collective for each
  // device per core past the first (measured by `shardc calibrate`; 0 where not measured).
  double oversubscribedWait = 0;
};

// What one section (a group of ops that runs as one unit, lib/dataflow) may use and how it
// runs. `pipeline`: a dataflow chip lays the section's ops out spatially and streams tiles
// through them (RDU); `kernel`: the section is one fused kernel launch (GPU, CPU).
struct SectionSpec {
  enum class Model { Kernel, Pipeline };
  Model model = Model::Kernel;
  int64_t computeUnits = 64;    // units a section may occupy (PCUs; SMs; ops per CPU kernel)
  double memory = 1e6;          // on-chip bytes a section may use (SRAM; shared memory; cache)
  double tileBytes = 64e3;      // on-chip buffer of one intermediate in flight
  bool weightsOnChip = false;   // the section holds the weights it reads on chip
  double switchOverhead = 1e-6; // seconds to start a section (load its program / a launch)
  double stageLatency = 0;      // pipeline: seconds one tile takes through one stage (fill)
};

struct Target {
  std::string name;
  std::string description;
  std::map<DType, double> peakFlops; // FLOP/s per device, dense, by dtype
  double memoryBandwidth = 0;        // bytes per second, device memory (HBM/DDR)
  double memoryCapacity = 0;         // bytes per device
  // Fractions of peak that real kernels reach (roofline efficiency factors).
  double computeEfficiency = 1;
  double memoryEfficiency = 1;
  // Fraction of the shorter of compute and communication that runs under the other (a
  // runtime whose collectives are asynchronous); 0, shardc's runtime, blocks on them.
  double commOverlap = 0;
  double opOverhead = 0;        // seconds per op launched (kernel launch / section switch)
  double gemmOverhead = 0;      // seconds more per matmul or convolution (a library call)
  double gemmBatchOverhead = 0; // seconds more per matrix of a batched matmul past the first
  int64_t devicesPerNode = 1;   // devices sharing the fast link
  LinkSpec intraNode;           // within a node (NVLink, RDU-to-RDU)
  LinkSpec interNode;           // between nodes (InfiniBand, Ethernet)
  // Simulated devices on a CPU share the host's compute units (cores); 0: every device has
  // its own hardware. The figures above were measured by one device on deviceComputeUnits of
  // them. With d devices on the host, each gets computeUnits / d units: FLOP- and byte-bound
  // time stretches by d * deviceComputeUnits / computeUnits, fixed costs (op overheads, link
  // latencies) only once devices outnumber units, by d / computeUnits (never below 1).
  int64_t computeUnits = 0;
  int64_t deviceComputeUnits = 1;
  SectionSpec section;

  // Peak FLOP/s for a dtype: its own figure, else f32's.
  double flopsFor(DType t) const;
};

// Parses a target file (YAML: the fields above in snake_case, as in targets/h100.yaml, plus an
// `info` map of descriptive figures the model does not use); throws shardc::Error naming the
// file and the field that is missing, unknown or makes no sense (negative bandwidth, zero
// memory, ...).
Target parseTarget(const std::string& text, const std::string& filename);
// A target by name (sn10, sn20, sn30, sn40l, a100, h100, h200, cpu; native means cpu) from
// the targets/*.yaml files compiled into shardc, or a target file when `nameOrPath` is a path
// (contains '/' or ends in .yaml or .yml).
Target loadTarget(const std::string& nameOrPath);
// The built-in target names, sorted (`native` not included).
std::vector<std::string> builtinTargetNames();
// Whether the compiled runtime hands op `op` to the GEMM/convolution library, a call that
// costs Target::gemmOverhead more (matmul, the conv2d ops).
bool isLibraryGemm(const std::string& op);

} // namespace shardc
