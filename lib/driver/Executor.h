// How `shardc run` steps a PEF's program: on one device, on threads as devices, or as this
// MPI rank's device, on whole arguments.
#pragma once

#include "shardc/collectives/MpiCollectives.h"
#include "shardc/exec/CompiledFunction.h"
#include "shardc/ir/Tensor.h"
#include "shardc/pef/Pef.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace shardc {
class DeviceThreads;

// Runs the program step by step; returns whole outputs (on MPI rank 0 only). Each device
// runs the PEF's executable plan on native kernels, or (`reference`) the reference
// interpreter.
class Executor {
public:
  // `timed`: time every kernel for times() (the interpreter always times its ops).
  Executor(const LoadedPef& l, std::vector<Tensor> wholeArgs, bool reference, int threads,
           bool timed = false);
  ~Executor();

  // One step; the whole value of the first `keep` results that are not tied to an argument
  // (all of them with kAll; empty tensors on MPI ranks other than 0). `opLimit` >= 0: only
  // the ops before it run (the forward sections), the arguments kept.
  static constexpr size_t kAll = static_cast<size_t>(-1);
  std::vector<Tensor> step(size_t keep, int64_t opLimit = -1);

  // Replaces input argument i (a whole value of its type) for the next steps.
  void setInput(size_t i, const Tensor& whole);
  // The whole value of argument i now (on MPI rank 0 only).
  Tensor argument(size_t i);

  // The most bytes one device held at once, over all steps: arguments and live op results
  // (the interpreter), or arguments, arena and constants (the compiled plan).
  // The most bytes one device of this process held (arguments, arena and scratch, constants).
  int64_t peakBytes() const;
  // The most each device held, in device order: this process's devices; under mpirun a
  // collective, every rank's on rank 0 (empty on the others).
  std::vector<int64_t> peakBytesByDevice() const;
  // A timed run's seconds over all steps and devices of this process: per kernel of the
  // plan (per op name in the interpreter), and for compiled runs per step of the plan by
  // label and by index.
  ExecStats times() const;

private:
  std::vector<Tensor> runDevice(size_t d, std::vector<Tensor>& args, Collectives* comm, size_t keep,
                                int64_t opLimit);
  std::vector<Tensor> shard(const std::vector<Tensor>& whole, int64_t device) const;
  Tensor gatherWhole(const Tensor& local, const TensorSharding& s);

  const LoadedPef& l_;
  const Function& f_;
  std::vector<Tensor> whole_; // unpartitioned programs: the arguments
  bool reference_, timed_;
  std::vector<size_t> untied_; // indices of the results that are not tied to an argument
  std::vector<std::vector<Tensor>> local_;                  // per device (one under MPI)
  std::vector<std::unique_ptr<CompiledFunction>> compiled_; // per device in this process
  std::unique_ptr<MpiCollectives> comm_;
  std::unique_ptr<DeviceThreads> devices_; // the mesh's devices as threads of this process
  std::mutex mu_;
  std::vector<int64_t> peaks_;                // per device of this process
  std::map<std::string, double> secondsByOp_; // the interpreter's
};

} // namespace shardc
