#include "CompileOutputs.h"
#include "CompilerMode.h"
#include "CostJson.h"
#include "KernelDump.h"
#include "Partition.h"
#include "shardc/Version.h"
#include "shardc/cost/CostModel.h"
#include "shardc/cost/Target.h"
#include "shardc/dataflow/FusionRules.h"
#include "shardc/dataflow/Sections.h"
#include "shardc/driver/Driver.h"
#include "shardc/import/OnnxImporter.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"
#include "shardc/ir/Printer.h"
#include "shardc/ir/Scan.h"
#include "shardc/ir/Verifier.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/pef/Pef.h"
#include "shardc/runtime/TensorFormat.h"
#include "shardc/sharding/Annotations.h"
#include "shardc/sharding/Strategy.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"
#include "shardc/support/HostMemory.h"
#include "shardc/train/TrainStep.h"
#include "shardc/transforms/OutlineBlocks.h"
#include "shardc/transforms/Passes.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unistd.h>
#include <unordered_map>

namespace shardc {
namespace {

namespace fs = std::filesystem;

std::string utcNow(const char* fmt) {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, fmt, std::gmtime(&t));
  return buf;
}

// At most 200 characters: NAME.sharded.ir and the other files it names must fit a file
// name (255 bytes).
bool validPefName(const std::string& n) {
  if (n.empty() || n.size() > 200 || n == "." || n == "..") return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

// Collects the compile log; --verbose mirrors it on stderr.
class CompileLog {
public:
  explicit CompileLog(bool verbose) : verbose_(verbose) {}
  void line(const std::string& s) {
    text_ += s + "\n";
    if (verbose_) std::cerr << "shardc: " << s << "\n";
  }
  // Also on stderr without --verbose.
  void warn(const std::string& s) {
    text_ += "warning: " + s + "\n";
    std::cerr << "shardc: warning: " << s << "\n";
  }
  const std::string& text() const { return text_; }

private:
  bool verbose_;
  std::string text_;
};

struct Model {
  std::unique_ptr<Module> module;
  std::unordered_map<const Op*, std::string> origins; // see outlineBlocks
  std::map<std::string, TensorRef> weights;
  std::map<std::string, TensorRef> state; // opt_state the model brings (dropout's rng)
  double weightsMs = 0; // making the text IR's initial values, apart from compiling
};

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

Model loadModel(const CompileOptions& o, CompileLog& log) {
  Model m;
  if (fs::path(o.model).extension() == ".onnx") {
    ImportOptions io;
    io.batchSize = o.batchSize;
    if (o.partition.dataParallel) io.batchReplicas = std::max<int64_t>(1, o.partition.worldSize);
    io.untieInitializers = o.untieInitializers;
    io.training = !o.inference;
    ImportedModel im = importOnnx(o.model, io);
    m.module = std::move(im.module);
    m.weights = std::move(im.weights);
    m.state = std::move(im.state);
    m.origins = std::move(im.opOrigins);
    if (!o.inference) {
      warnMergedInitializers(o, im.mergedInitializers, log);
      for (const auto& [name, nan] : im.constantInitializers)
        if (nan < 0)
          log.line("initializer '" + name + "' holds an infinity (a mask buffer, not a " +
                   "weight): kept constant, not trained");
        else
          log.warn("initializer '" + name + "' holds NaN (element " + std::to_string(nan) +
                   "): no step can train it and every result it reaches is NaN; kept constant. "
                   "Check where the model's weights came from");
    }
    return m;
  }
  if (o.untieInitializers) throw Error("--untie-initializers applies to ONNX models only");
  std::string text = readFile(o.model);
  DiagEngine diags(o.model);
  ParsedAnnotations annotations;
  m.module = parseModule(text, diags, annotations);
  if (m.module) verifyModule(*m.module, diags);
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
  // The model is the first function; the others are what it calls. Its ops come from where
  // their first named results say.
  if (m.module->functions().empty()) throw Error(o.model + ": the text IR holds no function");
  // Read only by --hypersection-pattern and --compiler-mode.
  if (!o.hypersectionPattern.empty() || o.compilerMode != "default")
    for (const auto& op : m.module->functions()[0]->ops())
      for (size_t r = 0; r < op->numResults(); ++r)
        if (!op->result(r)->name().empty()) {
          m.origins.emplace(op.get(), op->result(r)->name());
          break;
        }
  if (o.batchSize) throw Error("-b/--batch-size is supported for ONNX models only");
  const Function& f = *m.module->functions()[0];
  // The initial values are made here: their bytes must exist before they are allocated.
  int64_t stateBytes = 0;
  for (size_t i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->argKind() != ArgKind::Input &&
        __builtin_add_overflow(stateBytes, f.argument(i)->type().bytes(), &stateBytes))
      stateBytes = INT64_MAX;
  if (!o.estimateOnly && stateBytes > hostMemoryBytes())
    throw Error(o.model + ": the parameters and state need " + std::to_string(stateBytes) +
                " bytes, more than this machine's " + std::to_string(hostMemoryBytes()) +
                " (--estimate-only estimates it without them)");
  auto w0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < f.numArguments() && !o.estimateOnly; ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() == ArgKind::Param)
      m.weights[a->name()] = std::make_shared<Tensor>(randomTensor(a->type(), o.seed + i, 2));
    else if (a->argKind() == ArgKind::OptState)
      m.state[a->name()] = std::make_shared<Tensor>(a->type());
  }
  m.weightsMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count();
  log.line("text IR parameters are initialized uniformly in [-1, 1) with seed " +
           std::to_string(o.seed) + ", its opt_state arguments with zeros (" +
           std::to_string(m.weightsMs) + " ms)");
  return m;
}

