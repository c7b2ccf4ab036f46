// The middle stages of `shardc compile`: the training step, the PEF's signature and weights,
// and the partitioning into a per-device program with its gradient buckets.
#include "CompileState.h"

#include "shardc/Version.h"
#include "shardc/dataflow/Sections.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/search/Search.h"
#include "shardc/sharding/Annotations.h"
#include "shardc/sharding/SplitBatch.h"
#include "shardc/sharding/Strategy.h"
#include "shardc/support/Stopwatch.h"
#include "shardc/train/TrainStep.h"
#include "shardc/transforms/Passes.h"

#include <ctime>

namespace shardc {
namespace {

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// What `shardc run` needs of the training step: the optimizer's settings, as compiled.
PefTraining trainingOf(const TrainOptions& t) {
  PefTraining p{t.loss,        t.optimizer, t.learningRate, t.momentum, t.nesterov,
                t.weightDecay, t.beta1,     t.beta2,        t.epsilon};
  p.microBatches = t.microBatches;
  return p;
}

// "all_reduce x3 all_gather x2", or "none".
std::string collectiveCounts(const Function& f) {
  std::map<std::string, int> collectives;
  for (const auto& op : f.ops())
    if (op->def().communicates) ++collectives[op->name()];
  std::string counts;
  for (const auto& [kind, n] : collectives)
    counts += (counts.empty() ? "" : " ") + kind + " x" + std::to_string(n);
  return counts.empty() ? "none" : counts;
}

// The gradient reduction's rewrites: each micro-batch sum reduced once, then the reductions
// merged into buckets of --grad-bucket-mib. How many all-reduces each removed.
std::pair<int64_t, int64_t> reduceGradients(const CompileState& s, Function& f) {
  int64_t sunk = sinkReductionsIntoSums(f);
  auto bucket = static_cast<int64_t>(s.o.gradBucketMiB.value_or(25) * (1 << 20));
  return {sunk, bucket == 0 ? 0 : bucketGradientReductions(f, bucket)};
}

} // namespace

void buildTraining(CompileState& s) {
  if (s.splitBatch) {
    s.module = splitBatch(s.model(), s.o.train.microBatches);
    s.log.line("micro-batches: the model's batch split into " +
               std::to_string(s.o.train.microBatches));
  }
  TrainOptions train = s.o.train;
  train.initialState = !s.o.estimateOnly;
  TrainStepInfo info = buildTrainStep(s.model(), train);
  s.optimizerState = std::move(info.optimizerState);
  std::string trained;
  for (const auto& n : info.trained)
    trained += " " + n;
  s.log.line("training step: loss '" + info.lossName + "', optimizer " + s.o.train.optimizer +
             ", " + std::to_string(info.trained.size()) + " trained parameters:" + trained);
  for (const auto& n : info.untrained)
    s.log.line("not trained: " + n);
}

// The PEF's header, its buffers and the initial values of its parameters and state.
void describeSignature(CompileState& s) {
  const CompileOptions& o = s.o;
  Pef& pef = s.pef;
  pef.shardcVersion = kShardcVersion;
  pef.compileArgs = o.commandLine;
  pef.createdUtc = utcNow();
  pef.mode = o.inference ? "inference" : "training";
  if (!o.inference) {
    pef.training = trainingOf(o.train);
    pef.training->precision = o.precision;
  }
  pef.arch = s.target.name;
  pef.optimizationLevel = "o" + std::to_string(s.sections.level);
  if (s.sections.level == 1)
    pef.optimizationRules = s.rules ? o.optimizationRules : s.sections.rules ? "nlp" : "default";
  pef.scalingFactors.assign(s.sections.scaling.byPhase.begin(), s.sections.scaling.byPhase.end());
  const Function& f = s.model();
  // The model's own tensors are shared rather than copied: the PEF only writes them out.
  auto shared = [](const TensorRef& w) {
    return w->byteSize() ? Tensor(w->type(), const_cast<uint8_t*>(w->data()), w) : *w;
  };
  // Gathering the weights into the PEF is part of writing them (see writePefFiles).
  double seconds = 0;
  Stopwatch watch(seconds);
  pef.weights.reserve(f.numArguments());
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    PefTensor t{a->name(), a->type()};
    if (a->argKind() == ArgKind::Input) {
      pef.inputs.push_back(t);
      pef.buffers.push_back({t, BufferKind::Input});
      continue;
    }
    bool param = a->argKind() == ArgKind::Param;
    pef.buffers.push_back({t, param ? BufferKind::Param : BufferKind::OptState});
    if (!o.estimateOnly)
      pef.weights.emplace_back(a->name(),
                               param || s.state.count(a->name())
                                   ? shared(param ? s.weights.at(a->name()) : s.state.at(a->name()))
                                   : std::move(s.optimizerState.at(a->name())));
    s.paramCount += a->type().numel();
    s.paramBytes += a->type().bytes();
  }
  watch.stop();
  s.copyMs = seconds * 1e3;
  for (const auto& r : f.results()) {
    if (r.tiedArg >= 0) continue; // updated state, not an output
    pef.outputs.push_back({r.name, r.value->type()});
    pef.buffers.push_back({{r.name, r.value->type()}, BufferKind::Output});
  }
  s.log.line("program: " + std::to_string(f.ops().size()) + " ops, " +
             std::to_string(pef.inputs.size()) + " inputs, " + std::to_string(pef.outputs.size()) +
             " outputs, " + std::to_string(s.paramCount) + " parameters (" +
             std::to_string(s.paramBytes) + " bytes)");
}

