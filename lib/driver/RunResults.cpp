// The last stages of `shardc run`: the measured figures printed (--stats, --measure-sections)
// and the results delivered: written as files, all together, or handed back as arrays.
#include "RunState.h"
#include "RunStats.h"

#include "shardc/collectives/MpiCollectives.h"
#include "shardc/exec/GemmChoice.h"
#include "shardc/io/Npy.h"
#include "shardc/io/Npz.h"
#include "shardc/ir/IR.h"
#include "shardc/support/FileUtil.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace shardc {
namespace {

namespace fs = std::filesystem;

// Stacks per-step values along a new first axis.
Tensor stack(const std::vector<Tensor>& steps) {
  Shape shape = steps[0].shape();
  shape.insert(shape.begin(), static_cast<int64_t>(steps.size()));
  Tensor out(TensorType{steps[0].dtype(), shape});
  size_t chunk = steps[0].byteSize();
  for (size_t i = 0; i < steps.size(); ++i)
    if (chunk) std::memcpy(out.data() + i * chunk, steps[i].data(), chunk);
  return out;
}

std::string fileNameFor(std::string name) {
  // Output names come from the model; keep them inside the output folder.
  for (char& ch : name)
    if (ch == '/' || ch == '\\') ch = '_';
  return name == "." || name == ".." ? "_" + name : name;
}

// Kernel times add up over the devices this process ran: one per MPI rank.
int64_t meshDevices(const RunState& s) {
  return s.l.partitioned() ? s.l.mesh.numDevices() : 1;
}
int64_t timedDevices(const RunState& s) {
  return mpi::launchedByMpi() ? 1 : meshDevices(s);
}

// Each output: every step's stacked (a training run over one batch), or the last step's (an
// inference PEF repeats its forward pass on the same inputs).
std::vector<std::pair<std::string, Tensor>> outputsOf(RunState& s) {
  std::vector<std::pair<std::string, Tensor>> outputs;
  const Function& f = s.program();
  size_t k = 0;
  for (size_t i = 0; i < f.results().size(); ++i) {
    if (f.results()[i].tiedArg >= 0) continue;
    std::vector<Tensor> steps;
    for (auto& st : s.perStep)
      steps.push_back(std::move(st[k]));
    ++k;
    outputs.emplace_back(f.results()[i].name,
                         s.training && !s.data ? stack(steps) : std::move(steps.back()));
  }
  return outputs;
}

// Written together (writeFilesAtomic): a bad --save-weights leaves no output.npy behind.
void writeResultFiles(RunState& s, std::vector<std::pair<std::string, Tensor>>& outputs,
                      const NamedTensors& params, const NamedTensors& state,
                      const std::vector<int64_t>& peaks) {
  const RunOptions& o = s.o;
  std::vector<std::pair<std::string, FileContents>> written;
  for (const auto& [name, t] : outputs)
    written.emplace_back((fs::path(s.outputDir) / (fileNameFor(name) + ".npy")).string(),
                         [&t = t] { return serializeNpy(t); });
  // Their folders are made as the output folder is (checkWritable said they can be).
  for (const std::string* file : {&o.saveWeights, &o.saveState, &o.statsJson})
    if (fs::path folder = fs::path(*file).parent_path(); !file->empty() && !folder.empty())
      fs::create_directories(folder);
  if (!o.saveWeights.empty() && s.diverged)
    std::fprintf(stderr,
                 "shardc: warning: --save-weights %s: the weights written are not finite (the "
                 "loss was not from step %lld on)\n",
                 o.saveWeights.c_str(), static_cast<long long>(s.diverged));
  if (!o.saveWeights.empty())
    written.emplace_back(o.saveWeights, [&] { return serializeNpz(params, o.saveWeights); });
  if (!o.saveState.empty())
    written.emplace_back(o.saveState, [&] { return serializeNpz(state, o.saveState); });
  if (!o.statsJson.empty())
    written.emplace_back(o.statsJson, [&] {
      return runStatsJson(
          s.l, o.pef, {s.seconds, peaks, meshDevices(s), timedDevices(s), o.reference, s.opLimit},
          s.exec->times());
    });
  writeFilesAtomic(written);
}

// --stats: step times, the peak bytes a device held, kernel seconds per step.
void printStepStats(RunState& s) {
  int64_t stepsRun = s.stepsRun();
  std::vector<double> sorted = s.seconds;
  std::sort(sorted.begin(), sorted.end());
  std::printf("steps: %lld, median step %.6f s, first step %.6f s\n",
              static_cast<long long>(stepsRun), sorted[sorted.size() / 2], s.seconds[0]);
  std::printf("peak bytes held per device: %lld\n", static_cast<long long>(s.exec->peakBytes()));
  std::printf("seconds by stage:");
  for (const auto& [stage, sec] : s.stageSeconds)
    std::printf(" %s %.6f", stage.c_str(), sec);
  std::printf("\n");
  std::vector<std::string> gemms = gemmChoices();
  if (!gemms.empty()) std::printf("kernel choice by shape, the faster timed on this machine:\n");
  for (const std::string& g : gemms)
    std::printf("  %s\n", g.c_str());
  std::vector<std::string> bf16 = bf16StepWays();
  if (!bf16.empty()) std::printf("bf16 steps, by how this CPU runs them:\n");
  for (const std::string& w : bf16)
    std::printf("  %s\n", w.c_str());
  ExecStats times = s.exec->times();
  std::vector<std::pair<double, std::string>> ops;
  for (const auto& [op, sec] : times.secondsByKernel)
    ops.emplace_back(sec, op);
  std::sort(ops.rbegin(), ops.rend());
  std::printf(s.o.reference ? "kernel seconds per step by op (summed over devices):"
                            : "kernel seconds per step by kernel (summed over devices):");
  for (const auto& [sec, op] : ops)
    std::printf(" %s %.6f", op.c_str(), sec / static_cast<double>(stepsRun));
  std::printf("\n");
  std::vector<std::pair<double, std::string>> steps;
  for (const auto& [label, sec] : times.secondsByStep)
    steps.emplace_back(sec, label);
  std::sort(steps.rbegin(), steps.rend());
  if (!steps.empty()) std::printf("slowest kernels of the plan, seconds per step:\n");
  for (size_t i = 0; i < steps.size() && i < 12; ++i)
    std::printf("  %.6f %s\n", steps[i].first / static_cast<double>(stepsRun),
                steps[i].second.c_str());
}

} // namespace