// A model that calls functions of its module keeps its calls where each called function can
// be compiled once (--enable-hypersection, one device); elsewhere they are inlined: without
// the flag the program is flat, and partitioning reads one function (after it, repeated runs
// are found again). A function the model does not call is an error. (A called function calls
// nothing: the verifier checks it.)
void keepOrInlineCalls(const CompileOptions& o, Function& f, CompileLog& log) {
  Module& m = *f.module();
  if (m.functions().size() == 1) return;
  std::map<std::string, int64_t> calls; // runs of each callee
  std::set<std::string> scanned;
  for (const auto& op : f.ops()) {
    if (!op->def().callsFunction) continue;
    const std::string& callee = op->attrs().getString("callee");
    calls[callee] += runsOf(*op);
    if (isScan(*op)) scanned.insert(callee);
  }
  for (const auto& g : m.functions())
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
    log.line("calls kept as hypersection bodies: " + shown);
    return;
  }
  inlineCalls(f);
  log.line("calls inlined " + why + ": " + shown + "; " + std::to_string(f.ops().size()) + " ops");
}

// The section controls, checked before the model loads.
SectionOptions sectionOptions(const CompileOptions& o, std::optional<FusionRules>& rules) {
  SectionOptions so;
  so.level = o.optLevel;
  so.hypersections = o.hypersections;
  if (so.level != 0 && so.level != 1 && so.level != 3)
    throw Error("optimization level " + std::to_string(so.level) + " is not one of -o0, -o1, -o3");
  if (!o.optimizationRules.empty()) {
    if (so.level != 1)
      throw Error("--optimization-rules applies to -o1 (this compile is -o" +
                  std::to_string(so.level) + ")");
    rules = FusionRules::parse(readFile(o.optimizationRules), o.optimizationRules);
    so.rules = &*rules;
  }
  const auto& f = o.scalingFactors;
  if (!f.empty()) {
    if (f.size() != 3 && f.size() != 4)
      throw Error("--resources-scaling-factors takes 3 or 4 values (forward, backward, "
                  "optimizer [, gradient reduction]), got " +
                  std::to_string(f.size()));
    const char* names[] = {"forward", "backward", "optimizer", "gradient reduction"};
    for (size_t i = 0; i < f.size(); ++i)
      if (!(f[i] > 0 && f[i] <= 1)) {
        char got[32];
        std::snprintf(got, sizeof got, "%g", f[i]);
        throw Error("--resources-scaling-factors: the " + std::string(names[i]) +
                    " factor must be in (0, 1], got " + got);
      }
    so.scaling.byPhase[static_cast<size_t>(Phase::Forward)] = f[0];
    so.scaling.byPhase[static_cast<size_t>(Phase::Backward)] = f[1];
    so.scaling.byPhase[static_cast<size_t>(Phase::Optimizer)] = f[2];
    if (f.size() == 4) so.scaling.byPhase[static_cast<size_t>(Phase::GradReduce)] = f[3];
  }
  return so;
}

