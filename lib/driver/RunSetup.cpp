// The first stages of `shardc run`: the PEF loaded for its replicas, the options checked, where
// inputs, data and weights come from (files or the Python module's arrays, through one
// interface), the parameters and state restored, the arguments bound and the steps counted.
#include "Replicas.h"
#include "RunState.h"

#include "shardc/collectives/MpiCollectives.h"
#include "shardc/import/OnnxImporter.h"
#include "shardc/io/Npy.h"
#include "shardc/io/Npz.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>

namespace shardc {
namespace {

class FileInput : public InputSource {
public:
  explicit FileInput(std::string path) : path_(std::move(path)) {}
  const std::string& what() const override { return path_; }
  std::string holding() const override { return path_ + " holds"; }
  Tensor read() override { return readNpy(path_); }

private:
  std::string path_;
};

class ArrayInput : public InputSource {
public:
  ArrayInput(const std::string& name, Tensor t) : what_("input '" + name + "'"), t_(std::move(t)) {}
  const std::string& what() const override { return what_; }
  std::string holding() const override { return "the array given is"; }
  Tensor read() override { return std::move(t_); }

private:
  std::string what_;
  Tensor t_;
};

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

// --input NAME=FILE.npy, then the arrays given for inputs.
void gatherInputs(RunState& s) {
  for (const std::string& spec : s.o.inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error("--input '" + spec + "' must be NAME=FILE.npy");
    std::string name = spec.substr(0, eq);
    checkKnownInput(s.l.pef, name, "--input '" + name + "'");
    if (!s.inputs.emplace(name, std::make_unique<FileInput>(spec.substr(eq + 1))).second)
      throw Error("--input '" + name + "' is given twice");
  }
  if (!s.arrays) return;
  for (auto& [name, t] : s.arrays->inputs) {
    checkKnownInput(s.l.pef, name, "input '" + name + "'");
    if (s.inputs.count(name))
      throw Error("input '" + name + "' is given both as an array and as --input");
    s.inputs.emplace(name, std::make_unique<ArrayInput>(name, std::move(t)));
  }
}

// The samples of --data (or --eval-data): the arrays given, else the files.
std::unique_ptr<Dataset> openDataset(std::vector<std::pair<std::string, SampleArray>>* arrays,
                                     const std::vector<std::string>& files,
                                     const std::vector<DataInput>& inputs, const char* arrayWhat,
                                     const char* flag) {
  if (arrays && !arrays->empty())
    return std::make_unique<Dataset>(std::move(*arrays), inputs, arrayWhat);
  if (!files.empty()) return std::make_unique<Dataset>(files, inputs, flag);
  return nullptr;
}

// Replaces every argument of `r.kind` (parameters, or the opt_state) by `r.tensors`: each
// must be one of the program's, of its type, and none may be missing (a file that misses some
// would run with the PEF's values for them, silently mixing two models).
void replaceArguments(std::map<std::string, Tensor>& values, const Function& f, ArgumentsSource r) {
  const char* what = r.kind == ArgKind::Param ? "parameter" : "opt_state entry";
  std::set<std::string> names;
  for (auto& [name, t] : r.tensors) {
    names.insert(name);
    auto it = values.find(name);
    const Value* a = f.findArgument(name);
    if (it == values.end() || !a || a->argKind() != r.kind)
      throw Error(r.what + ": '" + name + "' is not a" + (r.kind == ArgKind::Param ? " " : "n ") +
                  what + " of this PEF");
    if (t.type() != it->second.type())
      throw Error(r.what + ": '" + name + "' is " + t.type().str() + ", the PEF expects " +
                  it->second.type().str());
    it->second = std::move(t);
  }
  std::string missing;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() == r.kind && !names.count(a->name()))
      missing += (missing.empty() ? "'" : ", '") + a->name() + "'";
  }
  if (!missing.empty())
    throw Error(r.what + ": lacks " + what + "(s) " + missing + " of this PEF" + r.hint);
}

