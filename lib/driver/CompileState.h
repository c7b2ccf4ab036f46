// What the stages of `shardc compile` (Compile.cpp) hand each other, and the stages. Each stage
// is a function of the state, run in the order of kCompileStages; the runner times, logs,
// verifies and dumps after each one.
#pragma once

#include "CompileLog.h"
#include "CompileOutputs.h"
#include "Partition.h"

#include "shardc/cost/CostModel.h"
#include "shardc/cost/Target.h"
#include "shardc/dataflow/FusionRules.h"
#include "shardc/dataflow/Sections.h"
#include "shardc/driver/Driver.h"
#include "shardc/ir/IR.h"
#include "shardc/pef/Pef.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace shardc {

struct CompileState {
  CompileState(CompileOptions& options, const Target& target, CompileLog& log, CompileOutputs& out)
      : o(options), target(target), log(log), out(out) {}

  CompileOptions& o;
  const Target& target;
  CompileLog& log;
  CompileOutputs& out;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  double elapsedMs() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
        .count();
  }
  std::string name;                  // the PEF's name
  std::filesystem::path dir, logDir; // where the PEF and the log go

  // Micro-batches the compiler chose (CompileMicroBatches.cpp): the model's batch is split into
  // o.train.microBatches before the training step is built. A stage that finds another count
  // better sets `restartWith`; the compile then starts over with it.
  bool splitBatch = false;
  int64_t restartWith = 0;
  // A trial of chooseMicroBatches: planned as the compile would (the memory stage then reports a
  // step that does not fit rather than failing), nothing written.
  bool trial = false;

  SectionOptions sections;
  std::optional<FusionRules> rules; // --optimization-rules
  std::optional<PartitionSetup> setup;

  // The model: its module, and the initial values of its parameters and state.
  std::unique_ptr<Module> module;
  std::unordered_map<const Op*, std::string> origins; // see outlineBlocks; cleared after use
  std::map<std::string, TensorRef> weights;
  std::map<std::string, TensorRef> state;       // opt_state the model brings (dropout's rng)
  std::map<std::string, Tensor> optimizerState; // the training step's
  double weightsMs = 0, copyMs = 0;             // time spent on the weights' bytes, not compiling
  int64_t paramCount = 0, paramBytes = 0;

  // The program the PEF runs: the model's function, or its per-device program once
  // partitioned (`partitioned`), on `mesh`.
  std::optional<Partitioned> partitioned;
  Mesh mesh;
  Function& model() const { return *module->functions()[0]; }
  Module& programModule() const { return partitioned ? *partitioned->program.module : *module; }
  Function& program() const { return *programModule().functions()[0]; }

  std::vector<Section> programSections;
  std::vector<HyperInstance> instances;
  std::vector<HypersectionBody> calledBodies; // the model's own calls, kept
  CostReport report;

  Pef pef;
  std::vector<std::pair<std::string, std::string>> artifacts; // beside the PEF: name, contents
  CompileResult result;
};

// A stage: its name (as --verbose and --debug's dumps show it), the function that runs it (null:
// the IR pass of that name, on every function of the program), and when it applies (null:
// always).
struct CompileStage {
  const char* name;
  void (*run)(CompileState&) = nullptr;
  bool (*applies)(const CompileState&) = nullptr;
};

// The stages, in order (Compile.cpp).
extern const std::vector<CompileStage> kCompileStages;

// CompileImport.cpp
void importModel(CompileState& s);
void applyModelHeuristics(CompileState& s);
void keepOrInlineCalls(CompileState& s);
// CompileProgram.cpp
void buildTraining(CompileState& s);
void describeSignature(CompileState& s);
void partition(CompileState& s);
void bucketGradients(CompileState& s);
// CompilePrecision.cpp
bool bf16(const CompileState& s); // --precision bf16
void lowerPrecision(CompileState& s);
void emulatePrecision(CompileState& s);
// CompileRecompute.cpp
std::string recomputeMode(const CompileOptions& o); // --recompute, with its default
void recompute(CompileState& s);
// What the search prices each plan with: the mode's rewrite, or for auto each mode in turn.
std::vector<std::function<void(Function&)>> recomputeVariants(const std::string& mode);
// CompileMicroBatches.cpp
bool choosesMicroBatches(const CompileState& s);
void chooseMicroBatches(CompileState& s);
// For the partition stage when the search finds no plan that fits: sets s.restartWith to the
// micro-batches that fit best, or returns false when no count fits (none is tried when `why`
// says no smaller batch would fit).
bool microBatchesWhenNothingFits(CompileState& s, const NoPlanFits& why);
// Compile.cpp: the controls' checks and the stages, for the trials of chooseMicroBatches.
void checkControls(CompileState& s);
void runStages(CompileState& s);
// CompileBackEnd.cpp
// One step of per-device program `f` on `mesh` as the sections and estimate stages price it:
// cut into sections, which reorders `f`, then priced section by section.
CostReport priceAsCompiled(const CompileState& s, Function& f, const Mesh& mesh);
// The program the PEF runs, priced so on a copy after `change` (if any) rewrites it.
CostReport priceProgramCopy(const CompileState& s,
                            const std::function<void(Function&)>& change = {});
void formProgramSections(CompileState& s);
void estimateStep(CompileState& s);
void planKernels(CompileState& s);
void checkMemory(CompileState& s);
void writePefFiles(CompileState& s);

} // namespace shardc
