// Training checkpoints of `shardc run`: DIR/step-NNNNNNNN/ holds params.npz (the parameters,
// by name), state.npz (the opt_state: optimizer moments and step count, BatchNorm running
// statistics, dropout's random-number state) and progress.json (where the data loop stands and
// the run's arguments). A checkpoint is written into a hidden temporary folder and renamed
// into place, so every step-* folder is complete; the latest is the one of the highest step.
#pragma once

#include "shardc/ir/Tensor.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardc {

// Where a training run stands after `step` steps: in epoch `epoch`, `position` samples of
// that epoch's order consumed.
struct RunProgress {
  int64_t step = 0, epoch = 0, position = 0;
  bool shuffle = false;
  uint64_t dataSeed = 0;
  int64_t batch = 0; // samples per step (all replicas)
  uint64_t pef = 0;  // the PEF's checksum
  std::vector<std::string> arguments;
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Writes DIR/step-<step>; then removes the oldest checkpoints beyond `keep` (0: keep all).
// Throws shardc::Error; leaves no partial checkpoint.
void writeCheckpoint(const std::string& dir, const RunProgress& p, const NamedTensors& params,
                     const NamedTensors& state, int64_t keep);

struct Checkpoint {
  std::string path; // DIR/step-NNNNNNNN
  RunProgress progress;
  NamedTensors params, state;
};
// The latest checkpoint in `dir`. Throws shardc::Error when there is none or it is unreadable.
Checkpoint readLatestCheckpoint(const std::string& dir);

} // namespace shardc
