// The shardc commands behind the thin CLI in tools/shardc: compile, run, inspect, calibrate.
#pragma once

#include "shardc/train/TrainStep.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

// How to spread the program over devices. Nothing set: one device.
struct PartitionOptions {
  bool dataParallel = false;        // --data-parallel: replicas on a `data` axis of worldSize
  int64_t worldSize = 0;            // -ws
  std::string tensorParallel;       // --tensor-parallel batch|weight
  int64_t nChips = 0;               // --n-chips
  std::string mesh;                 // --mesh AXIS=N,...
  std::string strategy;             // --strategy FILE: user shardings, kept fixed
  bool shardOptimizerState = false; // --shard-optimizer-state: ZeRO over the data axis

  bool autoPartition = false;         // --auto-partition: search the shardings on --mesh
  std::string searchBudget;           // --search-budget N episodes or Ns seconds ("": the default)
  std::optional<uint64_t> searchSeed; // --search-seed
  std::string searchMode;             // --search-mode joint|per-axis ("": the default)
  // Support options (listed by --help --debug): the tree search's UCT constant, rollout
  // continuation probability and number of re-scored plans.
  std::optional<double> searchExploration, searchRolloutContinue;
  std::optional<int64_t> searchRescored;
  bool headAware = false; // set by --compiler-mode nlp (SearchParams::headAware)
  bool requested() const {
    return dataParallel || worldSize || !tensorParallel.empty() || nChips || !mesh.empty() ||
           !strategy.empty() || shardOptimizerState || autoPartition || !searchBudget.empty() ||
           searchSeed || !searchMode.empty() || searchExploration || searchRolloutContinue ||
           searchRescored;
  }
};

struct CompileOptions {
  std::string model;   // .onnx or text IR
  std::string pefName; // default: shardc-<date>-<time>-<pid>
  std::string outputFolder = "out";
  bool inference = false;
  std::optional<int64_t> batchSize;
  bool untieInitializers = false; // ONNX: parameters the exporter merged get their own copies
  std::string arch = "native";    // a built-in target name or a target file path
  std::string archFile;           // --arch-file: a target file; --arch must then be native
  bool verbose = false;
  bool debug = false;
  // Support options: the target's compute and memory efficiencies and its communication
  // overlap, overridden.
  std::optional<double> computeEfficiency, memoryEfficiency, commOverlap;
  // Support option: the gradient reduction's bucket size in MiB (0: one all-reduce each).
  std::optional<double> gradBucketMiB;
  std::string logDir; // default: the PEF's folder
  // Support options: keep a failed compile's temporary folder (see CompileOutputs); write
  // each section's kernels to LOG_DIR/kernels/.
  bool keepTemporaryFiles = false, dumpKernels = false;
  uint64_t seed = 0;  // initial values of text-IR parameters
  TrainOptions train; // without --inference
  PartitionOptions partition;
  int optLevel = 3;                     // -o0, -o1, -o3: how sections are formed
  bool hypersections = false;           // --enable-hypersection
  std::string hypersectionPattern;      // --hypersection-pattern (implies hypersections)
  std::string compilerMode = "default"; // --compiler-mode
  std::string optimizationRules;        // -o1: a rules file (default: shardc's own)
  std::vector<double> scalingFactors;   // --resources-scaling-factors: 3 or 4 in (0, 1]
  bool estimateOnly = false;            // plan and estimate, write nothing (no weights needed)
  // --recompute none|selective|full|auto ("": auto with --auto-partition, else none).
  std::string recompute;
  std::string precision = "f32"; // --precision f32|bf16
  // --micro-batches given (train.microBatches); else --auto-partition chooses how many
  // micro-batches the model's batch is split into when the step does not fit without them.
  bool microBatchesGiven = false;
  std::vector<std::string> commandLine; // recorded in the PEF
};

struct CompileResult {
  std::string pefPath;
  std::string logPath;
  std::string estimate; // the cost model's report for one step
};

// Imports, optimizes and packages the model. Throws shardc::Error; leaves no partial files.
CompileResult compileModel(const CompileOptions& options);

struct RunOptions {
  std::string pef;
  std::vector<std::string> inputs;      // NAME=FILE.npy
  std::string outputDir;                // "": out/<PEF name>/results under the working folder
  int64_t steps = 0;                    // 0: one, or with `data` the epochs' steps
  std::vector<std::string> data;        // --data NAME=FILE.npy: samples along the leading axis
  int64_t epochs = 0;                   // passes over `data` (0: 1 unless `steps` is given)
  bool shuffle = false;                 // each epoch in its own order (Dataset.h: sampleOrder)
  uint64_t dataSeed = 0;                // seed of that order
  std::vector<std::string> evalData;    // --eval-data NAME=FILE.npy: held-out samples
  int64_t evalEvery = 0;                // steps between evaluations (0: at each epoch's end)
  std::string metrics;                  // --metrics FILE.jsonl: one record per step and evaluation
  std::string checkpointDir;            // where checkpoints go
  int64_t checkpointEvery = 0;          // steps between checkpoints (0: only at the end)
  int64_t keep = 0;                     // checkpoints kept (0: all)
  std::string resume;                   // continue from the latest checkpoint in this folder
  std::vector<std::string> commandLine; // recorded in checkpoints
  std::string weights;                  // .npz overriding parameter values
  std::optional<int64_t> seed;          // dropout's seed (the PEF's random-number state)
  std::string saveWeights;              // .npz of the parameters after the run
  std::string saveState;          // .npz of the opt_state after the run (optimizer, model state)
  bool stopOnNonfinite = false;   // end the run with an error once the loss is NaN or infinite
  bool stats = false;             // print step times and the peak bytes each device held
  std::string statsJson;          // --stats-json FILE: the measured figures (RunStats.h)
  bool reference = false;         // run through the reference interpreter instead of the plan
  std::string sections;           // "forward": only a training PEF's forward sections (evaluation)
  bool measureSections = false;   // time every section beside the cost model's estimate
  int threads = 0;                // threads of the process, over its devices (0: every usable core)
  int64_t replicas = 0;           // data-parallel replicas as thread devices (0: as compiled)
  double collectiveTimeout = 300; // under mpirun: seconds a collective waits for the other ranks
};

struct RunArrays;
// Runs a PEF on the CPU and writes each output as DIR/<output-name>.npy; with `arrays`
// (RunArrays.h), takes its inputs, data and weights from memory and hands its results back
// there instead of writing them.
void runPef(const RunOptions& options, RunArrays* arrays = nullptr);

// Human-readable or JSON description of a PEF; `sections`: the text lists every section (the
// JSON always has them).
std::string inspectPef(const std::string& path, bool json, bool sections = false);
// The program a PEF runs (per device when partitioned), as text IR.
std::string pefProgram(const std::string& path);

struct ReportOptions {
  std::string pef;
  std::string output;  // default: the PEF's path with .html
  std::string metrics; // a run's --metrics file (JSON lines)
  std::string stats;   // a run's --stats-json file
};
// Writes the HTML page of `shardc report` atomically; returns its path.
std::string reportPef(const ReportOptions& options);

} // namespace shardc
