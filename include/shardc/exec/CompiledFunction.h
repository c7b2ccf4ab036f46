// A device program bound to native kernels: the plan's steps, one arena, the constants.
// Made once per device when a PEF is loaded; each run() is one step and allocates nothing
// but the returned outputs.
#pragma once

#include "shardc/exec/ExecPlan.h"
#include "shardc/ir/Tensor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace shardc {
class Communicator;
class Function;
class Kernel;
struct ExecContext;
class Op;
class ValueNumbering;
namespace dnnl_glue {
struct Context;
}

struct ExecStats {
  int64_t peakBytes = 0; // arena and kernel scratch + constants + arguments + outputs
  std::map<std::string, double> secondsByKernel; // added up over runs
  std::map<std::string, double> secondsByStep;   // by step label (stepLabel), added up
  std::vector<double> secondsByStepIndex;        // by step of the plan, added up
};

// A hypersection body's function and plan, bound beside the program that calls it.
struct BodyPlan {
  const Function* function = nullptr;
  ExecPlan plan;
};

class CompiledFunction {
public:
  // `plan` must pass checkPlan against `f` (throws shardc::Error otherwise). `threads`:
  // intra-op threads of this device. `bodies`: the plans of the functions f's calls run.
  CompiledFunction(const Function& f, ExecPlan plan, int threads,
                   std::vector<BodyPlan> bodies = {});
  ~CompiledFunction();
  CompiledFunction(const CompiledFunction&) = delete;
  CompiledFunction& operator=(const CompiledFunction&) = delete;

  // One step on `args` (one per argument; types checked). Results tied to an argument are
  // left in that argument's tensor; the others, in result order, are in the returned
  // buffers, which the next run overwrites (the kernels write them in place: copy what you
  // keep).
  // `opLimit` >= 0 runs only the steps whose ops all come before op `opLimit` (the forward
  // sections of a training step) and leaves every argument as it was: the untied results
  // must be made by those steps.
  // `stats` gets the bytes held (peakBytes); kernel times are kept only once timeSteps().
  // A parameter no result is tied to is read-only between runs too: kernels may keep it in
  // their own layout while its buffer stays the same (convolution weights), and the steps that
  // read only such parameters and constants (an inference program's bf16 copies of its
  // weights) run again only when one comes in another buffer; so a new value comes in a new
  // tensor, not written into the old one.
  const std::vector<Tensor>& run(std::vector<Tensor>& args, Communicator* comm = nullptr,
                                 ExecStats* stats = nullptr, int64_t opLimit = -1);

  // One run of a body from a call step: `args` and `results` are the caller's buffers of
  // the call's operands and results. A result tied to an argument is left in that argument's
  // buffer (and not in `results`).
  void runCall(const std::vector<uint8_t*>& args, const std::vector<uint8_t*>& results,
               Communicator* comm);

  // From now on, every run times each step (its bodies' steps too). Off by default: a
  // clock read per step and its bookkeeping cost ~5% of a small model's step.
  void timeSteps();
  // The seconds timed so far, added to `into`'s maps by kernel and label, and by step index
  // (this function's steps; a body's count under their kernels and labels only).
  void addTimes(ExecStats& into) const { addTimes(into, true); }

  const ExecPlan& plan() const { return plan_; }
  const Function& function() const { return f_; }
  // "#7 matmul [transpose matmul add] -> f32[8,128,768]": the step, its ops and its result.
  const std::string& stepLabel(size_t step) const { return labels_[step]; }

private:
  struct BodyTag {};
  CompiledFunction(const Function& f, ExecPlan plan, int threads, BodyTag);
  void bind(const std::map<std::string, CompiledFunction*>* bodies);
  // Points every stored value at its buffer: arguments and untied results through `argPtr`
  // and `resultPtr`.
  template <typename ArgPtr, typename ResultPtr>
  void homes(ExecContext& ctx, ArgPtr argPtr, ResultPtr resultPtr);
  void runSteps(ExecContext& ctx, int64_t opLimit);
  // Marks the steps that read only fixed parameters and constants (held_) and gives their
  // stored results buffers of their own (heldBytes_), kept between runs.
  void holdFixedSteps(const ValueNumbering& num);
  void runStep(ExecContext& ctx, size_t s);
  void addTimes(ExecStats& into, bool indexed) const;

  const Function& f_;
  ExecPlan plan_;
  int threads_;
  std::unique_ptr<dnnl_glue::Context> dnnl_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<std::string> labels_;
  std::vector<const Op*> anchors_; // each step's last op, which errors name
  std::vector<uint8_t> arena_;     // the plan's arena, then the kernels' scratch
  size_t scratch_ = 0;
  std::map<int64_t, Tensor> constants_; // by value id
  std::vector<bool> held_;              // per step: reads only fixed parameters and constants
  std::map<int64_t, std::vector<uint8_t>> heldBytes_; // a held step's stored results, by id
  std::vector<size_t> fixedArgs_;                     // parameters no result is tied to
  std::vector<const uint8_t*> heldFrom_; // their buffers when the held steps last all ran
  std::vector<Tensor> results_;          // the untied results, one buffer each
  std::vector<int64_t> resultIds_;       // the plan's value id of each function result
  std::vector<std::unique_ptr<CompiledFunction>> bodies_;
  std::vector<uint8_t> staging_; // a body's tied results not written in place, before copying
  bool timed_ = false;
  std::vector<double> stepSeconds_; // per step, added up over runs (when timed_)
};

// OpenMP threads that spin while they wait hold the cores a descheduled thread needs: beside
// one busy process, a step of a 2-core machine took 4-8x its idle time. Unless the user chose
// a wait policy (OMP_WAIT_POLICY or GOMP_SPINCOUNT in the environment), sets a short spin
// (GOMP_SPINCOUNT for shardc/support/SpinTiming.h's kSpinMicros, timed on this CPU) and
// restarts the program with `argv` so that OpenMP reads it. The main of a program that runs
// kernels calls it first.
void settleWaitPolicy(char** argv);
// The cores this process may run on: its CPU affinity, within its cgroup's CPU quota.
int usableCores();
// The tightest CPU quota on the way from the process's cgroup (read from `procCgroup`, as
// /proc/self/cgroup) to the root, under `cgroupRoot` (/sys/fs/cgroup): v2's cpu.max, or v1's
// cpu controller (cpu/...: cpu.cfs_quota_us over cpu.cfs_period_us), as whole cores rounded up
// (1.5 cores still run two threads part of the time); 0: no quota.
int cgroupCpuLimit(const std::string& procCgroup, const std::string& cgroupRoot);
// The intra-op threads each device gets when `devices` devices share this process (and MPI
// ranks share the host): the usable cores divided among them, at least one; `requested` > 0
// (--threads), else the environment's SHARDC_THREADS, caps it.
int intraOpThreads(int64_t devicesInProcess, int requested);

} // namespace shardc
