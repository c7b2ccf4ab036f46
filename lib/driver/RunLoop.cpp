// The steps of `shardc run`: the ranks agreed, the program bound to its devices, then step
// after step over one batch or the data's epochs, with evaluations, checkpoints and the
// progress line.
#include "RunState.h"

#include "shardc/collectives/MpiCollectives.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Digest.h"
#include "shardc/support/Error.h"
#include "shardc/support/Interrupt.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace shardc {
namespace {

uint64_t textDigest(const std::string& s) {
  return digestBytes(s.data(), s.size());
}

// Under mpirun every rank reads its own files: a rank given another PEF, input, data,
// weights or step count would compute something else, or wait in a collective the others
// never reach.
void agreeAcrossRanks(const RunState& s) {
  const RunOptions& o = s.o;
  const Function& f = s.program();
  std::vector<std::pair<std::string, uint64_t>> items = {
      {"PEF (--pef)", s.l.pef.checksum},
      {"--reference", o.reference},
      {"--sections", textDigest(o.sections)},
      {"--measure-sections", o.measureSections},
      {"--stats-json (given or not)", !o.statsJson.empty()},
      {"step count (--steps, --epochs, --resume)",
       static_cast<uint64_t>(s.total) * 1000003u + static_cast<uint64_t>(s.at.step)},
      {"--data", s.data ? s.data->digest() : 0},
      {"--eval-data and --eval-every",
       (s.evalData ? s.evalData->digest() : 0) + static_cast<uint64_t>(o.evalEvery)},
      {"--shuffle and --data-seed", o.dataSeed * 2 + o.shuffle},
      {"--checkpoint-dir and --checkpoint-every",
       textDigest(o.checkpointDir) + static_cast<uint64_t>(o.checkpointEvery)}};
  uint64_t state = 0;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Tensor& t = s.args[i];
    uint64_t d =
        digestBytes(t.data(), static_cast<size_t>(t.byteSize()), textDigest(t.type().str()));
    if (f.argument(i)->argKind() == ArgKind::Input)
      items.emplace_back("input '" + f.argument(i)->name() + "' (--input)", d);
    else
      state = digestBytes(&d, sizeof d, state);
  }
  items.emplace_back("parameters or state (the PEF's, --weights, --seed, --resume)", state);
  mpi::agree(items);
}

std::string formatLoss(double v) {
  return std::isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf";
}

void feed(RunState& s, const Dataset& d, const std::vector<int64_t>& order, int64_t first) {
  std::map<std::string, Tensor> b = d.batch(order, first);
  for (const auto& [i, name] : s.fed)
    s.exec->setInput(i, b.at(name));
}

// The forward sections over the held-out samples; their mean loss reported.
void evaluate(RunState& s) {
  const Dataset& d = *s.evalData;
  std::vector<int64_t> order = sampleOrder(d.samples(), false, 0, 0);
  double sum = 0;
  for (int64_t k = 0; k < d.batchesPerEpoch(); ++k) {
    feed(s, d, order, k * d.batchSize());
    std::vector<Tensor> outs = s.exec->step(1, s.evalLimit); // the loss
    if (s.root) sum += outs[0].getDouble(0);
  }
  s.report->evaluation(s.before + s.at.step, s.at.epoch,
                       sum / static_cast<double>(d.batchesPerEpoch()), d.batchesPerEpoch());
}

void checkpoint(RunState& s) {
  NamedTensors params = argumentsOfKind(*s.exec, s.program(), ArgKind::Param);
  NamedTensors state = argumentsOfKind(*s.exec, s.program(), ArgKind::OptState);
  if (!s.root) return;
  RunProgress p = s.at;
  p.step += s.before;
  p.shuffle = s.o.shuffle;
  p.dataSeed = s.o.dataSeed;
  p.batch = s.batch;
  p.pef = s.l.pef.checksum;
  p.arguments = s.o.commandLine;
  writeCheckpoint(s.o.checkpointDir, p, params, state, s.o.keep);
  s.checkpointed = s.at.step;
}

// The next batch of --data fed in. A data file changed under the run ends it, keeping what the
// finished steps reached. (Under mpirun the other ranks are inside a step's collectives, so no
// checkpoint is taken.)
void feedNextBatch(RunState& s, std::vector<int64_t>& order, int64_t& orderEpoch) {
  if (s.at.position + s.batch > s.data->samples()) {
    ++s.at.epoch;
    s.at.position = 0;
  }
  if (orderEpoch != s.at.epoch) {
    order = sampleOrder(s.data->samples(), s.o.shuffle, s.o.dataSeed, s.at.epoch);
    orderEpoch = s.at.epoch;
  }
  try {
    feed(s, *s.data, order, s.at.position);
  } catch (const Error& e) {
    bool save = !s.o.checkpointDir.empty() && !mpi::launchedByMpi() && s.at.step > s.checkpointed;
    if (save) checkpoint(s);
    throw Error(std::string(e.what()) + "; the run stopped after step " +
                std::to_string(s.before + s.at.step) +
                (save ? ", checkpointed in " + s.o.checkpointDir : std::string()));
  }
}