// The latest checkpoint of --resume: its parameters and state, and where the run stood.
void resumeFrom(RunState& s) {
  const RunOptions& o = s.o;
  if (!o.weights.empty()) throw Error("--resume restores the parameters; drop --weights");
  if (o.seed)
    throw Error("--resume restores dropout's random-number state from the checkpoint; drop "
                "--seed");
  Checkpoint c = readLatestCheckpoint(o.resume);
  checkProgress(c, s.data ? s.data->samples() : 0, s.data ? s.data->batchSize() : 0);
  if (s.root && c.progress.pef != s.l.pef.checksum)
    std::fprintf(stderr,
                 "note: %s was written by a run of another PEF (checksum %016llx); its "
                 "parameters and state fit this one\n",
                 c.path.c_str(), static_cast<unsigned long long>(c.progress.pef));
  s.replacements.push_back({std::move(c.params), ArgKind::Param, c.path + "/params.npz", ""});
  s.replacements.push_back({std::move(c.state), ArgKind::OptState, c.path + "/state.npz", ""});
  s.at = c.progress;
  if (s.data && (s.at.shuffle != o.shuffle || s.at.dataSeed != o.dataSeed))
    throw Error("--resume " + c.path + " was written by a run with " +
                (s.at.shuffle ? "--shuffle --data-seed " + std::to_string(s.at.dataSeed)
                              : std::string("no --shuffle")) +
                "; resume with the same sample order");
  if (s.root)
    std::fprintf(stderr, "resuming from %s (step %lld)\n", c.path.c_str(),
                 static_cast<long long>(s.at.step));
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
  for (const Section& sec : sections)
    if (sec.phase == Phase::Forward) opLimit = sec.firstOp + sec.numOps;
  return opLimit;
}

// One input argument from its source: its type and labels checked.
Tensor readInput(RunState& s, const Value* a, const PefTensor& spec) {
  auto it = s.inputs.find(a->name());
  if (it == s.inputs.end())
    throw Error("missing input '" + a->name() + "' (" + spec.type.str() + ")" +
                (s.arrays ? std::string()
                          : "; pass --input " + a->name() + "=FILE.npy" +
                                (s.data ? " or --data " + a->name() + "=FILE.npy" : "")));
  InputSource& src = *it->second;
  Tensor t = src.read();
  if (t.type() != spec.type)
    throw Error("input '" + a->name() + "' expects " + spec.type.str() + ", " + src.holding() +
                " " + t.type().str());
  if (spec.indexBound > 0) checkLabels(t.data(), t.dtype(), t.numel(), spec.indexBound, src.what());
  return t;
}

} // namespace

void loadForRun(RunState& s) {
  s.l = loadPef(s.o.pef);
  s.training = s.l.pef.mode == "training";
  s.root = !mpi::launchedByMpi() || mpi::worldRank() == 0;
  int64_t replicas = s.o.replicas;
  if (mpi::launchedByMpi() && compiledReplicas(s.l)) {
    int64_t byRanks = replicasForRanks(s.l, mpi::worldSize());
    if (replicas && replicas != byRanks)
      throw Error("--replicas " + std::to_string(replicas) + ", but mpirun started " +
                  std::to_string(mpi::worldSize()) + " ranks, " + std::to_string(byRanks) +
                  " replicas of this PEF; under mpirun the ranks decide (drop --replicas)");
    replicas = byRanks;
  }
  if (!replicas) return;
  std::string line = setReplicas(s.l, replicas, mpi::launchedByMpi() ? "mpirun" : "--replicas");
  if (s.root && !line.empty()) std::fprintf(stderr, "%s\n", line.c_str());
}

