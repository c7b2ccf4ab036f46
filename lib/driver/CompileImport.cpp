// The first stages of `shardc compile`: the model read (ONNX or text IR) with its initial
// values, the model-type heuristics, and the model's calls kept or inlined.
#include "CompileState.h"
#include "CompilerMode.h"

#include "shardc/import/OnnxImporter.h"
#include "shardc/io/TensorFormat.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/Parser.h"
#include "shardc/ir/Scan.h"
#include "shardc/ir/Verifier.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/sharding/Annotations.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"
#include "shardc/support/HostMemory.h"
#include "shardc/support/Stopwatch.h"
#include "shardc/transforms/OutlineBlocks.h"
#include "shardc/transforms/Passes.h"

#include <filesystem>
#include <set>

namespace shardc {
namespace {

namespace fs = std::filesystem;

// Parameters the exporter merged train as one unless untied: say which, and how to export.
void warnMergedInitializers(const CompileOptions& o,
                            const std::map<std::string, std::vector<std::string>>& merged,
                            CompileLog& log) {
  for (const auto& [kept, names] : merged) {
    std::string list;
    for (size_t i = 0; i < names.size(); ++i)
      list += (i ? ", '" : "'") + names[i] + "'";
    if (o.untieInitializers) {
      log.line("untied " + list + " from initializer '" + kept + "': each trains on its own");
      continue;
    }
    log.warn(o.model + ": initializer '" + kept + "' also stands for " + list +
             " (PyTorch's exporter merges parameters with equal values unless it exports for "
             "training), so this training step ties them. Export with torch.onnx.export(..., "
             "training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False), or "
             "compile with --untie-initializers");
  }
}

void importOnnxModel(CompileState& s) {
  const CompileOptions& o = s.o;
  ImportOptions io;
  io.batchSize = o.batchSize;
  if (o.partition.dataParallel) io.batchReplicas = std::max<int64_t>(1, o.partition.worldSize);
  io.untieInitializers = o.untieInitializers;
  io.training = !o.inference;
  ImportedModel im = importOnnx(o.model, io);
  s.module = std::move(im.module);
  s.weights = std::move(im.weights);
  s.state = std::move(im.state);
  s.origins = std::move(im.opOrigins);
  if (o.inference) return;
  warnMergedInitializers(o, im.mergedInitializers, s.log);
  for (const auto& [name, nan] : im.constantInitializers)
    if (nan < 0)
      s.log.line("initializer '" + name + "' holds an infinity (a mask buffer, not a " +
                 "weight): kept constant, not trained");
    else
      s.log.warn("initializer '" + name + "' holds NaN (element " + std::to_string(nan) +
                 "): no step can train it and every result it reaches is NaN; kept constant. "
                 "Check where the model's weights came from");
}

// The model is the first function; the others are what it calls.
void parseTextModel(CompileState& s) {
  const CompileOptions& o = s.o;
  if (o.untieInitializers) throw Error("--untie-initializers applies to ONNX models only");
  std::string text = readFile(o.model);
  DiagEngine diags(o.model);
  ParsedAnnotations annotations;
  s.module = parseModule(text, diags, annotations);
  if (s.module) verifyModule(*s.module, diags);
  if (diags.hasErrors()) throw Error(diags.formatLocated(diags.diagnostics()[0]));
  // Read by shardc-opt; compile takes its partitioning from flags or --strategy, and would
  // otherwise drop them without a word.
  if (!annotations.mesh.empty() || !annotations.shardings.empty())
    throw Error(o.model + ":" +
                std::to_string(!annotations.mesh.empty() ? annotations.meshLoc.line
                                                         : annotations.shardings[0].loc.line) +
                ": the model carries mesh or sharding annotations, which compile does not read; "
                "give the partitioning with --strategy FILE (or --data-parallel, "
                "--tensor-parallel, --auto-partition) and remove them");
  if (s.module->functions().empty()) throw Error(o.model + ": the text IR holds no function");
  if (o.batchSize) throw Error("-b/--batch-size is supported for ONNX models only");
  // Ops come from where their first named results say; read only by --hypersection-pattern
  // and --compiler-mode.
  if (!o.hypersectionPattern.empty() || o.compilerMode != "default")
    for (const auto& op : s.model().ops())
      for (size_t r = 0; r < op->numResults(); ++r)
        if (!op->result(r)->name().empty()) {
          s.origins.emplace(op.get(), op->result(r)->name());
          break;
        }
}

// A text IR model's initial values, made here: their bytes must exist before they are
// allocated.
void initializeTextModel(CompileState& s) {
  const CompileOptions& o = s.o;
  const Function& f = s.model();
  int64_t stateBytes = 0;
  for (size_t i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->argKind() != ArgKind::Input &&
        __builtin_add_overflow(stateBytes, f.argument(i)->type().bytes(), &stateBytes))
      stateBytes = INT64_MAX;
  if (!o.estimateOnly && stateBytes > hostMemoryBytes())
    throw Error(o.model + ": the parameters and state need " + std::to_string(stateBytes) +
                " bytes, more than this machine's " + std::to_string(hostMemoryBytes()) +
                " (--estimate-only estimates it without them)");
  double seconds = 0;
  Stopwatch watch(seconds);
  for (size_t i = 0; i < f.numArguments() && !o.estimateOnly; ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() == ArgKind::Param)
      s.weights[a->name()] = std::make_shared<Tensor>(randomTensor(a->type(), o.seed + i, 2));
    else if (a->argKind() == ArgKind::OptState)
      s.state[a->name()] = std::make_shared<Tensor>(a->type());
  }
  watch.stop();
  s.weightsMs = seconds * 1e3;
  s.log.line("text IR parameters are initialized uniformly in [-1, 1) with seed " +
             std::to_string(o.seed) + ", its opt_state arguments with zeros (" +
             std::to_string(s.weightsMs) + " ms)");
}

} // namespace

