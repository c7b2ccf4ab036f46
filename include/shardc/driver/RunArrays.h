// `run` from memory (the Python module): arrays in place of run's files, in and out.
#pragma once

#include "shardc/io/Checkpoint.h"
#include "shardc/io/Dataset.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardc {

struct RunArrays {
  // In: each given one stands for its option's files.
  std::map<std::string, Tensor> inputs;                            // --input
  std::vector<std::pair<std::string, SampleArray>> data, evalData; // --data, --eval-data
  std::optional<NamedTensors> weights;                             // every parameter (--weights)
  std::optional<NamedTensors> state; // every opt_state entry, as a previous run left them
  // Steps previous runs of these weights took: step numbers (progress, metrics records,
  // checkpoints) go on from there, and the metrics file is appended to.
  int64_t stepsBefore = 0;
  // Out, in place of files: the outputs run writes (by output name), every parameter and
  // opt_state entry after the run, and the --metrics records (one JSON object each).
  NamedTensors outputs, params, stateAfter;
  std::vector<std::string> records;
  // Whether a stop was requested (Interrupt.h): the run ended after `stepsRun` steps, with
  // no outputs; params and stateAfter are those of its last finished step.
  bool interrupted = false;
  int64_t stepsRun = 0;
};

} // namespace shardc