// The ops the estimate prices as units: on CPU targets the kernels of the executable plan (what
// the runtime dispatches; views and bind-time constants run none), elsewhere the sections.
std::vector<int64_t> costGroups(const Target& t, const Function& f,
                                const std::vector<Section>& sections) {
  auto numOps = static_cast<int64_t>(f.ops().size());
  std::vector<int64_t> sectionOf = sectionOfOps(sections, numOps);
  if (t.computeUnits == 0) return sectionOf;
  std::vector<int64_t> kernelOf = buildPlan(f, sectionOf).stepOfOps(numOps);
  std::replace(kernelOf.begin(), kernelOf.end(), int64_t{-1}, CostModel::kNoKernel);
  return kernelOf;
}

// --dump-kernels: LOG_DIR/kernels/FUNCTION.txt (characters a file name should not hold
// replaced).
void dumpKernelsOf(const Function& fn, const ExecPlan& plan, const std::vector<Section>& sections,
                   CompileOutputs& out) {
  std::string file = fn.name();
  for (char& c : file)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  out.write(CompileOutputs::Place::Log, "kernels/" + file + ".txt",
            dumpKernels(fn, plan, sections));
}

// Where the compile's files go, by name.
struct OutputPaths {
  std::string name;
  fs::path dir, logDir;
};

