// shardc calibrate: measures what shardc's own runtime (the compiled plan's native kernels,
// the threads of one device, and its collectives) reaches on this machine, and writes it as a
// target file, so that the cost model can predict `shardc run` rather than the hardware's peak.
#include "shardc/cost/Calibrate.h"
#include "shardc/collectives/MpiCollectives.h"
#include "shardc/collectives/ThreadCollectives.h"
#include "shardc/cost/CostModel.h"
#include "shardc/cost/Target.h"
#include "shardc/exec/CompiledFunction.h"
#include "shardc/ir/Builder.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"
#include "shardc/train/TrainStep.h"
#include "shardc/transforms/Passes.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace shardc {
namespace {

// How much each measurement does; --quick shrinks it for tests.
struct Sizes {
  int runs;
  int64_t matmulN;   // n x n x n matmul
  int64_t addN;      // elements of each elementwise operand
  int64_t chainOps;  // tiny ops timed for the per-op overhead
  int64_t reduceBig; // f32 elements of the large all_reduce
};

double seconds(const std::function<void()>& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The median of `runs` timed calls after `warmup` untimed ones, or untimed ones for at least
// 50 ms when `warmup` is 0 (collectives need the same count of calls on every device): a
// process's first milliseconds run slower here (a 512^3 matmul took up to 1.6x its settled
// time over its first 20 ms), and figures measured cold would not describe a step of a run.
// A median, as `run --stats` reports steps, so that figures and measurements agree.
double medianSeconds(int runs, const std::function<void()>& fn, int warmup = 0) {
  if (warmup > 0)
    for (int i = 0; i < warmup; ++i)
      fn();
  else
    for (double warm = 0; warm < 0.05;)
      warm += seconds(fn);
  std::vector<double> t;
  for (int i = 0; i < runs; ++i)
    t.push_back(seconds(fn));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The mean of `runs` calls after 10 untimed ones, for what a step pays summed over many
// calls whose times vary from call to call (a collective's wait for its peers).
double meanSeconds(int runs, const std::function<void()>& fn) {
  for (int i = 0; i < 10; ++i)
    fn();
  return seconds([&] {
           for (int i = 0; i < runs; ++i)
             fn();
         }) /
         runs;
}

Tensor ones(const TensorType& t) {
  return Tensor::fromDoubles(t, std::vector<double>(static_cast<size_t>(t.numel()), 1.0));
}

// A one-op function `result = opName(a, b)` over arguments of type `t`.
struct OneOp {
  Module module;
  Function* f;
  Op* op;
  OneOp(const std::string& opName, const TensorType& t) {
    f = module.addFunction("calibrate");
    Builder b(*f);
    op = b.create(opName,
                  {f->addArgument("a", t, ArgKind::Input), f->addArgument("b", t, ArgKind::Input)});
    f->addResult("r", op->result());
  }
  // FLOPs and bytes as the registry (and so the cost model) counts them.
  std::pair<double, double> cost() const {
    std::vector<TensorType> in{op->operand(0)->type(), op->operand(1)->type()};
    std::vector<TensorType> out{op->result()->type()};
    OpSig sig{in, op->attrs()};
    return {op->def().flopCount(sig, out), op->def().byteCount(sig, out)};
  }
  double time(int runs) const {
    std::vector<Tensor> args{ones(op->operand(0)->type()), ones(op->operand(1)->type())};
    CompiledFunction cf(*f, buildPlan(*f), intraOpThreads(1, 0));
    return medianSeconds(runs, [&] { cf.run(args); });
  }
};

double matmulFlops(DType dt, const Sizes& s) {
  OneOp m("matmul", {dt, {s.matmulN, s.matmulN}});
  return m.cost().first / m.time(s.runs);
}

struct ElementwiseFit {
  double bandwidth;
  double overhead;
  bool fitted; // false: noise hid the size effect, and the largest add's rate stands in
};

// Elementwise adds of several sizes, fitted to T = overhead + bytes / bandwidth: the small
// sizes the models here use are mostly in cache, where one large add would understate the
// rate several times over. The fit minimizes relative residuals (weights 1 / T^2): plain least
// squares lets a few percent of noise on the largest add, hundreds of microseconds, land in the
// intercept, the per-op overhead. On a loaded machine (or under sanitizers) the noise can
// exceed the size effect and give a slope of zero or below; then the largest add's bytes /
// time, a lower bound on the rate, is used and the file says so.
ElementwiseFit fitElementwise(const Sizes& s) {
  std::vector<double> xs, ts;
  for (int64_t n = 256; n <= s.addN; n *= 4) {
    OneOp m("add", {DType::F32, {n}});
    xs.push_back(m.cost().second);
    ts.push_back(m.time(s.runs));
  }
  double sw = 0, sx = 0, st = 0, sxx = 0, sxt = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double w = 1 / (ts[i] * ts[i]);
    sw += w, sx += w * xs[i], st += w * ts[i], sxx += w * xs[i] * xs[i], sxt += w * xs[i] * ts[i];
  }
  double slope = (sw * sxt - sx * st) / (sw * sxx - sx * sx);
  if (!(slope > 0)) return {xs.back() / ts.back(), 0.0, false};
  double intercept = (st - slope * sx) / sw;
  return {1 / slope, std::max(intercept, 0.0), true};
}

// Seconds per kernel of a chain of softmaxes on f32[1,1] (each its own kernel: nothing fuses
// them): the runtime's fixed cost per kernel, no work.
double opOverhead(const Sizes& s) {
  Module module;
  Function* f = module.addFunction("calibrate");
  Value* x = f->addArgument("x", {DType::F32, {1, 1}}, ArgKind::Input);
  Builder b(*f);
  Value* v = x;
  for (int64_t i = 0; i < s.chainOps; ++i)
    v = b.value("softmax", {v});
  f->addResult("r", v);
  std::vector<Tensor> args{ones(x->type())};
  CompiledFunction cf(*f, buildPlan(*f), intraOpThreads(1, 0));
  return medianSeconds(5 * s.runs, [&] { cf.run(args); }) / static_cast<double>(s.chainOps);
}

// The runtime's fixed cost per kernel as a plan pays it: kernels of different kinds over
// different buffers one after another (code, branch history and data change at every step;
// a chain of one tiny kernel keeps them all warm and costs a fraction of that). The Adam
// training step of a 16-layer block of f32[32,64] (matmul, bias, gelu, softmax, a scale;
// mse loss), planned as `compile` plans it, is timed, less the work the cost model prices
// its kernels at with the figures measured so far (`figures`, no overhead), per kernel.
double planKernelOverhead(const Sizes& s, const Target& figures) {
  constexpr int64_t kRows = 32, kWidth = 64, kLayers = 16;
  Module module;
  Function* f = module.addFunction("calibrate");
  Builder b(*f);
  Value* h = f->addArgument("x", {DType::F32, {kRows, kWidth}}, ArgKind::Input);
  for (int64_t l = 0; l < kLayers; ++l) {
    std::string n = std::to_string(l);
    Value* w = f->addArgument("w" + n, {DType::F32, {kWidth, kWidth}}, ArgKind::Param);
    Value* bias = f->addArgument("b" + n, {DType::F32, {kWidth}}, ArgKind::Param);
    Value* scale = f->addArgument("s" + n, {DType::F32, {kRows, kWidth}}, ArgKind::Input);
    h = b.value("gelu", {b.value("add", {b.value("matmul", {h, w}), bias})});
    h = b.value("mul", {b.value("softmax", {h}), scale});
  }
  f->addResult("r", h);
  TrainOptions train;
  train.loss = "mse";
  train.optimizer = "adam";
  TrainStepInfo info = buildTrainStep(*f, train);
  for (const char* pass :
       {"canonicalize", "cse", "dce", "fold-product-transposes", "rematerialize"})
    findPass(pass)->run(*f);
  std::vector<Tensor> args;
  for (size_t i = 0; i < f->numArguments(); ++i) {
    const Value* a = f->argument(i);
    auto state = info.optimizerState.find(a->name());
    args.push_back(state != info.optimizerState.end() ? state->second : ones(a->type()));
  }
  ExecPlan plan = buildPlan(*f);
  auto numOps = static_cast<int64_t>(f->ops().size());
  std::vector<int64_t> kernelOf = plan.stepOfOps(numOps);
  std::replace(kernelOf.begin(), kernelOf.end(), int64_t{-1}, CostModel::kNoKernel);
  double work = makeAnalyticCostModel(figures)->evaluate(*f, Mesh(), &kernelOf).stepSeconds;
  auto kernels = static_cast<double>(plan.steps.size());
  CompiledFunction cf(*f, std::move(plan), intraOpThreads(1, 0));
  return std::max(0.0, medianSeconds(5 * s.runs, [&] { cf.run(args); }) - work) / kernels;
}

// What a small GEMM takes beyond its FLOPs at the large GEMM's rate and the runtime's
// per-kernel cost: the median over square matmuls of 16 to 128 (the sizes of small models,
// where packing and the library call weigh as much as the arithmetic).
double gemmOverhead(const Sizes& s, double rate, double opOverhead) {
  std::vector<double> extra;
  for (int64_t n = 16; n <= 128; n *= 2) {
    OneOp m("matmul", {DType::F32, {n, n}});
    extra.push_back(m.time(s.runs) - m.cost().first / rate - opOverhead);
  }
  std::sort(extra.begin(), extra.end());
  return std::max(0.0, extra[extra.size() / 2]);
}

// What each matrix past the first adds to a batched matmul beyond its FLOPs at the large
// GEMM's rate: attention's many small products (8x8x8 here) pay for every matrix of the batch.
double gemmBatchOverhead(const Sizes& s, double rate) {
  constexpr int64_t kBatch = 128;
  auto time = [&](int64_t batch) {
    OneOp m("matmul", {DType::F32, {batch, 8, 8}});
    return m.time(s.runs) - m.cost().first / rate;
  };
  double one = time(1);
  return std::max(0.0, (time(kBatch) - one) / static_cast<double>(kBatch - 1));
}

// all_reduce over every device, timed on device 0: the mean seconds for f32[1] (a step pays
// the sum of many) and the median for f32[big]. Each device makes the same calls.
std::pair<double, double> allReduceTimes(Collectives& c, const Sizes& s) {
  std::vector<std::string> axes{c.mesh().axes()[0].name};
  Tensor one = ones({DType::F32, {1}}), big = ones({DType::F32, {s.reduceBig}});
  double small = meanSeconds(20 * s.runs, [&] { c.allReduce(one, axes); });
  return {small, medianSeconds(
                     s.runs, [&] { c.allReduce(big, axes); }, 1)};
}

// The cost model's ring all_reduce over g devices takes 2(g-1) steps of latency + n/g bytes
// over the link (on 2 devices: 2 latency + n / bandwidth); fit both from a 4-byte and a large
// reduction. With `share` > 1 devices per core, the model stretches a collective by `share`
// (Target::computeUnits): the fit takes that out.
LinkSpec fitLink(std::pair<double, double> times, int64_t bigElements, int64_t group,
                 double share = 1) {
  times.first /= std::max(1.0, share);
  times.second /= std::max(1.0, share);
  double steps = 2.0 * static_cast<double>(group - 1);
  double bytes = 4.0 * static_cast<double>(bigElements) / static_cast<double>(group);
  return {steps * bytes / std::max(times.second - times.first, 1e-9), times.first / steps};
}

LinkSpec threadLink(const Sizes& s) {
  Mesh mesh({{"x", 2}});
  std::pair<double, double> times;
  runOnDevices(mesh, [&](Collectives& c) {
    auto t = allReduceTimes(c, s);
    if (c.device() == 0) times = t;
    return std::vector<Tensor>{};
  });
  return fitLink(times, s.reduceBig, 2);
}

// Work for one core that no compiler drops or spreads: a chain of multiply-adds through
// memory.
void spin(int64_t iterations) {
  volatile double x = 1;
  for (int64_t i = 0; i < iterations; ++i)
    x = x * 0.999 + 0.002;
}

// Iterations of spin() that take about 20 us on one core: a step's work between two
// collectives in a small partitioned model.
int64_t spinFor20us(const Sizes& s) {
  constexpr int64_t kProbe = 100000;
  double t = medianSeconds(s.runs, [] { spin(kProbe); });
  return std::max<int64_t>(1, static_cast<int64_t>(20e-6 / t * kProbe));
}

// What a collective waits for peers to be scheduled when `share` devices take turns on each
// core (share > 1): each device alternates about 20 us of work (`work` seconds alone) and an
// all_reduce of f32[1], which alone takes `alone` back to back; the iteration's time beyond
// the work of `share` devices and that all_reduce, per device per core past the first.
// Means (meanSeconds). Timed on device 0; every device makes the same calls.
double waitPerCollective(Collectives& c, const Sizes& s, int64_t iterations, double work,
                         double share) {
  std::vector<std::string> axes{c.mesh().axes()[0].name};
  Tensor t = ones({DType::F32, {1}});
  int runs = 20 * s.runs;
  double alone = meanSeconds(runs, [&] { c.allReduce(t, axes); });
  double both = meanSeconds(runs, [&] {
    spin(iterations);
    c.allReduce(t, axes);
  });
  return std::max(0.0, both - share * work - alone) / (share - 1);
}

// The spin that makes about 20 us of work, and what it takes alone.
struct WaitProbe {
  int64_t iterations;
  double work;
  explicit WaitProbe(const Sizes& s)
      : iterations(spinFor20us(s)), work(medianSeconds(s.runs, [&] { spin(iterations); })) {}
};

// Thread devices, twice as many as the cores, kept across runs as `shardc run` keeps them: the
// mean of 9 runs (one run's wait ranged from 0 to 35 us here, as its threads happened to
// share the cores).
double threadWait(const Sizes& s, unsigned cores) {
  WaitProbe p(s);
  constexpr int kRounds = 9;
  double sum = 0;
  DeviceThreads devices(Mesh({{"x", 2 * static_cast<int64_t>(cores)}}));
  for (int round = 0; round < kRounds; ++round)
    devices.run([&](Collectives& c) {
      double w = waitPerCollective(c, s, p.iterations, p.work, 2.0);
      if (c.device() == 0) sum += w;
      return std::vector<Tensor>{};
    });
  return sum / kRounds;
}

// MPI ranks, `share` to a core: rank 0 times the spin alone, while the others wait in the
// all_reduce that then hands its figures to every rank.
double mpiWait(Collectives& c, const Sizes& s, double share) {
  Tensor figures = Tensor::fromDoubles({DType::F64, {2}}, {0, 0});
  if (c.device() == 0) {
    WaitProbe p(s);
    figures = Tensor::fromDoubles({DType::F64, {2}}, {static_cast<double>(p.iterations), p.work});
  }
  figures = c.allReduce(figures, {c.mesh().axes()[0].name});
  return waitPerCollective(c, s, static_cast<int64_t>(figures.getDouble(0)), figures.getDouble(1),
                           share);
}

double memTotalBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double kb = 0;
  while (in >> key >> kb >> unit)
    if (key == "MemTotal:") return kb * 1024;
  throw Error("calibrate: cannot read MemTotal from /proc/meminfo");
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string hostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "this machine";
  std::string h;
  for (char c : std::string(buf)) // keep the YAML string plain
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') h += c;
  return h.empty() ? "this machine" : h;
}

} // namespace

