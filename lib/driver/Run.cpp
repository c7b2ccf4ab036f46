#include "Executor.h"
#include "Replicas.h"
#include "RunStats.h"
#include "StepReporter.h"

#include "shardc/cost/Target.h"
#include "shardc/driver/Driver.h"
#include "shardc/driver/RunArrays.h"
#include "shardc/exec/CompiledFunction.h"
#include "shardc/import/OnnxImporter.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/pef/Pef.h"
#include "shardc/runtime/Checkpoint.h"
#include "shardc/runtime/Dataset.h"
#include "shardc/runtime/MpiCollectives.h"
#include "shardc/runtime/Npy.h"
#include "shardc/runtime/Npz.h"
#include "shardc/runtime/ShardTensor.h"
#include "shardc/support/Digest.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"
#include "shardc/support/Interrupt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unistd.h>

namespace shardc {
namespace {

// Refuses an input name the PEF does not have; `what` says where it was given.
void checkKnownInput(const Pef& pef, const std::string& name, const std::string& what) {
  if (std::any_of(pef.inputs.begin(), pef.inputs.end(),
                  [&](const auto& in) { return in.name == name; }))
    return;
  std::string names;
  for (const auto& in : pef.inputs)
    names += (names.empty() ? "" : ", ") + in.name;
  throw Error(what + ": the PEF has no such input (its inputs: " + names + ")");
}

std::map<std::string, std::string> parseInputs(const RunOptions& o, const Pef& pef) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : o.inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error("--input '" + spec + "' must be NAME=FILE.npy");
    std::string name = spec.substr(0, eq);
    checkKnownInput(pef, name, "--input '" + name + "'");
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

// Under mpirun every rank reads its own files: a rank given another PEF, input, data,
// weights or step count would compute something else, or wait in a collective the others
// never reach.
void agreeAcrossRanks(const LoadedPef& l, const std::vector<Tensor>& args, const RunOptions& o,
                      const std::vector<std::pair<std::string, uint64_t>>& loop) {
  const Function& f = *l.entry;
  auto text = [](const std::string& s) { return digestBytes(s.data(), s.size()); };
  std::vector<std::pair<std::string, uint64_t>> items = {
      {"PEF (--pef)", l.pef.checksum},
      {"--reference", o.reference},
      {"--sections", text(o.sections)},
      {"--measure-sections", o.measureSections},
      {"--stats-json (given or not)", !o.statsJson.empty()}};
  items.insert(items.end(), loop.begin(), loop.end());
  uint64_t state = 0;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Tensor& t = args[i];
    uint64_t d = digestBytes(t.data(), static_cast<size_t>(t.byteSize()), text(t.type().str()));
    if (f.argument(i)->argKind() == ArgKind::Input)
      items.emplace_back("input '" + f.argument(i)->name() + "' (--input)", d);
    else
      state = digestBytes(&d, sizeof d, state);
  }
  items.emplace_back("parameters or state (the PEF's, --weights, --seed, --resume)", state);
  mpi::agree(items);
}

// Replaces every argument of `kind` (parameters, or the opt_state) by the tensors `loaded`
// read from `source`: each must be one of the program's, of its type, and none may be
// missing (a file that misses some would run with the PEF's values for them, silently
// mixing two models).
void replaceArguments(std::map<std::string, Tensor>& values, const Function& f, NamedTensors loaded,
                      ArgKind kind, const std::string& source, const std::string& hint = "") {
  const char* what = kind == ArgKind::Param ? "parameter" : "opt_state entry";
  std::set<std::string> names;
  for (auto& [name, t] : loaded) {
    names.insert(name);
    auto it = values.find(name);
    const Value* a = f.findArgument(name);
    if (it == values.end() || !a || a->argKind() != kind)
      throw Error(source + ": '" + name + "' is not a" + (kind == ArgKind::Param ? " " : "n ") +
                  what + " of this PEF");
    if (t.type() != it->second.type())
      throw Error(source + ": '" + name + "' is " + t.type().str() + ", the PEF expects " +
                  it->second.type().str());
    it->second = std::move(t);
  }
  std::string missing;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() == kind && !names.count(a->name()))
      missing += (missing.empty() ? "'" : ", '") + a->name() + "'";
  }
  if (!missing.empty())
    throw Error(source + ": lacks " + what + "(s) " + missing + " of this PEF" + hint);
}

