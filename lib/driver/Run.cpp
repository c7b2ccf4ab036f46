#include "shardc/cost/Target.h"
#include "shardc/driver/Driver.h"
#include "shardc/exec/CompiledFunction.h"
#include "shardc/import/OnnxImporter.h"
#include "shardc/ir/IR.h"
#include "shardc/pef/Pef.h"
#include "shardc/runtime/Interpreter.h"
#include "shardc/runtime/MpiCollectives.h"
#include "shardc/runtime/Npy.h"
#include "shardc/runtime/Npz.h"
#include "shardc/runtime/ShardTensor.h"
#include "shardc/runtime/ThreadCollectives.h"
#include "shardc/support/Digest.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace shardc {
namespace {

std::map<std::string, std::string> parseInputs(const RunOptions& o, const Pef& pef) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : o.inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error("--input '" + spec + "' must be NAME=FILE.npy");
    std::string name = spec.substr(0, eq);
    bool known = false;
    for (const auto& in : pef.inputs)
      known |= in.name == name;
    if (!known) {
      std::string names;
      for (const auto& in : pef.inputs)
        names += (names.empty() ? "" : ", ") + in.name;
      throw Error("--input '" + name + "': the PEF has no such input (its inputs: " + names + ")");
    }
    if (!files.emplace(name, spec.substr(eq + 1)).second)
      throw Error("--input '" + name + "' is given twice");
  }
  return files;
}

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

// Runs the program step by step on one device, on threads as devices, or as this MPI rank's
// device, on whole arguments; returns whole outputs (on MPI rank 0 only). Each device runs
// the PEF's executable plan on native kernels, or (--reference) the reference interpreter.
class Executor {
public:
  // `opLimit` >= 0: only the ops before it run (the forward sections), arguments kept.
  Executor(const LoadedPef& l, std::vector<Tensor> wholeArgs, bool reference, int threads,
           int64_t opLimit)
      : l_(l), f_(*l.entry), whole_(std::move(wholeArgs)), reference_(reference),
        opLimit_(opLimit) {
    for (size_t i = 0; i < f_.results().size(); ++i)
      if (f_.results()[i].tiedArg < 0) untied_.push_back(i);
    int64_t devices = 1;
    if (l.partitioned()) {
      int64_t n = l.mesh.numDevices();
      if (mpi::launchedByMpi()) {
        comm_ = std::make_unique<MpiCollectives>(l.mesh); // checks one device per rank
        local_.push_back(shard(comm_->device()));
      } else {
        if (n > kMaxThreadDevices)
          throw Error("the PEF's mesh " + l.mesh.str() + " has " + std::to_string(n) +
                      " devices; one process simulates at most " +
                      std::to_string(kMaxThreadDevices) + " (run it under mpirun -np " +
                      std::to_string(n) + ")");
        for (int64_t d = 0; d < n; ++d)
          local_.push_back(shard(d));
        devices = n;
      }
      whole_.clear(); // the devices hold their pieces now
    }
    if (reference_) return;
    int perDevice = intraOpThreads(devices, threads);
    size_t count = l.partitioned() ? local_.size() : 1;
    for (size_t d = 0; d < count; ++d) {
      std::vector<BodyPlan> bodies;
      for (const PefBody& b : l.pef.programs[0].bodies)
        bodies.push_back({l.module->findFunction(b.function), b.plan});
      compiled_.push_back(std::make_unique<CompiledFunction>(f_, l.pef.programs[0].plan, perDevice,
                                                             std::move(bodies)));
    }
  }

  // One step; the whole value of every result that is not tied to an argument (empty
  // tensors on MPI ranks other than 0), or nothing when `keep` is false.
  std::vector<Tensor> step(bool keep) {
    if (!l_.partitioned()) return runDevice(0, whole_, nullptr, keep);
    if (comm_) {
      std::vector<Tensor> results = runDevice(0, local_[0], comm_.get(), keep);
      if (!keep) return {};
      std::vector<Tensor> out;
      for (size_t k = 0; k < untied_.size(); ++k)
        out.push_back(gatherWhole(results[k], l_.resultShardings[untied_[k]]));
      return out;
    }
    auto results = runOnDevices(l_.mesh, [&](Collectives& c) {
      auto d = static_cast<size_t>(c.device());
      return runDevice(d, local_[d], &c, keep);
    });
    std::vector<Tensor> out;
    if (!keep) return out;
    for (size_t k = 0; k < untied_.size(); ++k) {
      std::vector<Tensor> pieces;
      for (auto& r : results)
        pieces.push_back(std::move(r[k]));
      out.push_back(assemble(pieces, l_.resultShardings[untied_[k]], l_.mesh));
    }
    return out;
  }