// The shardings (flags, strategy file or search), propagated and lowered to one per-device
// program with its collectives; the cleanup passes the lowering calls for.
void partition(CompileState& s) {
  Function& f = s.model();
  auto clean = [](Function& g) {
    for (const char* passName : {"localize-constants", "cse", "dce"})
      findPass(passName)->run(g);
  };
  // The search prices each plan's program after the stages up to recompute, in sections.
  s.setup->search.cleanLowered = [&s, clean](Function& g) {
    clean(g);
    if (!s.o.inference) reduceGradients(s, g);
  };
  s.setup->search.price = [&s](Function& g, const Mesh& mesh) {
    return priceAsCompiled(s, g, mesh);
  };
  if (!s.o.inference) s.setup->search.programVariants = recomputeVariants(recomputeMode(s.o));
  try {
    s.partitioned = partitionProgram(f, s.o.partition, *s.setup, s.target,
                                     [&](const std::string& line) { s.log.line(line); });
  } catch (const NoPlanFits& e) {
    s.log.line(e.what());
    s.mesh = s.setup->mesh;
    if (!choosesMicroBatches(s) || !microBatchesWhenNothingFits(s, e)) throw;
    return; // compiled again with the micro-batches chosen
  }
  Partitioned& part = *s.partitioned;
  Function& local = s.program();
  for (const auto& g : part.program.module->functions())
    clean(*g);
  s.pef.searchJson = std::move(part.searchJson);
  s.mesh = part.plan.mesh();
  for (const MeshAxis& a : s.mesh.axes())
    s.pef.mesh.emplace_back(a.name, a.size);
  s.log.line("partitioned: per-device program of " + std::to_string(local.ops().size()) +
             " ops; collectives: " + collectiveCounts(local));
  s.artifacts.emplace_back(s.name + ".strategy", writeStrategy(f, part.plan));
  s.artifacts.emplace_back(s.name + ".sharded.ir", printShardedModule(*s.module, part.plan));
  if (s.o.debug)
    s.artifacts.emplace_back(s.name + ".origins.txt", printShardingOrigins(f, part.plan));
}

void bucketGradients(CompileState& s) {
  auto [sunk, merged] = reduceGradients(s, s.program());
  if (sunk)
    s.log.line("gradient reduction: " + std::to_string(sunk) +
               " all-reduces of summed micro-batch gradients replaced by one of their sum");
  auto bucket = static_cast<int64_t>(s.o.gradBucketMiB.value_or(25) * (1 << 20));
  if (bucket == 0)
    s.log.line("gradient reduction: one all-reduce per gradient (--grad-bucket-mib 0)");
  else if (merged)
    s.log.line("gradient reduction: " + std::to_string(merged) +
               " all-reduces merged into buckets of up to " +
               formatBytes(static_cast<double>(bucket)));
  s.log.line("collectives: " + collectiveCounts(s.program()));
}

} // namespace shardc