void checkRunOptions(RunState& s) {
  const RunOptions& o = s.o;
  bool overData = !o.data.empty() || (s.arrays && !s.arrays->data.empty());
  bool evalGiven = !o.evalData.empty() || (s.arrays && !s.arrays->evalData.empty());
  if (o.steps < 0) throw Error("--steps must be at least 1");
  if (o.epochs && !overData) throw Error("--epochs counts passes over --data; give --data too");
  if ((o.shuffle || o.dataSeed) && !overData)
    throw Error("--shuffle and --data-seed order the samples of --data; give --data too");
  if (evalGiven && !overData)
    throw Error("--eval-data evaluates a run over --data; give --data too");
  if (o.evalEvery && !evalGiven) throw Error("--eval-every needs --eval-data");
  if ((o.checkpointEvery || o.keep) && o.checkpointDir.empty())
    throw Error("--checkpoint-every and --keep need --checkpoint-dir");
  if (!s.training)
    for (bool given : {overData, !o.checkpointDir.empty(), !o.resume.empty(), !o.metrics.empty()})
      if (given)
        throw Error("--data, --checkpoint-dir, --resume and --metrics are for training PEFs; "
                    "this one is " +
                    s.l.pef.mode);
  // Outputs land in out/, beside what compile writes there, unless a folder is given.
  namespace fs = std::filesystem;
  s.outputDir = o.outputDir.empty()
                    ? (fs::path("out") / fs::path(o.pef).stem() / "results").string()
                    : o.outputDir;
  if (!s.arrays) checkWritable(s.outputDir, "--output-dir", true);
  if (!o.saveWeights.empty()) checkWritable(o.saveWeights, "--save-weights", false);
  if (!o.saveState.empty()) checkWritable(o.saveState, "--save-state", false);
  if (!o.metrics.empty()) checkWritable(o.metrics, "--metrics", false);
  if (!o.statsJson.empty()) checkWritable(o.statsJson, "--stats-json", false);
  if (!o.checkpointDir.empty()) checkWritable(o.checkpointDir, "--checkpoint-dir", true);
}

void gatherSources(RunState& s) {
  const RunOptions& o = s.o;
  gatherInputs(s);
  std::vector<DataInput> dataInputs;
  for (const auto& in : s.l.pef.inputs)
    dataInputs.push_back({in.name, in.type, in.indexBound});
  s.data = openDataset(s.arrays ? &s.arrays->data : nullptr, o.data, dataInputs, "data", "--data");
  if (s.data)
    for (const std::string& name : s.data->names())
      if (s.inputs.count(name))
        throw Error("input '" + name + "' is given by both --input and --data");
  s.evalData = openDataset(s.arrays ? &s.arrays->evalData : nullptr, o.evalData, dataInputs,
                           "eval data", "--eval-data");
  if (s.evalData) {
    std::vector<std::string> fedByEval = s.evalData->names(), fedByData = s.data->names();
    std::sort(fedByEval.begin(), fedByEval.end());
    std::sort(fedByData.begin(), fedByData.end());
    if (fedByEval != fedByData)
      throw Error("--eval-data must feed the inputs --data feeds, no more and no fewer");
  }
  if (!o.weights.empty())
    s.replacements.push_back(
        {readNpz(o.weights), ArgKind::Param, o.weights, " (--weights replaces every parameter)"});
  if (s.arrays && s.arrays->weights)
    s.replacements.push_back({std::move(*s.arrays->weights), ArgKind::Param, "weights",
                              " (the weights replace every parameter)"});
  if (s.arrays && s.arrays->state)
    s.replacements.push_back({std::move(*s.arrays->state), ArgKind::OptState, "state", ""});
  if (s.arrays) s.before = s.arrays->stepsBefore;
}

void restoreState(RunState& s) {
  for (auto& [name, t] : s.l.pef.weights) // moved: the PEF's copy is not needed again
    s.state.emplace(name, std::move(t));
  if (!s.o.resume.empty()) resumeFrom(s);
  for (ArgumentsSource& r : s.replacements)
    replaceArguments(s.state, s.program(), std::move(r));
  s.replacements.clear();
  if (auto rng = s.state.find(kRngStateName); rng != s.state.end() && s.o.seed)
    rng->second.setInt(0, *s.o.seed);
}