  // The whole value of argument i now (on MPI rank 0 only).
  Tensor argument(size_t i) {
    if (!l_.partitioned()) return whole_[i];
    if (comm_) return gatherWhole(local_[0][i], l_.argShardings[i]);
    std::vector<Tensor> pieces;
    for (const auto& dev : local_)
      pieces.push_back(dev[i]);
    return assemble(pieces, l_.argShardings[i], l_.mesh);
  }

  // The most bytes one device held at once, over all steps: arguments and live op results
  // (the interpreter), or arguments, arena and constants (the compiled plan).
  int64_t peakBytes() const { return peakBytes_; }
  // Kernel seconds per op name (per kernel of the plan when compiled), over all steps and
  // devices.
  const std::map<std::string, double>& secondsByOp() const { return secondsByOp_; }
  // Compiled runs: seconds per step of the plan (its label), over all steps and devices.
  const std::map<std::string, double>& secondsByStep() const { return secondsByStep_; }
  // Compiled runs: seconds per step of the plan by its index, over all steps and devices.
  const std::vector<double>& secondsByStepIndex() const { return secondsByStepIndex_; }

private:
  // Device d's step on its arguments `args` (tied results replace their arguments); returns
  // its untied results (the compiled runtime's are copied out only when they are kept).
  std::vector<Tensor> runDevice(size_t d, std::vector<Tensor>& args, Collectives* comm, bool keep) {
    if (!reference_) {
      ExecStats st;
      const std::vector<Tensor>& results = compiled_[d]->run(args, comm, &st, opLimit_);
      std::vector<Tensor> out;
      if (keep) out = results;
      std::lock_guard<std::mutex> lock(mu_);
      peakBytes_ = std::max(peakBytes_, st.peakBytes);
      for (const auto& [k, sec] : st.secondsByKernel)
        secondsByOp_[k] += sec;
      for (const auto& [k, sec] : st.secondsByStep)
        secondsByStep_[k] += sec;
      secondsByStepIndex_.resize(st.secondsByStepIndex.size(), 0);
      for (size_t i = 0; i < st.secondsByStepIndex.size(); ++i)
        secondsByStepIndex_[i] += st.secondsByStepIndex[i];
      return out;
    }
    InterpreterStats st;
    std::vector<Tensor> results = interpret(f_, args, comm, &st);
    std::vector<Tensor> out;
    for (size_t i = 0; i < results.size(); ++i) {
      int64_t tied = f_.results()[i].tiedArg;
      if (tied >= 0 && opLimit_ < 0)
        args[static_cast<size_t>(tied)] = std::move(results[i]);
      else if (tied >= 0)
        continue; // an evaluation pass keeps the weights and state
      else
        out.push_back(std::move(results[i]));
    }
    std::lock_guard<std::mutex> lock(mu_);
    peakBytes_ = std::max(peakBytes_, st.argumentBytes + st.peakResultBytes);
    for (const auto& [op, sec] : st.secondsByOp)
      secondsByOp_[op] += sec;
    return out;
  }

  std::vector<Tensor> shard(int64_t device) const {
    std::vector<Tensor> args;
    for (size_t i = 0; i < whole_.size(); ++i)
      args.push_back(shardOf(whole_[i], l_.argShardings[i], l_.mesh, device));
    return args;
  }

  Tensor gatherWhole(const Tensor& local, const TensorSharding& s) {
    std::vector<Tensor> pieces = mpi::gatherToRoot(local);
    return pieces.empty() ? Tensor() : assemble(pieces, s, l_.mesh);
  }