std::string formatLoss(double v) {
  return std::isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf";
}

// The learning rate the PEF was compiled with, from its recorded command line.
double learningRateOf(const Pef& pef) {
  double lr = TrainOptions{}.learningRate;
  const std::vector<std::string>& args = pef.compileArgs;
  for (size_t i = 0; i < args.size(); ++i)
    for (const char* flag : {"--learning-rate", "--lr"}) {
      std::string f = flag;
      std::string v;
      if (args[i] == f && i + 1 < args.size())
        v = args[i + 1];
      else if (args[i].rfind(f + "=", 0) == 0)
        v = args[i].substr(f.size() + 1);
      if (!v.empty()) lr = std::strtod(v.c_str(), nullptr);
    }
  return lr;
}

// The ops of a training PEF's forward sections: what --sections forward and evaluations run.
int64_t forwardOpLimit(const LoadedPef& l, const std::string& path, const std::string& why) {
  const std::vector<Section>& sections = l.pef.programs[0].sections;
  if (l.pef.mode != "training")
    throw Error(why + " evaluates a training PEF; this one is " + l.pef.mode +
                " (it runs only its forward pass anyway)");
  if (sections.empty())
    throw Error(path + " holds no sections (compiled by a shardc before sections); recompile it");
  int64_t opLimit = 0;
  for (const Section& s : sections)
    if (s.phase == Phase::Forward) opLimit = s.firstOp + s.numOps;
  return opLimit;
}

NamedTensors argumentsOfKind(Executor& exec, const Function& f, ArgKind kind) {
  NamedTensors out;
  for (size_t i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->argKind() == kind) out.emplace_back(f.argument(i)->name(), exec.argument(i));
  return out;
}

} // namespace

