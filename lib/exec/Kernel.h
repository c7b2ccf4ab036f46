// The kernel interface of the compiled runtime. A kernel is bound once per plan step, with
// its shapes resolved (and, for library kernels, its primitive created); each run it reads
// and writes raw buffers through the step's value ids. Kernels see local shapes and
// buffers only: nothing of shardings or the search.
#pragma once

#include "PlanUtil.h"

#include "shardc/exec/ExecPlan.h"
#include "shardc/ir/Tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace shardc {
class Communicator;
class CompiledFunction;
class Op;

namespace dnnl_glue {
struct Context; // the oneDNN engine and stream of one CompiledFunction
}

// What a running step sees: every value's bytes now (null for values never stored).
struct ExecContext {
  std::vector<uint8_t*> ptr;
  Communicator* comm = nullptr;
  int threads = 1; // intra-op threads this device may use
  dnnl_glue::Context* dnnl = nullptr;
  uint8_t* scratch = nullptr; // scratchBytes() of the running kernel, shared by all steps
};

// Runs `body` on `threads` OpenMP threads, or inline on one: a serial OpenMP region still
// allocates a team and makes futex calls (about 160 per step of a small GPT's 212 kernels).
// The body splits its work with orphaned `#pragma omp for`/`barrier`, which bind to the
// region when there is one and run everything on the caller when there is none.
template <typename Body> void parallelRegion(int threads, Body&& body) {
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    body();
  } else {
    body();
  }
}

class Kernel {
public:
  virtual ~Kernel() = default;
  virtual void run(ExecContext& ctx) = 0;
  // Bytes of working memory the kernel needs during run() (ExecContext::scratch).
  virtual int64_t scratchBytes() const { return 0; }
};

// What a kernel is bound from: the step, the program's numbering and the plan.
struct BindArgs {
  const PlanStep& step;
  const ValueNumbering& num;
  const ExecPlan& plan;
  dnnl_glue::Context* dnnl;
  const std::map<int64_t, Tensor>& constants; // the values computed at bind time, by id
  std::vector<const Op*> ops;                 // the step's ops, in program order
  // The bound hypersection bodies a call step runs, by function name.
  const std::map<std::string, CompiledFunction*>* bodies = nullptr;
  const Op& anchor() const { return *ops.back(); }
  bool stored(const class Value* v) const;
};

// Binds the step's kernel; throws shardc::Error when the step's ops do not fit its kernel.
std::unique_ptr<Kernel> bindKernel(const BindArgs& a);

// The families (one file each). bindElementwise and bindWide return null for a step that is
// not theirs; the others bind the steps that the family table (KernelRegistry.cpp) gives them.
std::unique_ptr<Kernel> bindElementwise(const BindArgs& a);
std::unique_ptr<Kernel> bindWide(const BindArgs& a);
std::unique_ptr<Kernel> bindMatmul(const BindArgs& a);
std::unique_ptr<Kernel> bindBf16Matmul(const BindArgs& a); // bindMatmul's, for bf16 steps
std::unique_ptr<Kernel> bindConv(const BindArgs& a);
std::unique_ptr<Kernel> bindNorm(const BindArgs& a);
std::unique_ptr<Kernel> bindReduce(const BindArgs& a);
std::unique_ptr<Kernel> bindShape(const BindArgs& a);
std::unique_ptr<Kernel> bindIndex(const BindArgs& a);
std::unique_ptr<Kernel> bindPool(const BindArgs& a);
std::unique_ptr<Kernel> bindRandom(const BindArgs& a);
std::unique_ptr<Kernel> bindCall(const BindArgs& a);
// Whether bindWide has a kernel for this single elementwise op of a dtype outside the lanes.
bool hasWideKernel(const Op& op);
// Runs an op's registry kernel on copies of its operands (reference fallback, collectives).
std::unique_ptr<Kernel> bindRegistryKernel(const BindArgs& a);

// Runs the single op of `op` through its registry kernel on tensors (bind-time constants).
std::vector<Tensor> runRegistryKernel(const Op& op, const std::vector<const Tensor*>& inputs);

} // namespace shardc
