// What the stages of `shardc run` (Run.cpp) hand each other, and the stages.
#pragma once

#include "Executor.h"
#include "StepReporter.h"

#include "shardc/driver/Driver.h"
#include "shardc/driver/RunArrays.h"
#include "shardc/io/Checkpoint.h"
#include "shardc/io/Dataset.h"
#include "shardc/ir/IR.h"
#include "shardc/pef/Pef.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardc {

// One place a run's input comes from, a file or an array in memory: one way to read and check
// both.
class InputSource {
public:
  virtual ~InputSource() = default;
  // How messages name it: the file's path, or "input 'NAME'".
  virtual const std::string& what() const = 0;
  // How a type mismatch names what it read: "FILE holds", "the array given is".
  virtual std::string holding() const = 0;
  virtual Tensor read() = 0;
};

// A replacement for every parameter or opt_state entry: --weights, the Python module's weights
// and state, a checkpoint's files.
struct ArgumentsSource {
  NamedTensors tensors;
  ArgKind kind;
  std::string what, hint;
};

struct RunState {
  RunState(const RunOptions& options, RunArrays* arrays) : o(options), arrays(arrays) {}
  const RunOptions& o;
  RunArrays* arrays; // the Python module's arrays, in and out; null for the command line

  LoadedPef l;
  bool training = false, root = true; // root: the process that reports and writes
  std::string outputDir;

  // Where things come from, by input name; the datasets of --data and --eval-data.
  std::map<std::string, std::unique_ptr<InputSource>> inputs;
  std::vector<ArgumentsSource> replacements; // applied in order
  std::unique_ptr<Dataset> data, evalData;
  std::vector<std::pair<size_t, std::string>> fed; // argument index, input name (--data)
  std::map<std::string, Tensor> state;             // parameters and optimizer state, by name
  std::vector<Tensor> args;                        // the program's arguments, in order

  // The schedule: steps `at.step` up to `total`, over `epochs` of `data` in batches of
  // `batch`; `opLimit` >= 0 runs only the forward sections (evalLimit: for evaluations).
  RunProgress at;
  int64_t total = 1, epochs = 0, batch = 0, perEpoch = 0, stepSamples = 0;
  int64_t opLimit = -1, evalLimit = -1;
  int64_t before = 0; // steps shown after earlier runs (the Python module's)

  std::unique_ptr<Executor> exec;
  std::unique_ptr<StepReporter> report;
  std::optional<CheckpointLock> lock; // rank 0 writes the checkpoints
  int64_t checkpointed = 0;           // the step of the last checkpoint

  // What the steps left: outputs per step kept, seconds per step, the first step whose loss
  // was not finite, and whether a stop was asked for.
  std::vector<std::vector<Tensor>> perStep;
  std::vector<double> seconds;
  int64_t diverged = 0;
  bool interrupted = false;
  std::vector<std::pair<std::string, double>> stageSeconds; // the stages run so far (--stats)

  const Function& program() const { return *l.entry; }
  int64_t stepsRun() const { return static_cast<int64_t>(seconds.size()); }
};

// Every argument of `kind` by name, as the executor holds it now (whole).
NamedTensors argumentsOfKind(Executor& exec, const Function& f, ArgKind kind);

// RunSetup.cpp
void loadForRun(RunState& s);
void checkRunOptions(RunState& s);
void gatherSources(RunState& s);
void restoreState(RunState& s);
void bindArguments(RunState& s);
void scheduleSteps(RunState& s);
// RunLoop.cpp
void startExecution(RunState& s);
void runSteps(RunState& s);
// RunResults.cpp
void printStats(RunState& s);
void deliverResults(RunState& s);

} // namespace shardc