  const LoadedPef& l_;
  const Function& f_;
  std::vector<Tensor> whole_;
  bool reference_;
  int64_t opLimit_;
  std::vector<double> secondsByStepIndex_;
  std::vector<size_t> untied_; // indices of the results that are not tied to an argument
  std::vector<std::vector<Tensor>> local_;                  // per device (one under MPI)
  std::vector<std::unique_ptr<CompiledFunction>> compiled_; // per device in this process
  std::unique_ptr<MpiCollectives> comm_;
  std::mutex mu_;
  int64_t peakBytes_ = 0;
  std::map<std::string, double> secondsByOp_, secondsByStep_;
};

// --measure-sections: each section's kernel seconds per step beside the section model's
// estimate on the PEF's target.
void printSectionTimes(const LoadedPef& l, const std::vector<double>& byStep, int64_t steps,
                       int64_t opLimit) {
  const PefProgram& prog = l.pef.programs[0];
  std::vector<int64_t> sectionOf =
      sectionOfOps(prog.sections, static_cast<int64_t>(l.entry->ops().size()));
  std::vector<double> measured(prog.sections.size(), 0);
  for (size_t s = 0; s < byStep.size() && s < prog.plan.steps.size(); ++s)
    measured[static_cast<size_t>(sectionOf[static_cast<size_t>(prog.plan.steps[s].ops.back())])] +=
        byStep[s] / static_cast<double>(steps);
  std::vector<double> estimated;
  std::string target = l.pef.arch;
  try {
    Target t = loadTarget(target);
    estimated = estimateSections(*l.entry, t, prog.sections);
    // A call's estimate is its body's sections'.
    for (size_t k = 0; k < prog.sections.size(); ++k) {
      if (prog.sections[k].body < 0) continue;
      const PefBody& b = prog.bodies[static_cast<size_t>(prog.sections[k].body)];
      estimated[k] = 0;
      for (double e : estimateSections(*l.module->findFunction(b.function), t, b.sections))
        estimated[k] += e;
    }
  } catch (const Error&) {
    target += " (not a built-in target: no estimate)";
  }
  std::printf("sections: kernel seconds per step, measured, and the section model's estimate on "
              "%s\n",
              target.c_str());
  double totalMeasured = 0, totalEstimated = 0;
  for (size_t k = 0; k < prog.sections.size(); ++k) {
    const Section& s = prog.sections[k];
    if (opLimit >= 0 && s.firstOp >= opLimit) break;
    totalMeasured += measured[k];
    std::printf("  #%zu %s ops %lld..%lld%s%s: measured %.6f", k,
                std::string(phaseName(s.phase)).c_str(), static_cast<long long>(s.firstOp),
                static_cast<long long>(s.firstOp + s.numOps - 1), s.rule.empty() ? "" : " rule ",
                s.rule.c_str(), measured[k]);
    if (!estimated.empty()) {
      totalEstimated += estimated[k];
      std::printf(", estimated %.6f", estimated[k]);
    }
    std::printf("\n");
  }
  std::printf("sections total: measured %.6f", totalMeasured);
  if (!estimated.empty()) std::printf(", estimated %.6f", totalEstimated);
  std::printf("\n");
}

// Under mpirun every rank reads its own files: a rank given another PEF, input, weights or
// step count would compute something else, or wait in a collective the others never reach.
void agreeAcrossRanks(const LoadedPef& l, const std::vector<Tensor>& args, const RunOptions& o) {
  const Function& f = *l.entry;
  auto text = [](const std::string& s) { return digestBytes(s.data(), s.size()); };
  std::vector<std::pair<std::string, uint64_t>> items = {
      {"PEF (--pef)", l.pef.checksum},
      {"step count (--steps)", static_cast<uint64_t>(o.steps)},
      {"--reference", o.reference},
      {"--sections", text(o.sections)},
      {"--measure-sections", o.measureSections}};
  uint64_t state = 0;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Tensor& t = args[i];
    uint64_t d = digestBytes(t.data(), static_cast<size_t>(t.byteSize()), text(t.type().str()));
    if (f.argument(i)->argKind() == ArgKind::Input)
      items.emplace_back("input '" + f.argument(i)->name() + "' (--input)", d);
    else
      state = digestBytes(&d, sizeof d, state);
  }
  items.emplace_back("parameters or state (the PEF's, --weights, --seed)", state);
  mpi::agree(items);
}

} // namespace