namespace {

// What calibrate measured, to write as a target file and summarize.
struct Measured {
  Sizes s;
  unsigned threads = 1;
  std::map<DType, double> flops;
  ElementwiseFit add;
  double overhead = 0, gemm = 0, perMatrix = 0, memory = 0;
  LinkSpec intra, inter;
  std::optional<LinkSpec> mpiLink; // measured between MPI ranks
  int ranks = 0;
  double ranksPerCore = 0;
};

// Every rank takes part in the MPI measurement.
void measureMpi(Measured& m) {
  m.ranks = mpi::worldSize();
  MpiCollectives comm(Mesh({{"world", m.ranks}}));
  // Rank 0's host decides for all: every rank must make the same collectives.
  double onHost = static_cast<double>(mpi::ranksOnHost()) / m.threads; // collective: all call it
  Tensor share = Tensor::fromDoubles({DType::F64, {1}}, {mpi::worldRank() == 0 ? onHost : 0.0});
  m.ranksPerCore = comm.allReduce(share, {"world"}).getDouble(0);
  m.mpiLink = fitLink(allReduceTimes(comm, m.s), m.s.reduceBig, m.ranks, m.ranksPerCore);
  if (m.ranksPerCore > 1) m.mpiLink->oversubscribedWait = mpiWait(comm, m.s, m.ranksPerCore);
}

// The kernels and the thread devices of this process (rank 0 alone, under mpirun).
void measureKernels(Measured& m) {
  const Sizes& s = m.s;
  for (DType dt : {DType::F32, DType::BF16, DType::F16})
    m.flops[dt] = matmulFlops(dt, s);
  m.add = fitElementwise(s);
  // A kernel's fixed cost: what an add pays beyond its bytes, at least a tiny kernel's cost;
  // then what the kernels of a plan pay beyond their work.
  double chainOverhead = std::max(m.add.overhead, opOverhead(s));
  m.gemm = gemmOverhead(s, m.flops[DType::F32], chainOverhead);
  m.perMatrix = gemmBatchOverhead(s, m.flops[DType::F32]);
  Target figures;
  figures.peakFlops = m.flops;
  figures.memoryBandwidth = m.add.bandwidth;
  figures.gemmOverhead = m.gemm;
  figures.gemmBatchOverhead = m.perMatrix;
  figures.computeUnits = figures.deviceComputeUnits = intraOpThreads(1, 0);
  m.overhead = std::max(chainOverhead, planKernelOverhead(s, figures));
  m.memory = memTotalBytes();
  m.intra = threadLink(s);
  m.intra.oversubscribedWait = threadWait(s, m.threads);
  m.inter = m.mpiLink ? *m.mpiLink : loadTarget("cpu").interNode;
}

// The target file, each figure with how it was measured.
std::string targetYaml(const Measured& m, bool quick) {
  const Sizes& s = m.s;
  std::string n = std::to_string(s.matmulN), big = std::to_string(s.reduceBig);
  std::ostringstream y;
  y << "# Measured by `shardc calibrate" << (quick ? " --quick" : "") << "` on " << hostName()
    << " at " << utcNow() << ":\n"
    << "# what shardc's runtime (compiled plans on native kernels, " << intraOpThreads(1, 0)
    << " threads per device) reaches here.\n"
    << "name: calibrated\n"
    << "description: \"shardc's runtime on " << hostName() << ", measured " << utcNow() << "\"\n"
    << "peak_flops:            # matmul " << n << "x" << n << "x" << n << ", median of " << s.runs
    << " runs\n";
  for (const auto& [dt, f] : m.flops)
    y << "  " << dtypeName(dt) << ": " << num(f) << "\n";
  y << "memory_bandwidth: " << num(m.add.bandwidth) << "  # adds of f32[256] to f32[" << s.addN
    << (m.add.fitted ? "] fitted to T = op_overhead + bytes / bandwidth (relative residuals)\n"
                     : "]: timing noise hid the size effect; the largest add's bytes / time\n")
    << "memory_capacity: " << num(m.memory) << "   # MemTotal in /proc/meminfo\n"
    << "compute_efficiency: 1   # the figures above are reached, not peaks\n"
    << "memory_efficiency: 1\n"
    << "op_overhead: " << num(m.overhead)
    << "     # per kernel of a 16-layer MLP block's plan beyond its work, at least the fit's\n"
    << "                      # intercept and the per-kernel time of " << s.chainOps
    << " chained softmaxes of f32[1,1]\n"
    << "gemm_overhead: " << num(m.gemm)
    << "   # median of matmuls of 16^3 to 128^3 beyond flops / peak and op_overhead\n"
    << "gemm_batch_overhead: " << num(m.perMatrix)
    << "   # f32[128,8,8] x f32[128,8,8] against f32[1,8,8] x f32[1,8,8], per matrix\n"
    << (m.ranks ? "devices_per_node: 1     # every rank reaches the others through MPI "
                  "(inter_node)\n"
                : "devices_per_node: " + std::to_string(kMaxThreadDevices) +
                      "   # a process's thread devices share its memory (intra_node)\n")
    << "compute_units: " << m.threads << "        # std::thread::hardware_concurrency\n"
    << "device_compute_units: " << intraOpThreads(1, 0)
    << "   # the threads the figures above were measured with\n"
    << "intra_node:             # all_reduce of f32[1] and f32[" << big
    << "] on 2 thread devices,\n"
    << "                        # fitted to the cost model's ring: T = 2 latency + bytes / "
       "bandwidth\n"
    << "  bandwidth: " << num(m.intra.bandwidth) << "\n"
    << "  latency: " << num(m.intra.latency) << "\n"
    << "  oversubscribed_wait: " << num(m.intra.oversubscribedWait) << "  # " << 2 * m.threads
    << " devices alternating ~20 us of work and an all_reduce of "
    << "f32[1]:\n"
    << "                             # per collective beyond both, per device per core past the "
       "first\n";
  if (m.mpiLink)
    y << "inter_node:             # all_reduce over " << m.ranks << " MPI ranks, fitted alike\n";
  else
    y << "inter_node:             # not measured (run under mpirun with --mpi); cpu.yaml's "
         "nominal figures\n";
  y << "  bandwidth: " << num(m.inter.bandwidth) << "\n"
    << "  latency: " << num(m.inter.latency) << "\n";
  if (m.mpiLink)
    y << "  oversubscribed_wait: " << num(m.inter.oversubscribedWait)
      << (m.ranksPerCore > 1 ? "  # measured as for intra_node with the ranks of this run\n"
                             : "  # not measured: no more ranks than cores (run with more to "
                               "measure it)\n");
  return y.str();
}

std::string summary(const Measured& m) {
  std::ostringstream sum;
  auto g = [](double v) { return num(v / 1e9); };
  sum << "calibrated shardc's runtime on " << hostName() << " (" << m.threads
      << " hardware threads):\n"
      << "  matmul " << m.s.matmulN << "^3 GFLOP/s: f32 " << g(m.flops.at(DType::F32)) << ", bf16 "
      << g(m.flops.at(DType::BF16)) << ", f16 " << g(m.flops.at(DType::F16)) << "\n"
      << "  elementwise add: " << g(m.add.bandwidth) << " GB/s\n"
      << "  per-op overhead: " << num(m.overhead * 1e6)
      << " us, more per GEMM call: " << num(m.gemm * 1e6)
      << " us and per matrix of a batch: " << num(m.perMatrix * 1e6) << " us\n"
      << "  memory: " << g(m.memory) << " GB\n"
      << "  all_reduce, 2 thread devices: latency " << num(m.intra.latency * 1e6)
      << " us, bandwidth " << g(m.intra.bandwidth) << " GB/s; with 2 devices per core, a wait of "
      << num(m.intra.oversubscribedWait * 1e6) << " us per collective\n";
  if (m.mpiLink)
    sum << "  all_reduce, " << m.ranks << " MPI ranks: latency " << num(m.inter.latency * 1e6)
        << " us, bandwidth " << g(m.inter.bandwidth) << " GB/s"
        << (m.ranksPerCore > 1 ? "; a wait of " + num(m.inter.oversubscribedWait * 1e6) +
                                     " us per collective per rank per core past the first"
                               : "")
        << "\n";
  return sum.str();
}

} // namespace