void bindArguments(RunState& s) {
  const Function& f = s.program();
  std::vector<std::string> dataNames = s.data ? s.data->names() : std::vector<std::string>();
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() != ArgKind::Input) {
      s.args.push_back(std::move(s.state.at(a->name())));
      continue;
    }
    const PefTensor& spec =
        *std::find_if(s.l.pef.inputs.begin(), s.l.pef.inputs.end(),
                      [&](const PefTensor& in) { return in.name == a->name(); });
    if (std::find(dataNames.begin(), dataNames.end(), a->name()) != dataNames.end()) {
      s.fed.emplace_back(i, a->name());
      s.args.emplace_back(spec.type);
      continue;
    }
    s.args.push_back(readInput(s, a, spec));
  }
}

// --steps on one batch, or over --data for --epochs (1 by default) or --steps, whichever ends
// first; --sections forward and evaluations run the forward sections only.
void scheduleSteps(RunState& s) {
  const RunOptions& o = s.o;
  Dataset* data = s.data.get();
  s.batch = data ? data->batchSize() : 0;
  // Samples per step, for samples/s: the batch, or without --data the first input's.
  s.stepSamples = s.batch;
  if (!data && !s.l.pef.inputs.empty() && s.l.pef.inputs[0].type.rank() > 0)
    s.stepSamples = s.l.pef.inputs[0].type.shape[0];
  s.perEpoch = data ? data->batchesPerEpoch() : 0;
  s.epochs = data && !o.epochs && !o.steps ? 1 : o.epochs;
  s.total = o.steps ? o.steps : 1;
  if (data && s.epochs) {
    int64_t byEpochs = s.epochs > std::numeric_limits<int64_t>::max() / s.perEpoch
                           ? std::numeric_limits<int64_t>::max()
                           : s.epochs * s.perEpoch;
    s.total = o.steps ? std::min(o.steps, byEpochs) : byEpochs;
  }
  if (s.at.step >= s.total)
    throw Error("--resume: the checkpoint is at step " + std::to_string(s.at.step) +
                ", the run ends at step " + std::to_string(s.total) +
                " (raise --steps or --epochs to train further)");
  if (data && s.root) {
    int64_t dropped = data->samples() - s.perEpoch * s.batch;
    std::fprintf(stderr, "data: %lld samples, %lld batches of %lld per epoch%s",
                 static_cast<long long>(data->samples()), static_cast<long long>(s.perEpoch),
                 static_cast<long long>(s.batch), o.shuffle ? ", shuffled" : "");
    if (dropped)
      std::fprintf(stderr, "; the last %lld samples of each epoch's order are dropped",
                   static_cast<long long>(dropped));
    std::fprintf(stderr, "\n");
  }
  if (s.evalData && s.root && s.evalData->samples() % s.evalData->batchSize())
    std::fprintf(stderr, "eval data: %lld samples; the last %lld are not evaluated\n",
                 static_cast<long long>(s.evalData->samples()),
                 static_cast<long long>(s.evalData->samples() % s.evalData->batchSize()));
  if (!o.sections.empty()) {
    if (o.sections != "forward")
      throw Error("--sections " + o.sections + ": the sections a run can run alone are forward");
    s.opLimit = forwardOpLimit(s.l, o.pef, "--sections forward");
    if (data || !o.checkpointDir.empty() || !o.resume.empty())
      throw Error("--sections forward is an evaluation pass; evaluate a run with --eval-data");
  }
  if (s.evalData) s.evalLimit = forwardOpLimit(s.l, o.pef, "--eval-data");
  if (o.measureSections && o.reference)
    throw Error("--measure-sections times the compiled plan; it does not apply to --reference");
  if (o.measureSections && s.l.pef.programs[0].sections.empty())
    throw Error(o.pef + " holds no sections (compiled by a shardc before sections); recompile it");
}

} // namespace shardc