void importModel(CompileState& s) {
  const CompileOptions& o = s.o;
  bool onnx = fs::path(o.model).extension() == ".onnx";
  if (onnx) {
    importOnnxModel(s);
  } else {
    parseTextModel(s);
    initializeTextModel(s);
  }
  Function& f = s.model();
  s.log.line("loaded " + o.model + ": " + std::to_string(f.ops().size()) + " ops");
  if (o.partition.dataParallel && onnx && f.numArguments() > 0 &&
      f.argument(0)->type().rank() > 0) {
    int64_t all = f.argument(0)->type().shape[0], n = o.partition.worldSize;
    s.log.line("data parallel: a batch of " + std::to_string(all / n) + " per replica (-b), " +
               std::to_string(all) + " over the -ws " + std::to_string(n) + " replicas");
  }
}

void applyModelHeuristics(CompileState& s) {
  for (const std::string& line : applyCompilerMode(s.o, s.sections, s.model(), s.origins))
    s.log.line(line);
  s.sections.hypersections = s.o.hypersections;
  if (!s.o.hypersectionPattern.empty())
    for (const std::string& line : outlineBlocks(s.model(), s.origins, s.o.hypersectionPattern))
      s.log.line(line);
  s.origins.clear(); // ops change from here on
}

// A model that calls functions of its module keeps its calls where each called function can
// be compiled once (--enable-hypersection, one device); elsewhere they are inlined: without
// the flag the program is flat, and partitioning reads one function (after it, repeated runs
// are found again). A function the model does not call is an error. (A called function calls
// nothing: the verifier checks it.)
void keepOrInlineCalls(CompileState& s) {
  const CompileOptions& o = s.o;
  Function& f = s.model();
  if (s.module->functions().size() == 1) return;
  std::map<std::string, int64_t> calls; // runs of each callee
  std::set<std::string> scanned;
  for (const auto& op : f.ops()) {
    if (!op->def().callsFunction) continue;
    const std::string& callee = op->attrs().getString("callee");
    calls[callee] += runsOf(*op);
    if (isScan(*op)) scanned.insert(callee);
  }
  for (const auto& g : s.module->functions())
    if (g.get() != &f && !calls.count(g->name()))
      throw Error(o.model + ": @" + g->name() + " is not called by @" + f.name() +
                  " (the model is the first function; the others must be what it calls)");
  if (calls.empty()) return;
  std::string why;
  if (!o.hypersections)
    why = "without --enable-hypersection";
  else if (o.partition.requested())
    why = "for partitioning, which reads one function (repeated runs are found again after it)";
  std::string shown;
  for (const auto& [name, n] : calls)
    shown += (shown.empty() ? "@" : ", @") + name + " x" + std::to_string(n) +
             (scanned.count(name) ? " (scanned)" : "");
  if (why.empty()) {
    s.log.line("calls kept as hypersection bodies: " + shown);
    return;
  }
  inlineCalls(f);
  s.log.line("calls inlined " + why + ": " + shown + "; " + std::to_string(f.ops().size()) +
             " ops");
}

} // namespace shardc