CompileResult compileWith(CompileOptions& o, const Target& target, const OutputPaths& paths,
                          CompileLog& log, CompileOutputs& out) {
  const std::string& name = paths.name;
  const fs::path &dir = paths.dir, &logDir = paths.logDir;
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::to_string(
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                   .count()) +
           " ms";
  };
  std::optional<FusionRules> rules;
  checkCompilerMode(o.compilerMode);
  SectionOptions sections = sectionOptions(o, rules);
  std::optional<PartitionSetup> setup;
  if (o.partition.requested()) setup = preparePartition(o.partition);
  Model m = loadModel(o, log);
  Function& f = *m.module->functions()[0];
  log.line("loaded " + o.model + ": " + std::to_string(f.ops().size()) + " ops (" + elapsed() +
           ")");
  if (o.partition.dataParallel && fs::path(o.model).extension() == ".onnx" &&
      f.numArguments() > 0 && f.argument(0)->type().rank() > 0) {
    int64_t all = f.argument(0)->type().shape[0], n = o.partition.worldSize;
    log.line("data parallel: a batch of " + std::to_string(all / n) + " per replica (-b), " +
             std::to_string(all) + " over the -ws " + std::to_string(n) + " replicas");
  }
  for (const std::string& line : applyCompilerMode(o, sections, f, m.origins))
    log.line(line);
  sections.hypersections = o.hypersections;
  if (!o.hypersectionPattern.empty())
    for (const std::string& line : outlineBlocks(f, m.origins, o.hypersectionPattern))
      log.line(line);
  m.origins.clear(); // ops change from here on
  keepOrInlineCalls(o, f, log);
  // Every function of the module: the model and the bodies it calls.
  auto forEachFunction = [&](const std::function<void(Function&)>& fn) {
    for (const auto& g : m.module->functions())
      fn(*g);
  };

  int step = 0;
  auto dump = [&](const std::string& pass) {
    if (!o.debug) return;
    char num[8];
    std::snprintf(num, sizeof num, "%02d", step);
    out.write(CompileOutputs::Place::Log, "debug/" + std::string(num) + "-" + pass + ".ir",
              printModule(*m.module));
  };
  dump("import");
  // Before the training step is built, so the backward pass uses gelu's own gradient.
  bool raised = false;
  forEachFunction([&](Function& g) { raised |= raiseGelu(g); });
  if (raised) {
    log.line("pass raise-gelu: " + std::to_string(f.ops().size()) + " ops");
    ++step;
    dump("raise-gelu");
  }
  std::map<std::string, Tensor> optState;
  if (!o.inference) {
    auto s0 = std::chrono::steady_clock::now();
    TrainOptions train = o.train;
    train.initialState = !o.estimateOnly;
    TrainStepInfo info = buildTrainStep(f, train);
    optState = std::move(info.optimizerState);
    std::string trained;
    for (const auto& n : info.trained)
      trained += " " + n;
    log.line("training step: loss '" + info.lossName + "', optimizer " + o.train.optimizer + ", " +
             std::to_string(info.trained.size()) + " trained parameters:" + trained);
    log.line("training step built: " + std::to_string(f.ops().size()) + " ops (" +
             std::to_string(
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s0)
                     .count()) +
             " ms)");
    for (const auto& n : info.untrained)
      log.line("not trained: " + n);
    ++step;
    dump("train-step");
  }
  for (const char* passName : {"canonicalize", "cse", "dce"}) {
    ++step;
    auto p0 = std::chrono::steady_clock::now();
    bool changed = false;
    forEachFunction([&](Function& g) { changed |= findPass(passName)->run(g); });
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p0).count();
    log.line("pass " + std::string(passName) + ": " + (changed ? "changed" : "no change") + ", " +
             std::to_string(f.ops().size()) + " ops, " + std::to_string(ms) + " ms");
    DiagEngine diags(o.model);
    if (!verifyModule(*m.module, diags))
      throw InternalError("IR invalid after " + std::string(passName) + ": " +
                          diags.format(diags.diagnostics()[0]));
    if (changed) dump(passName);
  }

  Pef pef;
  pef.shardcVersion = kShardcVersion;
  pef.compileArgs = o.commandLine;
  pef.createdUtc = utcNow("%Y-%m-%dT%H:%M:%SZ");
  pef.mode = o.inference ? "inference" : "training";
  pef.arch = target.name;
  pef.optimizationLevel = "o" + std::to_string(sections.level);
  if (sections.level == 1)
    pef.optimizationRules = rules ? o.optimizationRules : sections.rules ? "nlp" : "default";
  pef.scalingFactors.assign(sections.scaling.byPhase.begin(), sections.scaling.byPhase.end());
  int64_t paramCount = 0, paramBytes = 0;
  // Copying the weights into the PEF is part of writing them (see `compiledMs`).
  pef.weights.reserve(f.numArguments());
  auto c0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    PefTensor t{a->name(), a->type()};
    if (a->argKind() == ArgKind::Input) {
      pef.inputs.push_back(t);
      pef.buffers.push_back({t, BufferKind::Input});
      continue;
    }
    pef.buffers.push_back(
        {t, a->argKind() == ArgKind::Param ? BufferKind::Param : BufferKind::OptState});
    if (!o.estimateOnly)
      pef.weights.emplace_back(a->name(), a->argKind() == ArgKind::Param ? *m.weights.at(a->name())
                                          : m.state.count(a->name())     ? *m.state.at(a->name())
                                                                         : optState.at(a->name()));
    paramCount += a->type().numel();
    paramBytes += a->type().bytes();
  }
  double copyMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count();
  for (const auto& r : f.results()) {
    if (r.tiedArg >= 0) continue; // updated state, not an output
    pef.outputs.push_back({r.name, r.value->type()});
    pef.buffers.push_back({{r.name, r.value->type()}, BufferKind::Output});
  }
  // The last passes on the program the PEF runs, after the search (they change its layout
  // for the kernels, not its cost): rematerialize after any CSE, which would undo it.
  // Then the sections, which order the ops by phase.
  std::vector<Section> programSections;
  std::vector<HyperInstance> instances;
  std::vector<HypersectionBody> calledBodies; // the model's own calls, kept
  auto prepareForPlan = [&](Function& program) {
    using Pass = bool (*)(Function&);
    for (auto [name, pass] :
         {std::pair<const char*, Pass>{"fold-product-transposes", foldProductTransposes},
          std::pair<const char*, Pass>{"rematerialize", rematerialize}}) {
      bool changed = false;
      if (!o.estimateOnly)
        for (const auto& g : program.module()->functions())
          changed |= pass(*g);
      if (!changed) continue;
      log.line(std::string("pass ") + name + ": " + std::to_string(program.ops().size()) + " ops");
      if (&program != &f) continue; // the debug dumps show the unpartitioned program
      ++step;
      dump(name);
    }
    auto s0 = std::chrono::steady_clock::now();
    programSections = formSections(
        program, target, sections, [&](const std::string& s) { log.line(s); }, &instances);
    if (program.module()->functions().size() > 1 && instances.empty())
      calledBodies = sectionCalledBodies(program, target, sections, programSections,
                                         [&](const std::string& s) { log.line(s); });
    log.line("sections at -o" + std::to_string(sections.level) + " for " + target.name + " (" +
             std::to_string(
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s0)
                     .count()) +
             " ms)");
    if (&program == &f) {
      ++step;
      dump("sections");
    }
  };
  std::vector<std::pair<std::string, std::string>> artifacts; // file name, contents
  // The executable plan of the program the PEF runs (not needed for an estimate), then the
  // cost model's estimate of one step, whose activations are the plan's arena, constants and
  // output buffers when there is a plan (the liveness bound of the program otherwise).
  // The estimate prices the program before its hypersections become calls (a body costs
  // what its instances do).
  auto planAndEstimate = [&](Function& program, const Mesh& mesh) {
    PefProgram& prog = pef.programs[0];
    // Label bounds as loadPef derives them: from the program the PEF stores.
    for (size_t i = 0, k = 0; i < program.numArguments(); ++i) {
      const Value* a = program.argument(i);
      if (a->argKind() != ArgKind::Input) continue;
      int64_t bound = programIndexBound(a);
      pef.inputs[k++].indexBound = bound;
      for (PefBuffer& b : pef.buffers)
        if (b.kind == BufferKind::Input && b.tensor.name == a->name()) b.tensor.indexBound = bound;
    }
    prog.sections = std::move(programSections);
    auto model = makeAnalyticCostModel(target);
    auto e0 = std::chrono::steady_clock::now();
    std::vector<int64_t> groups = costGroups(target, program, prog.sections);
    std::map<std::string, std::vector<int64_t>> bodyGroups;
    for (const HypersectionBody& b : calledBodies)
      bodyGroups[b.function] =
          costGroups(target, *program.module()->findFunction(b.function), b.sections);
    CostReport report = model->evaluate(program, mesh, &groups, &bodyGroups);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - e0).count();
    if (!o.estimateOnly) {
      auto k0 = std::chrono::steady_clock::now();
      std::vector<HypersectionBody> bodies =
          outlineHypersections(program, target, instances, prog.sections);
      for (HypersectionBody& b : calledBodies)
        bodies.push_back(std::move(b));
      for (HypersectionBody& b : bodies) {
        const Function& fn = *program.module()->findFunction(b.function);
        ExecPlan plan =
            buildPlan(fn, sectionOfOps(b.sections, static_cast<int64_t>(fn.ops().size())));
        if (o.dumpKernels) dumpKernelsOf(fn, plan, b.sections, out);
        log.line("hypersection @" + b.function + " (" + std::string(phaseName(b.phase)) + ", " +
                 std::to_string(fn.ops().size()) + " ops, " + std::to_string(b.instances) +
                 " instances): " + describePlan(plan, fn));
        prog.bodies.push_back(
            {b.function, b.phase, std::move(plan), std::move(b.sections), b.instances});
      }
      if (!prog.bodies.empty()) {
        log.line("program with hypersections: " + std::to_string(program.ops().size()) + " ops, " +
                 std::to_string(prog.bodies.size()) + " bodies");
        log.line(describeSections(prog.sections));
      }
      prog.plan = buildPlan(
          program, sectionOfOps(prog.sections, static_cast<int64_t>(program.ops().size())));
      if (o.dumpKernels) dumpKernelsOf(program, prog.plan, prog.sections, out);
      log.line("executable plan (" +
               std::to_string(
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - k0)
                       .count()) +
               " ms): " + describePlan(pef.programs[0].plan, program));
    }
    prog.ir = printModule(*program.module());
    if (!o.estimateOnly) {
      const ExecPlan& plan = pef.programs[0].plan;
      int64_t outputs = 0; // the untied results' own buffers
      for (const auto& r : program.results())
        if (r.tiedArg < 0) outputs += r.value->type().bytes();
      report.memory.activations = plan.arenaBytes + plan.constantBytes(program) + outputs;
      // Each body has an arena and constants of its own, beside the program's.
      for (const PefBody& b : prog.bodies)
        report.memory.activations +=
            b.plan.arenaBytes + b.plan.constantBytes(*program.module()->findFunction(b.function));
      // As a dataflow compiler fails a graph that does not fit the chip: a PEF that cannot
      // run on its target is an error, not a file that fails when it allocates.
      if (!report.fits())
        throw Error("the program needs " + formatBytes(static_cast<double>(report.memory.peak())) +
                    " per device (parameters " +
                    formatBytes(static_cast<double>(report.memory.parameters)) +
                    ", optimizer state " +
                    formatBytes(static_cast<double>(report.memory.optimizerState)) + ", inputs " +
                    formatBytes(static_cast<double>(report.memory.inputs)) +
                    ", activations and temporaries " +
                    formatBytes(static_cast<double>(report.memory.activations)) + "); " +
                    target.name + " has " + formatBytes(report.memoryCapacity) +
                    " per device. Partition it over more devices (--data-parallel, "
                    "--tensor-parallel, --auto-partition) or lower the batch; --estimate-only "
                    "prints the estimate without a PEF");
    }
    pef.costText = report.str();
    pef.costJson = costReportJson(report);
    log.line("cost model: evaluated " + std::to_string(program.ops().size()) + " ops in " +
             std::to_string(ms) + " ms");
    log.line(pef.costText);
  };
  if (setup) {
    auto p0 = std::chrono::steady_clock::now();
    Partitioned part = partitionProgram(f, o.partition, *setup, target,
                                        [&](const std::string& s) { log.line(s); });
    Function& local = *part.program.module->functions()[0];
    for (const char* passName : {"localize-constants", "cse", "dce"})
      findPass(passName)->run(local);
    auto bucket = static_cast<int64_t>(o.gradBucketMiB.value_or(25) * (1 << 20));
    if (bucket == 0)
      log.line("gradient reduction: one all-reduce per gradient (--grad-bucket-mib 0)");
    else if (int64_t merged = bucketGradientReductions(local, bucket))
      log.line("gradient reduction: " + std::to_string(merged) +
               " all-reduces merged into buckets of up to " +
               formatBytes(static_cast<double>(bucket)));
    prepareForPlan(local);
    for (const MeshAxis& a : part.plan.mesh().axes())
      pef.mesh.emplace_back(a.name, a.size);
    PefProgram prog;
    for (int64_t d = 0; d < part.plan.mesh().numDevices(); ++d)
      prog.devices.push_back(d);
    prog.entry = local.name();
    for (const TensorSharding& s : part.program.argShardings)
      prog.argShardings.push_back(s.str());
    for (const TensorSharding& s : part.program.resultShardings)
      prog.resultShardings.push_back(s.str());
    pef.programs.push_back(std::move(prog));
    pef.searchJson = std::move(part.searchJson);
    std::map<std::string, int> collectives;
    for (const auto& op : local.ops())
      if (op->def().communicates) ++collectives[op->name()];
    std::string counts;
    for (const auto& [kind, n] : collectives)
      counts += " " + kind + " x" + std::to_string(n);
    log.line("partitioned: per-device program of " + std::to_string(local.ops().size()) +
             " ops; collectives:" + (counts.empty() ? " none" : counts) + " (" +
             std::to_string(
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p0)
                     .count()) +
             " ms)");
    artifacts.emplace_back(name + ".strategy", writeStrategy(f, part.plan));
    artifacts.emplace_back(name + ".sharded.ir", printShardedModule(*m.module, part.plan));
    if (o.debug) artifacts.emplace_back(name + ".origins.txt", printShardingOrigins(f, part.plan));
    planAndEstimate(local, part.plan.mesh());
  } else {
    prepareForPlan(f);
    pef.programs.push_back({{0}, f.name(), "", {}, {}, {}, {}, {}});
    planAndEstimate(f, Mesh());
  }
  log.line("program: " + std::to_string(f.ops().size()) + " ops, " +
           std::to_string(pef.inputs.size()) + " inputs, " + std::to_string(pef.outputs.size()) +
           " outputs, " + std::to_string(paramCount) + " parameters (" +
           std::to_string(paramBytes) + " bytes)");

  if (o.estimateOnly) {
    out.publish(); // --debug's files
    return {"", "", pef.costText};
  }
  CompileResult r{(dir / (name + ".pef")).string(), (logDir / (name + ".log")).string(),
                  pef.costText};
  // Compile time proper leaves out the weights' bytes: making them (text IR), copying them
  // into the PEF and writing them.
  double compiledMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() -
      m.weightsMs - copyMs;
  auto w0 = std::chrono::steady_clock::now();
  int64_t weightBytes = 0;
  for (const auto& [wname, t] : pef.weights)
    weightBytes += t.byteSize();
  int64_t pefBytes = writePef(out.staged(CompileOutputs::Place::Pef, name + ".pef"), pef);
  log.line("compiled in " + std::to_string(compiledMs) + " ms without the weights; PEF of " +
           std::to_string(pefBytes) + " bytes: program part " +
           std::to_string(pefBytes - weightBytes) + ", weight data " + std::to_string(weightBytes) +
           ", written in " +
           std::to_string(copyMs + std::chrono::duration<double, std::milli>(
                                       std::chrono::steady_clock::now() - w0)
                                       .count()) +
           " ms");
  for (const auto& [file, text] : artifacts)
    out.write(CompileOutputs::Place::Pef, file, text);
  log.line("wrote " + r.pefPath + " (" + elapsed() + ")");
  out.write(CompileOutputs::Place::Log, name + ".log", log.text());
  out.publish();
  return r;
}

} // namespace