std::string calibrate(const CalibrateOptions& o) {
  bool underMpi = mpi::launchedByMpi();
  if (o.mpi && !underMpi)
    throw Error("--mpi measures MPI collectives between ranks: run `mpirun -np 2 shardc "
                "calibrate --mpi`");
  Measured m;
  m.s = o.quick ? Sizes{3, 64, 1 << 16, 200, 1 << 16} : Sizes{9, 512, 1 << 20, 2000, 1 << 20};
  m.threads = std::max(1u, std::thread::hardware_concurrency());
  if (underMpi) {
    measureMpi(m);
    // The other ranks sleep while rank 0 measures the rest alone.
    if (mpi::worldRank() != 0) {
      mpi::barrier("waiting for rank 0's measurements");
      return "";
    }
  }
  struct ReleaseRanks { // also when a measurement throws
    bool mpi;
    ~ReleaseRanks() {
      if (mpi) mpi::barrier("releasing the other ranks");
    }
  } release{underMpi};
  measureKernels(m);
  std::string text = targetYaml(m, o.quick);
  parseTarget(text, o.output.empty() ? "<calibrate>" : o.output); // what we write must load
  if (o.output.empty()) return summary(m) + text;
  writeFileAtomic(o.output, text);
  return summary(m) + "wrote " + o.output + "\n";
}

} // namespace shardc