void runPef(const RunOptions& o, RunArrays* arrays) {
  LoadedPef l = loadPef(o.pef);
  bool training = l.pef.mode == "training";
  bool root = !mpi::launchedByMpi() || mpi::worldRank() == 0;
  int64_t replicas = o.replicas;
  if (mpi::launchedByMpi() && compiledReplicas(l)) {
    int64_t byRanks = replicasForRanks(l, mpi::worldSize());
    if (replicas && replicas != byRanks)
      throw Error("--replicas " + std::to_string(replicas) + ", but mpirun started " +
                  std::to_string(mpi::worldSize()) + " ranks, " + std::to_string(byRanks) +
                  " replicas of this PEF; under mpirun the ranks decide (drop --replicas)");
    replicas = byRanks;
  }
  if (replicas) {
    std::string line = setReplicas(l, replicas, mpi::launchedByMpi() ? "mpirun" : "--replicas");
    if (root && !line.empty()) std::fprintf(stderr, "%s\n", line.c_str());
  }
  bool overData = !o.data.empty() || (arrays && !arrays->data.empty());
  bool evalGiven = !o.evalData.empty() || (arrays && !arrays->evalData.empty());
  if (o.steps < 0) throw Error("--steps must be at least 1");
  if (o.epochs && !overData) throw Error("--epochs counts passes over --data; give --data too");
  if ((o.shuffle || o.dataSeed) && !overData)
    throw Error("--shuffle and --data-seed order the samples of --data; give --data too");
  if (evalGiven && !overData)
    throw Error("--eval-data evaluates a run over --data; give --data too");
  if (o.evalEvery && !evalGiven) throw Error("--eval-every needs --eval-data");
  if ((o.checkpointEvery || o.keep) && o.checkpointDir.empty())
    throw Error("--checkpoint-every and --keep need --checkpoint-dir");
  if (!training)
    for (bool given : {overData, !o.checkpointDir.empty(), !o.resume.empty(), !o.metrics.empty()})
      if (given)
        throw Error("--data, --checkpoint-dir, --resume and --metrics are for training PEFs; "
                    "this one is " +
                    l.pef.mode);
  // Outputs land in out/, beside what compile writes there, unless a folder is given.
  const std::string outputDir =
      o.outputDir.empty()
          ? (std::filesystem::path("out") / std::filesystem::path(o.pef).stem() / "results")
                .string()
          : o.outputDir;
  if (!arrays) checkWritable(outputDir, "--output-dir", true);
  if (!o.saveWeights.empty()) checkWritable(o.saveWeights, "--save-weights", false);
  if (!o.saveState.empty()) checkWritable(o.saveState, "--save-state", false);
  if (!o.metrics.empty()) checkWritable(o.metrics, "--metrics", false);
  if (!o.statsJson.empty()) checkWritable(o.statsJson, "--stats-json", false);
  if (!o.checkpointDir.empty()) checkWritable(o.checkpointDir, "--checkpoint-dir", true);
  std::map<std::string, std::string> files = parseInputs(o, l.pef);
  if (arrays)
    for (const auto& [name, t] : arrays->inputs)
      checkKnownInput(l.pef, name, "input '" + name + "'");
  const Function& f = *l.entry;

  std::vector<DataInput> dataInputs;
  for (const auto& in : l.pef.inputs)
    dataInputs.push_back({in.name, in.type, in.indexBound});
  std::unique_ptr<Dataset> data, evalData;
  if (overData) {
    data = arrays && !arrays->data.empty()
               ? std::make_unique<Dataset>(std::move(arrays->data), dataInputs, "data")
               : std::make_unique<Dataset>(o.data, dataInputs, "--data");
    for (const std::string& name : data->names())
      if (files.count(name) || (arrays && arrays->inputs.count(name)))
        throw Error("input '" + name + "' is given by both --input and --data");
  }
  if (evalGiven) {
    evalData = arrays && !arrays->evalData.empty()
                   ? std::make_unique<Dataset>(std::move(arrays->evalData), dataInputs, "eval data")
                   : std::make_unique<Dataset>(o.evalData, dataInputs, "--eval-data");
    std::vector<std::string> fedByEval = evalData->names(), fedByData = data->names();
    std::sort(fedByEval.begin(), fedByEval.end());
    std::sort(fedByData.begin(), fedByData.end());
    if (fedByEval != fedByData)
      throw Error("--eval-data must feed the inputs --data feeds, no more and no fewer");
  }

  std::map<std::string, Tensor> state;  // parameters and optimizer state, by name
  for (auto& [name, t] : l.pef.weights) // moved: the PEF's copy is not needed again
    state.emplace(name, std::move(t));
  if (!o.weights.empty())
    replaceArguments(state, f, readNpz(o.weights), ArgKind::Param, o.weights,
                     " (--weights replaces every parameter)");
  if (arrays && arrays->weights)
    replaceArguments(state, f, std::move(*arrays->weights), ArgKind::Param, "weights",
                     " (the weights replace every parameter)");
  if (arrays && arrays->state)
    replaceArguments(state, f, std::move(*arrays->state), ArgKind::OptState, "state");
  RunProgress at;
  if (!o.resume.empty()) {
    if (!o.weights.empty()) throw Error("--resume restores the parameters; drop --weights");
    if (o.seed)
      throw Error("--resume restores dropout's random-number state from the checkpoint; drop "
                  "--seed");
    Checkpoint c = readLatestCheckpoint(o.resume);
    checkProgress(c, data ? data->samples() : 0, data ? data->batchSize() : 0);
    if (root && c.progress.pef != l.pef.checksum)
      std::fprintf(stderr,
                   "note: %s was written by a run of another PEF (checksum %016llx); its "
                   "parameters and state fit this one\n",
                   c.path.c_str(), static_cast<unsigned long long>(c.progress.pef));
    replaceArguments(state, f, std::move(c.params), ArgKind::Param, c.path + "/params.npz");
    replaceArguments(state, f, std::move(c.state), ArgKind::OptState, c.path + "/state.npz");
    at = c.progress;
    if (overData && (at.shuffle != o.shuffle || at.dataSeed != o.dataSeed))
      throw Error("--resume " + c.path + " was written by a run with " +
                  (at.shuffle ? "--shuffle --data-seed " + std::to_string(at.dataSeed)
                              : std::string("no --shuffle")) +
                  "; resume with the same sample order");
    if (root)
      std::fprintf(stderr, "resuming from %s (step %lld)\n", c.path.c_str(),
                   static_cast<long long>(at.step));
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
  std::vector<std::pair<size_t, std::string>> fed; // argument index, input name (--data)
  std::vector<std::string> dataNames = data ? data->names() : std::vector<std::string>();
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() != ArgKind::Input) {
      args.push_back(std::move(state.at(a->name())));
      continue;
    }
    const TensorType& type = inputTypes.at(a->name());
    if (data) {
      if (std::find(dataNames.begin(), dataNames.end(), a->name()) != dataNames.end()) {
        fed.emplace_back(i, a->name());
        args.emplace_back(type);
        continue;
      }
    }
    if (auto given =
            arrays ? arrays->inputs.find(a->name()) : std::map<std::string, Tensor>::iterator();
        arrays && given != arrays->inputs.end()) {
      if (files.count(a->name()))
        throw Error("input '" + a->name() + "' is given both as an array and as --input");
      if (given->second.type() != type)
        throw Error("input '" + a->name() + "' expects " + type.str() + ", the array given is " +
                    given->second.type().str());
      if (int64_t bound = indexBounds.at(a->name()); bound > 0)
        checkLabels(given->second.data(), given->second.dtype(), given->second.numel(), bound,
                    "input '" + a->name() + "'");
      args.push_back(std::move(given->second));
      continue;
    }
    auto it = files.find(a->name());
    if (it == files.end())
      throw Error("missing input '" + a->name() + "' (" + type.str() + ")" +
                  (arrays ? std::string()
                          : "; pass --input " + a->name() + "=FILE.npy" +
                                (data ? " or --data " + a->name() + "=FILE.npy" : "")));
    Tensor t = readNpy(it->second);
    if (t.type() != type)
      throw Error("input '" + a->name() + "' expects " + type.str() + ", " + it->second +
                  " holds " + t.type().str());
    if (int64_t bound = indexBounds.at(a->name()); bound > 0)
      checkLabels(t.data(), t.dtype(), t.numel(), bound, it->second);
    args.push_back(std::move(t));
  }

  // The steps: --steps on one batch, or over --data for --epochs (1 by default) or --steps,
  // whichever ends first.
  int64_t batch = data ? data->batchSize() : 0;
  // Samples per step, for samples/s: the batch, or without --data the first input's.
  int64_t stepSamples = batch;
  if (!data && !l.pef.inputs.empty() && l.pef.inputs[0].type.rank() > 0)
    stepSamples = l.pef.inputs[0].type.shape[0];
  int64_t perEpoch = data ? data->batchesPerEpoch() : 0;
  int64_t epochs = data && !o.epochs && !o.steps ? 1 : o.epochs;
  int64_t total = o.steps ? o.steps : 1;
  if (data && epochs) {
    int64_t byEpochs = epochs > std::numeric_limits<int64_t>::max() / perEpoch
                           ? std::numeric_limits<int64_t>::max()
                           : epochs * perEpoch;
    total = o.steps ? std::min(o.steps, byEpochs) : byEpochs;
  }
  if (at.step >= total)
    throw Error("--resume: the checkpoint is at step " + std::to_string(at.step) +
                ", the run ends at step " + std::to_string(total) +
                " (raise --steps or --epochs to train further)");
  if (data && root) {
    int64_t dropped = data->samples() - perEpoch * batch;
    std::fprintf(stderr, "data: %lld samples, %lld batches of %lld per epoch%s",
                 static_cast<long long>(data->samples()), static_cast<long long>(perEpoch),
                 static_cast<long long>(batch), o.shuffle ? ", shuffled" : "");
    if (dropped)
      std::fprintf(stderr, "; the last %lld samples of each epoch's order are dropped",
                   static_cast<long long>(dropped));
    std::fprintf(stderr, "\n");
  }
  if (evalData && root && evalData->samples() % evalData->batchSize())
    std::fprintf(stderr, "eval data: %lld samples; the last %lld are not evaluated\n",
                 static_cast<long long>(evalData->samples()),
                 static_cast<long long>(evalData->samples() % evalData->batchSize()));

  const std::vector<Section>& sections = l.pef.programs[0].sections;
  int64_t opLimit = -1;
  if (!o.sections.empty()) {
    if (o.sections != "forward")
      throw Error("--sections " + o.sections + ": the sections a run can run alone are forward");
    opLimit = forwardOpLimit(l, o.pef, "--sections forward");
    if (overData || !o.checkpointDir.empty() || !o.resume.empty())
      throw Error("--sections forward is an evaluation pass; evaluate a run with --eval-data");
  }
  int64_t evalLimit = evalData ? forwardOpLimit(l, o.pef, "--eval-data") : -1;
  if (o.measureSections && o.reference)
    throw Error("--measure-sections times the compiled plan; it does not apply to --reference");
  if (o.measureSections && sections.empty())
    throw Error(o.pef + " holds no sections (compiled by a shardc before sections); recompile it");
  if (mpi::launchedByMpi()) {
    mpi::setCollectiveTimeout(o.collectiveTimeout);
    auto text = [](const std::string& s) { return digestBytes(s.data(), s.size()); };
    agreeAcrossRanks(l, args, o,
                     {{"step count (--steps, --epochs, --resume)",
                       static_cast<uint64_t>(total) * 1000003u + static_cast<uint64_t>(at.step)},
                      {"--data", data ? data->digest() : 0},
                      {"--eval-data and --eval-every",
                       (evalData ? evalData->digest() : 0) + static_cast<uint64_t>(o.evalEvery)},
                      {"--shuffle and --data-seed", o.dataSeed * 2 + o.shuffle},
                      {"--checkpoint-dir and --checkpoint-every",
                       text(o.checkpointDir) + static_cast<uint64_t>(o.checkpointEvery)}});
  }
  std::optional<CheckpointLock> lock; // rank 0 writes the checkpoints
  if (!o.checkpointDir.empty() && root) lock.emplace(o.checkpointDir);
  Executor exec(l, std::move(args), o.reference, o.threads,
                o.stats || o.measureSections || !o.statsJson.empty());
  int64_t before = arrays ? arrays->stepsBefore : 0; // steps shown after earlier runs
  StepReporter report(root ? o.metrics : "", !o.resume.empty() || before > 0, before + at.step,
                      before + total, epochs, learningRateOf(l.pef),
                      root && (data || ::isatty(2) == 1) && training,
                      arrays ? &arrays->records : nullptr);

  std::vector<int64_t> order;
  int64_t orderEpoch = -1;
  auto feed = [&](const Dataset& d, const std::vector<int64_t>& ord, int64_t first) {
    std::map<std::string, Tensor> b = d.batch(ord, first);
    for (const auto& [i, name] : fed)
      exec.setInput(i, b.at(name));
  };
  auto evaluate = [&](int64_t step) {
    std::vector<int64_t> ord = sampleOrder(evalData->samples(), false, 0, 0);
    double sum = 0;
    for (int64_t k = 0; k < evalData->batchesPerEpoch(); ++k) {
      feed(*evalData, ord, k * evalData->batchSize());
      std::vector<Tensor> outs = exec.step(1, evalLimit); // the loss
      if (root) sum += outs[0].getDouble(0);
    }
    report.evaluation(before + step, at.epoch,
                      sum / static_cast<double>(evalData->batchesPerEpoch()),
                      evalData->batchesPerEpoch());
  };
  int64_t checkpointed = at.step;
  auto checkpoint = [&]() {
    NamedTensors params = argumentsOfKind(exec, f, ArgKind::Param);
    NamedTensors st = argumentsOfKind(exec, f, ArgKind::OptState);
    if (!root) return;
    RunProgress p = at;
    p.step += before;
    p.shuffle = o.shuffle;
    p.dataSeed = o.dataSeed;
    p.batch = batch;
    p.pef = l.pef.checksum;
    p.arguments = o.commandLine;
    writeCheckpoint(o.checkpointDir, p, params, st, o.keep);
    checkpointed = at.step;
  };

  std::vector<std::vector<Tensor>> perStep;
  std::vector<double> seconds;
  int64_t diverged = 0; // the first step whose loss was not finite
  bool interrupted = false;
  while (at.step < total) {
    // A stop asked for (Interrupt.h) ends the run between steps, as if it ended here.
    if (interruptRequested()) {
      interrupted = true;
      if (!o.checkpointDir.empty() && at.step > checkpointed) checkpoint();
      break;
    }
    if (data) {
      if (at.position + batch > data->samples()) {
        ++at.epoch;
        at.position = 0;
      }
      if (orderEpoch != at.epoch) {
        order = sampleOrder(data->samples(), o.shuffle, o.dataSeed, at.epoch);
        orderEpoch = at.epoch;
      }
      try {
        feed(*data, order, at.position);
      } catch (const Error& e) {
        // A data file changed under the run: keep what the finished steps reached. (Under
        // mpirun the other ranks are inside a step's collectives, so no checkpoint is taken.)
        bool save = !o.checkpointDir.empty() && !mpi::launchedByMpi() && at.step > checkpointed;
        if (save) checkpoint();
        throw Error(std::string(e.what()) + "; the run stopped after step " +
                    std::to_string(before + at.step) +
                    (save ? ", checkpointed in " + o.checkpointDir : std::string()));
      }
    }
    auto t0 = std::chrono::steady_clock::now();
    // A training run over one batch stacks every step's outputs; an inference run, or one
    // over --data, keeps its last (and each step's loss, for --metrics).
    bool last = at.step + 1 == total;
    size_t keep = last || (training && !data) ? Executor::kAll : training ? 1 : 0;
    std::vector<Tensor> outs = exec.step(keep, opLimit);
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    seconds.push_back(sec);
    int64_t epochOfStep = at.epoch;
    ++at.step;
    at.position += batch;
    if (training && root && opLimit < 0)
      report.step(before + at.step, epochOfStep, outs[0].getDouble(0), stepSamples, sec);
    // Rank 0 holds the loss; when it stops, mpirun ends the other ranks.
    if (training && root && opLimit < 0 && !std::isfinite(outs[0].getDouble(0)) && !diverged) {
      diverged = before + at.step;
      std::string what = "the loss is " + formatLoss(outs[0].getDouble(0)) + " at step " +
                         std::to_string(diverged);
      if (o.stopOnNonfinite) throw Error(what + " (--stop-on-nonfinite)");
      std::fprintf(stderr,
                   "shardc: warning: %s; the weights are no longer finite and later steps "
                   "train on them (--stop-on-nonfinite ends the run here)\n",
                   what.c_str());
    }
    if (last || (training && !data)) perStep.push_back(std::move(outs));
    bool epochEnd = data && at.position + batch > data->samples();
    if (evalData && (o.evalEvery ? at.step % o.evalEvery == 0 : epochEnd || at.step == total))
      evaluate(at.step);
    if (!o.checkpointDir.empty() &&
        (at.step == total || (o.checkpointEvery && at.step % o.checkpointEvery == 0)))
      checkpoint();
  }
  report.finish();
  int64_t stepsRun = static_cast<int64_t>(seconds.size());
  if (arrays) {
    arrays->interrupted = interrupted;
    arrays->stepsRun = stepsRun;
  }
  // Kernel times add up over the devices this process ran: one per MPI rank.
  int64_t meshDevices = l.partitioned() ? l.mesh.numDevices() : 1;
  int64_t timedDevices = mpi::launchedByMpi() ? 1 : meshDevices;
  if (o.stats && root && stepsRun > 0) {
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    std::printf("steps: %lld, median step %.6f s, first step %.6f s\n",
                static_cast<long long>(stepsRun), sorted[sorted.size() / 2], seconds[0]);
    std::printf("peak bytes held per device: %lld\n", static_cast<long long>(exec.peakBytes()));
    ExecStats times = exec.times();
    std::vector<std::pair<double, std::string>> ops;
    for (const auto& [op, sec] : times.secondsByKernel)
      ops.emplace_back(sec, op);
    std::sort(ops.rbegin(), ops.rend());
    std::printf(o.reference ? "kernel seconds per step by op (summed over devices):"
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
  if (o.measureSections && root && stepsRun > 0)
    printSectionTimes(l, sectionTimes(l, exec.times().secondsByStepIndex, stepsRun, timedDevices),
                      opLimit);
  std::vector<int64_t> peaks; // collective under mpirun: every rank asks
  if (!o.statsJson.empty()) peaks = exec.peakBytesByDevice();
  NamedTensors params, stateAfter;
  if (!o.saveWeights.empty() || arrays) params = argumentsOfKind(exec, f, ArgKind::Param);
  if (!o.saveState.empty() || arrays) stateAfter = argumentsOfKind(exec, f, ArgKind::OptState);
  if (!root) return; // rank 0 writes the files
  if (interrupted) { // an interrupted run writes nothing but hands back its weights
    if (arrays) {
      arrays->params = std::move(params);
      arrays->stateAfter = std::move(stateAfter);
    }
    return;
  }
  if (!arrays) std::filesystem::create_directories(outputDir);
  // Written together (writeFilesAtomic): a bad --save-weights leaves no output.npy behind.
  std::vector<Tensor> outputs; // each output: every step's stacked, or the last step's
  std::vector<std::pair<std::string, FileContents>> written;
  size_t k = 0;
  for (size_t i = 0; i < f.results().size(); ++i) {
    if (f.results()[i].tiedArg >= 0) continue;
    std::vector<Tensor> steps;
    for (auto& st : perStep)
      steps.push_back(std::move(st[k]));
    ++k;
    // An inference PEF repeats its forward pass on the same inputs: the outputs once.
    Tensor out = training && !data ? stack(steps) : steps.back();
    if (arrays) {
      arrays->outputs.emplace_back(f.results()[i].name, std::move(out));
      continue;
    }
    outputs.push_back(std::move(out));
    written.emplace_back(
        (std::filesystem::path(outputDir) / (fileNameFor(f.results()[i].name) + ".npy")).string(),
        [&outputs, n = outputs.size() - 1] { return serializeNpy(outputs[n]); });
  }
  // Their folders are made as the output folder is (checkWritable said they can be).
  for (const std::string* file : {&o.saveWeights, &o.saveState, &o.statsJson})
    if (std::filesystem::path folder = std::filesystem::path(*file).parent_path();
        !file->empty() && !folder.empty())
      std::filesystem::create_directories(folder);
  if (!o.saveWeights.empty() && diverged)
    std::fprintf(stderr,
                 "shardc: warning: --save-weights %s: the weights written are not finite (the "
                 "loss was not from step %lld on)\n",
                 o.saveWeights.c_str(), static_cast<long long>(diverged));
  if (!o.saveWeights.empty())
    written.emplace_back(o.saveWeights, [&] { return serializeNpz(params, o.saveWeights); });
  if (!o.saveState.empty())
    written.emplace_back(o.saveState, [&] { return serializeNpz(stateAfter, o.saveState); });
  if (!o.statsJson.empty())
    written.emplace_back(o.statsJson, [&] {
      return runStatsJson(l, o.pef,
                          {seconds, peaks, meshDevices, timedDevices, o.reference, opLimit},
                          exec.times());
    });
  writeFilesAtomic(written);
  if (arrays) {
    arrays->params = std::move(params);
    arrays->stateAfter = std::move(stateAfter);
  }
}

} // namespace shardc