// Rank 0 holds the loss; when it stops, mpirun ends the other ranks.
void watchLoss(RunState& s, double loss) {
  if (std::isfinite(loss) || s.diverged) return;
  s.diverged = s.before + s.at.step;
  std::string what = "the loss is " + formatLoss(loss) + " at step " + std::to_string(s.diverged);
  if (s.o.stopOnNonfinite) throw Error(what + " (--stop-on-nonfinite)");
  std::fprintf(stderr,
               "shardc: warning: %s; the weights are no longer finite and later steps "
               "train on them (--stop-on-nonfinite ends the run here)\n",
               what.c_str());
}

void oneStep(RunState& s) {
  auto t0 = std::chrono::steady_clock::now();
  // A training run over one batch stacks every step's outputs; an inference run, or one
  // over --data, keeps its last (and each step's loss, for --metrics).
  bool last = s.at.step + 1 == s.total;
  bool stacked = s.training && !s.data;
  size_t keep = last || stacked ? Executor::kAll : s.training ? 1 : 0;
  std::vector<Tensor> outs = s.exec->step(keep, s.opLimit);
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.seconds.push_back(sec);
  int64_t epochOfStep = s.at.epoch;
  ++s.at.step;
  s.at.position += s.batch;
  if (s.training && s.root && s.opLimit < 0) {
    double loss = outs[0].getDouble(0);
    s.report->step(s.before + s.at.step, epochOfStep, loss, s.stepSamples, sec);
    watchLoss(s, loss);
  }
  if (last || stacked) s.perStep.push_back(std::move(outs));
}

} // namespace

NamedTensors argumentsOfKind(Executor& exec, const Function& f, ArgKind kind) {
  NamedTensors out;
  for (size_t i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->argKind() == kind) out.emplace_back(f.argument(i)->name(), exec.argument(i));
  return out;
}

void startExecution(RunState& s) {
  const RunOptions& o = s.o;
  if (mpi::launchedByMpi()) {
    mpi::setCollectiveTimeout(o.collectiveTimeout);
    agreeAcrossRanks(s);
  }
  if (!o.checkpointDir.empty() && s.root) s.lock.emplace(o.checkpointDir);
  s.exec = std::make_unique<Executor>(s.l, std::move(s.args), o.reference, o.threads,
                                      o.stats || o.measureSections || !o.statsJson.empty());
  // The learning rate as compiled; PEFs of an older shardc do not record it (NaN: unknown).
  double lr = s.l.pef.training ? s.l.pef.training->learningRate : std::nan("");
  s.report = std::make_unique<StepReporter>(
      s.root ? o.metrics : "", !o.resume.empty() || s.before > 0, s.before + s.at.step,
      s.before + s.total, s.epochs, lr, s.root && (s.data || ::isatty(2) == 1) && s.training,
      s.arrays ? &s.arrays->records : nullptr);
  s.checkpointed = s.at.step;
}

void runSteps(RunState& s) {
  std::vector<int64_t> order;
  int64_t orderEpoch = -1;
  while (s.at.step < s.total) {
    // A stop asked for (Interrupt.h) ends the run between steps, as if it ended here.
    if (interruptRequested()) {
      s.interrupted = true;
      if (!s.o.checkpointDir.empty() && s.at.step > s.checkpointed) checkpoint(s);
      break;
    }
    if (s.data) feedNextBatch(s, order, orderEpoch);
    oneStep(s);
    bool epochEnd = s.data && s.at.position + s.batch > s.data->samples();
    if (s.evalData &&
        (s.o.evalEvery ? s.at.step % s.o.evalEvery == 0 : epochEnd || s.at.step == s.total))
      evaluate(s);
    if (!s.o.checkpointDir.empty() &&
        (s.at.step == s.total || (s.o.checkpointEvery && s.at.step % s.o.checkpointEvery == 0)))
      checkpoint(s);
  }
  s.report->finish();
  if (s.arrays) {
    s.arrays->interrupted = s.interrupted;
    s.arrays->stepsRun = s.stepsRun();
  }
}

} // namespace shardc