void runPef(const RunOptions& o) {
  LoadedPef l = loadPef(o.pef);
  bool training = l.pef.mode == "training";
  if (o.steps < 1) throw Error("--steps must be at least 1");
  checkWritable(o.outputDir, "--output-dir", true);
  if (!o.saveWeights.empty()) checkWritable(o.saveWeights, "--save-weights", false);
  if (!o.saveState.empty()) checkWritable(o.saveState, "--save-state", false);
  std::map<std::string, std::string> files = parseInputs(o, l.pef);
  const Function& f = *l.entry;

  std::map<std::string, Tensor> state;  // parameters and optimizer state, by name
  for (auto& [name, t] : l.pef.weights) // moved: the PEF's copy is not needed again
    state.emplace(name, std::move(t));
  if (!o.weights.empty()) {
    auto loaded = readNpz(o.weights);
    std::set<std::string> names;
    for (const auto& entry : loaded)
      names.insert(entry.first);
    for (auto& [name, t] : loaded) {
      auto it = state.find(name);
      const Value* a = f.findArgument(name);
      if (it == state.end() || !a || a->argKind() != ArgKind::Param)
        throw Error(o.weights + ": '" + name + "' is not a parameter of this PEF");
      if (t.type() != it->second.type())
        throw Error(o.weights + ": '" + name + "' is " + t.type().str() + ", the PEF expects " +
                    it->second.type().str());
      it->second = std::move(t);
    }
    // Every parameter or none: a file that misses some would run with the PEF's values for
    // them, silently mixing two models.
    std::string missing;
    for (size_t i = 0; i < f.numArguments(); ++i) {
      const Value* a = f.argument(i);
      if (a->argKind() == ArgKind::Param && !names.count(a->name()))
        missing += (missing.empty() ? "'" : ", '") + a->name() + "'";
    }
    if (!missing.empty())
      throw Error(o.weights + ": lacks parameter(s) " + missing +
                  " of this PEF (--weights replaces every parameter)");
  }

  if (auto rng = state.find(kRngStateName); rng != state.end() && o.seed)
    rng->second.setInt(0, *o.seed);

  std::map<std::string, TensorType> inputTypes; // whole types
  std::map<std::string, int64_t> indexBounds;
  for (const auto& in : l.pef.inputs) {
    inputTypes[in.name] = in.type;
    indexBounds[in.name] = in.indexBound;
  }
  std::vector<Tensor> args;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() != ArgKind::Input) {
      args.push_back(std::move(state.at(a->name())));
      continue;
    }
    const TensorType& type = inputTypes.at(a->name());
    auto it = files.find(a->name());
    if (it == files.end())
      throw Error("missing input '" + a->name() + "' (" + type.str() + "); pass --input " +
                  a->name() + "=FILE.npy");
    Tensor t = readNpy(it->second);
    if (t.type() != type)
      throw Error("input '" + a->name() + "' expects " + type.str() + ", " + it->second +
                  " holds " + t.type().str());
    // A label outside the classes would silently add nothing to the loss (PyTorch's
    // ignore_index, -100, is not supported either: the mean would count it).
    if (int64_t bound = indexBounds.at(a->name()); bound > 0)
      for (int64_t k = 0; k < t.numel(); ++k)
        if (int64_t v = t.getInt(k); v < 0 || v >= bound)
          throw Error(it->second + ": label " + std::to_string(v) + " at index " +
                      std::to_string(k) + " is not one of the model's " + std::to_string(bound) +
                      " classes [0, " + std::to_string(bound) + ")" +
                      (v == -100 ? " (PyTorch's ignore_index is not supported)" : ""));
    args.push_back(std::move(t));
  }

  const std::vector<Section>& sections = l.pef.programs[0].sections;
  int64_t opLimit = -1;
  if (!o.sections.empty()) {
    if (o.sections != "forward")
      throw Error("--sections " + o.sections + ": the sections a run can run alone are forward");
    if (!training)
      throw Error("--sections forward evaluates a training PEF; this one is " + l.pef.mode +
                  " (it runs only its forward pass anyway)");
    if (sections.empty())
      throw Error(o.pef +
                  " holds no sections (compiled by a shardc before sections); recompile it");
    opLimit = 0;
    for (const Section& s : sections)
      if (s.phase == Phase::Forward) opLimit = s.firstOp + s.numOps;
  }
  if (o.measureSections && o.reference)
    throw Error("--measure-sections times the compiled plan; it does not apply to --reference");
  if (o.measureSections && sections.empty())
    throw Error(o.pef + " holds no sections (compiled by a shardc before sections); recompile it");
  if (mpi::launchedByMpi()) {
    mpi::setCollectiveTimeout(o.collectiveTimeout);
    agreeAcrossRanks(l, args, o);
  }
  Executor exec(l, std::move(args), o.reference, o.threads, opLimit);
  std::vector<std::vector<Tensor>> perStep;
  std::vector<double> seconds;
  for (int64_t s = 0; s < o.steps; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    // A training run stacks every step's outputs; an inference run keeps its last.
    bool keep = training || s + 1 == o.steps;
    std::vector<Tensor> outs = exec.step(keep);
    if (keep) perStep.push_back(std::move(outs));
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (o.stats && (!mpi::launchedByMpi() || mpi::worldRank() == 0)) {
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    std::printf("steps: %lld, median step %.6f s, first step %.6f s\n",
                static_cast<long long>(seconds.size()), sorted[sorted.size() / 2], seconds[0]);
    std::printf("peak bytes held per device: %lld\n", static_cast<long long>(exec.peakBytes()));
    std::vector<std::pair<double, std::string>> ops;
    for (const auto& [op, sec] : exec.secondsByOp())
      ops.emplace_back(sec, op);
    std::sort(ops.rbegin(), ops.rend());
    std::printf(o.reference ? "kernel seconds per step by op (summed over devices):"
                            : "kernel seconds per step by kernel (summed over devices):");
    for (const auto& [sec, op] : ops)
      std::printf(" %s %.6f", op.c_str(), sec / static_cast<double>(o.steps));
    std::printf("\n");
    std::vector<std::pair<double, std::string>> steps;
    for (const auto& [label, sec] : exec.secondsByStep())
      steps.emplace_back(sec, label);
    std::sort(steps.rbegin(), steps.rend());
    if (!steps.empty()) std::printf("slowest kernels of the plan, seconds per step:\n");
    for (size_t i = 0; i < steps.size() && i < 12; ++i)
      std::printf("  %.6f %s\n", steps[i].first / static_cast<double>(o.steps),
                  steps[i].second.c_str());
  }
  if (o.measureSections && (!mpi::launchedByMpi() || mpi::worldRank() == 0))
    printSectionTimes(l, exec.secondsByStepIndex(), o.steps, opLimit);
  std::vector<std::pair<std::string, Tensor>> params, stateAfter;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    ArgKind kind = f.argument(i)->argKind();
    if (kind == ArgKind::Param && !o.saveWeights.empty())
      params.emplace_back(f.argument(i)->name(), exec.argument(i));
    if (kind == ArgKind::OptState && !o.saveState.empty())
      stateAfter.emplace_back(f.argument(i)->name(), exec.argument(i));
  }
  if (mpi::launchedByMpi() && mpi::worldRank() != 0) return; // rank 0 writes the files
  std::filesystem::create_directories(o.outputDir);
  size_t k = 0;
  for (size_t i = 0; i < f.results().size(); ++i) {
    if (f.results()[i].tiedArg >= 0) continue;
    std::vector<Tensor> steps;
    for (auto& st : perStep)
      steps.push_back(std::move(st[k]));
    ++k;
    // An inference PEF repeats its forward pass on the same inputs: the outputs once.
    Tensor out = training ? stack(steps) : steps.back();
    writeNpy(
        (std::filesystem::path(o.outputDir) / (fileNameFor(f.results()[i].name) + ".npy")).string(),
        out);
  }
  // Their folders are made as the output folder is (checkWritable said they can be).
  for (const std::string* file : {&o.saveWeights, &o.saveState})
    if (std::filesystem::path folder = std::filesystem::path(*file).parent_path();
        !file->empty() && !folder.empty())
      std::filesystem::create_directories(folder);
  if (!o.saveWeights.empty()) writeNpz(o.saveWeights, params);
  if (!o.saveState.empty()) writeNpz(o.saveState, stateAfter);
}

} // namespace shardc
