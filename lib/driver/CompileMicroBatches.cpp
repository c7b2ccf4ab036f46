// The micro-batches stage (--auto-partition without --micro-batches): when the step the search
// found needs recomputation to fit, or does not fit, the model's batch is split into 2, 4, 8...
// micro-batches (a step still takes the same samples), each count compiled (writing nothing)
// with its own search and recomputation, and the fastest step that fits wins. More micro-batches
// cost time (smaller products, the weights read once per micro-batch) and save activation
// memory; so the counts stop at the first that fits without recomputation (or at all, when the
// user fixed the recomputation).
#include "CompileState.h"

#include "shardc/search/Search.h"
#include "shardc/support/Error.h"

#include <optional>

namespace shardc {
namespace {

struct Trial {
  int64_t microBatches = 1;
  double seconds = 0;
  int64_t peak = 0;
  bool fits = false;
  std::string recompute;

  std::string str() const {
    return std::to_string(microBatches) + " micro-batch" + (microBatches > 1 ? "es" : "") +
           ": a step of " + formatSeconds(seconds) + " in " +
           formatBytes(static_cast<double>(peak)) + " per device" +
           (fits ? "" : " (does not fit)") + ", recompute " + recompute;
  }
  // Fits first, then faster; of steps that do not fit, the smaller.
  bool betterThan(const Trial& o) const {
    if (fits != o.fits) return fits;
    return fits ? seconds < o.seconds : peak < o.peak;
  }
};

// The step as this compile has it, priced as the estimate stage will.
Trial current(const CompileState& s) {
  CostReport c = priceProgramCopy(s);
  return {s.o.train.microBatches, c.stepSeconds, c.memory.peak(), c.fits(),
          s.pef.training->recompute};
}

// The same compile, quiet and writing nothing, with the model's batch split into `m`: its
// memory is the planned arena's where the compile plans kernels, as the memory stage checks.
Trial trial(const CompileState& s, int64_t m) {
  CompileOptions o = s.o;
  o.verbose = o.debug = o.keepTemporaryFiles = o.dumpKernels = false;
  o.train.microBatches = m;
  CompileLog log(false, false); // the compile's own warnings were printed already
  CompileOutputs out(o.outputFolder, s.name + ".micro-batches", s.dir, s.logDir, false);
  CompileState t(o, s.target, log, out);
  t.name = s.name;
  t.dir = s.dir;
  t.logDir = s.logDir;
  t.splitBatch = true;
  t.trial = true;
  checkControls(t);
  runStages(t);
  return {m, t.report.stepSeconds, t.report.memory.peak(), t.report.fits(),
          t.pef.training->recompute};
}

// Whether more micro-batches cannot make a step that fits faster: it recomputes nothing, or
// the user fixed the recomputation (more micro-batches then only add time).
bool done(const CompileState& s, const Trial& t) {
  return t.recompute == "none" || recomputeMode(s.o) != "auto";
}

// The inputs' common first dimension, or 0.
int64_t batchOf(const Function& f) {
  int64_t batch = 0;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() != ArgKind::Input) continue;
    if (a->type().rank() < 1 || (batch && a->type().shape[0] != batch)) return 0;
    batch = a->type().shape[0];
  }
  return batch;
}

} // namespace

bool choosesMicroBatches(const CompileState& s) {
  const CompileOptions& o = s.o;
  return !o.inference && o.partition.autoPartition && !o.microBatchesGiven && !s.splitBatch;
}

namespace {

// Tries 2, 4, 8... micro-batches against `best` (the step as it is, if it was priced) and sets
// s.restartWith to the best count; false when none fits.
bool tryMicroBatches(CompileState& s, std::optional<Trial> best, int64_t batch) {
  // Each micro-batch must still split over any one mesh axis, as data parallelism would.
  auto splits = [&](int64_t m) {
    if (batch % m) return false;
    for (const MeshAxis& a : s.mesh.axes())
      if ((batch / m) % a.size) return false;
    return true;
  };
  for (int64_t m = 2; batch && m <= batch && splits(m); m *= 2) {
    Trial t;
    try {
      t = trial(s, m);
    } catch (const NoPlanFits& e) { // more micro-batches may fit, unless no smaller batch does
      s.log.line("micro-batches auto: " + std::to_string(m) + ": " + e.what());
      if (!e.smallerBatchMayFit) break;
      continue;
    } catch (const Error& e) {
      s.log.line("micro-batches auto: " + std::to_string(m) + ": " + e.what());
      break;
    }
    s.log.line("micro-batches auto: " + t.str());
    if (!best || t.betterThan(*best)) best = t;
    if (t.fits && done(s, t)) break;
  }
  if (!best || !best->fits) return false;
  s.log.line("micro-batches auto: " + std::to_string(best->microBatches) + " chosen");
  if (best->microBatches != s.o.train.microBatches) s.restartWith = best->microBatches;
  return true;
}

} // namespace

void chooseMicroBatches(CompileState& s) {
  Trial now = current(s);
  s.log.line("micro-batches auto: " + now.str());
  if (now.fits && done(s, now)) return;
  tryMicroBatches(s, now, batchOf(s.model()));
}

bool microBatchesWhenNothingFits(CompileState& s, const NoPlanFits& why) {
  s.log.line("micro-batches auto: no plan fits the whole batch in one pass");
  if (!why.smallerBatchMayFit) {
    s.log.line("micro-batches auto: none tried: no smaller batch would fit");
    return false;
  }
  return tryMicroBatches(s, std::nullopt, batchOf(s.model()));
}

} // namespace shardc
