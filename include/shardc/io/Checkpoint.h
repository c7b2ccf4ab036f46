// Training checkpoints of `shardc run`: DIR/step-NNNNNNNN/ holds params.npz (the parameters,
// by name), state.npz (the opt_state: optimizer moments and step count, BatchNorm running
// statistics, dropout's random-number state) and progress.json (where the data loop stands and
// the run's arguments). A checkpoint is written into a hidden temporary folder and renamed
// into place, so every step-* folder is complete; the latest is the one of the highest step.
// A run holds DIR/.lock while it writes there.
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
// progress.json's fields (`file` names it in errors); each a number in range or refused.
RunProgress parseProgress(const std::string& text, const std::string& file);
// The latest checkpoint in `dir`. Throws shardc::Error when there is none or it is unreadable.
Checkpoint readLatestCheckpoint(const std::string& dir);
// Refuses progress that no run over `samples` samples in batches of `batch` (0: a run
// without --data) could have written: a position beyond the data, more epochs than steps.
// (The batch may differ: a checkpoint resumes on another number of replicas.)
void checkProgress(const Checkpoint& c, int64_t samples, int64_t batch);

// Holds DIR/.lock for the life of a run that writes checkpoints into DIR, so that a second
// run on the same folder is refused at once rather than mixing its steps with the first's.
class CheckpointLock {
public:
  explicit CheckpointLock(const std::string& dir);
  ~CheckpointLock();
  CheckpointLock(const CheckpointLock&) = delete;
  CheckpointLock& operator=(const CheckpointLock&) = delete;

private:
  int fd_ = -1;
};

} // namespace shardc