CompileResult compileModel(const CompileOptions& given) {
  CompileOptions o = given;
  o.hypersections |= !o.hypersectionPattern.empty();
  if (!o.archFile.empty() && o.arch != "native")
    throw Error("--arch-file replaces --arch: give one of them");
  Target target =
      o.archFile.empty() ? loadTarget(o.arch) : parseTarget(readFile(o.archFile), o.archFile);
  for (auto [value, field, flag] :
       {std::tuple{o.computeEfficiency, &target.computeEfficiency, "--cost-compute-efficiency"},
        std::tuple{o.memoryEfficiency, &target.memoryEfficiency, "--cost-memory-efficiency"}}) {
    if (!value) continue;
    if (!(*value > 0 && *value <= 1)) throw Error(std::string(flag) + " must lie in (0, 1]");
    *field = *value;
  }
  if (o.commOverlap) {
    if (!(*o.commOverlap >= 0 && *o.commOverlap <= 1))
      throw Error("--cost-overlap must lie in [0, 1]");
    target.commOverlap = *o.commOverlap;
  }
  if (o.dumpKernels && o.estimateOnly)
    throw Error("--dump-kernels writes the PEF's kernels; --estimate-only plans none");
  if (o.gradBucketMiB) {
    if (!(*o.gradBucketMiB >= 0 && *o.gradBucketMiB <= 1 << 20))
      throw Error("--grad-bucket-mib must lie in [0, 1048576]");
    if (!o.partition.requested())
      throw Error("--grad-bucket-mib applies to partitioned compiles (--data-parallel, "
                  "--tensor-parallel, --auto-partition, --strategy)");
  }
  std::string name = o.pefName.empty()
                         ? "shardc-" + utcNow("%Y%m%d-%H%M%S") + "-" + std::to_string(::getpid())
                         : o.pefName;
  if (!validPefName(name))
    throw Error("--pef-name '" + name +
                "' must be 1 to 200 characters, only letters, digits, '_', '-' and '.'");

  fs::path dir = fs::path(o.outputFolder) / name;
  fs::path logDir = o.logDir.empty() ? dir : fs::path(o.logDir);
  if (!o.estimateOnly) {
    checkWritable(dir.string(), "--output-folder", true);
    checkWritable(logDir.string(), "--log-dir", true);
  }
  CompileLog log(o.verbose);
  CompileOutputs out(o.outputFolder, name, dir, logDir, o.keepTemporaryFiles);
  try {
    return compileWith(o, target, {name, dir, logDir}, log, out);
  } catch (const Error& e) {
    std::string kept = out.keepAfterFailure(log.text() + "error: " + e.what() + "\n");
    if (kept.empty()) throw;
    throw Error(std::string(e.what()) +
                " (--keep-temporary-files: the log and the files written so far are in " + kept +
                ")");
  } catch (const std::exception& e) {
    out.keepAfterFailure(log.text() + "error: " + e.what() + "\n");
    throw;
  }
}

} // namespace shardc