void printStats(RunState& s) {
  int64_t stepsRun = s.stepsRun();
  if (!s.root || stepsRun == 0) return;
  if (s.o.stats) printStepStats(s);
  if (s.o.measureSections)
    printSectionTimes(
        s.l, sectionTimes(s.l, s.exec->times().secondsByStepIndex, stepsRun, timedDevices(s)),
        s.opLimit);
}

void deliverResults(RunState& s) {
  const RunOptions& o = s.o;
  std::vector<int64_t> peaks; // collective under mpirun: every rank asks
  if (!o.statsJson.empty()) peaks = s.exec->peakBytesByDevice();
  NamedTensors params, state;
  if (!o.saveWeights.empty() || s.arrays)
    params = argumentsOfKind(*s.exec, s.program(), ArgKind::Param);
  if (!o.saveState.empty() || s.arrays)
    state = argumentsOfKind(*s.exec, s.program(), ArgKind::OptState);
  if (!s.root) return; // rank 0 writes the files
  // An interrupted run writes nothing but hands back its weights.
  std::vector<std::pair<std::string, Tensor>> outputs;
  if (!s.interrupted) outputs = outputsOf(s);
  if (!s.arrays) {
    if (s.interrupted) return;
    fs::create_directories(s.outputDir);
    writeResultFiles(s, outputs, params, state, peaks);
    return;
  }
  // Files the options name are written for arrays too; the outputs are handed back instead.
  if (!s.interrupted) {
    std::vector<std::pair<std::string, Tensor>> none;
    writeResultFiles(s, none, params, state, peaks);
  }
  s.arrays->outputs = std::move(outputs);
  s.arrays->params = std::move(params);
  s.arrays->stateAfter = std::move(state);
}

} // namespace shardc
