// The last stages of `shardc compile`: the program the PEF runs cut into sections, its step
// estimated, its executable plans made and checked against the target's memory, and the
// files written.
#include "CompileState.h"
#include "KernelDump.h"

#include "shardc/exec/ExecPlan.h"
#include "shardc/ir/Builder.h"
#include "shardc/ir/Printer.h"
#include "shardc/support/Error.h"
#include "shardc/support/Stopwatch.h"

#include <algorithm>

namespace shardc {
namespace {

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

// The PEF's entry for the program: its devices, entry function and shardings; label bounds as
// loadPef derives them, from the program the PEF stores.
PefProgram& addPefProgram(CompileState& s) {
  Function& program = s.program();
  PefProgram prog;
  prog.entry = program.name();
  prog.devices.push_back(0);
  if (s.partitioned) {
    for (int64_t d = 1; d < s.mesh.numDevices(); ++d)
      prog.devices.push_back(d);
    for (const TensorSharding& t : s.partitioned->program.argShardings)
      prog.argShardings.push_back(t.str());
    for (const TensorSharding& t : s.partitioned->program.resultShardings)
      prog.resultShardings.push_back(t.str());
  }
  for (size_t i = 0, k = 0; i < program.numArguments(); ++i) {
    const Value* a = program.argument(i);
    if (a->argKind() != ArgKind::Input) continue;
    int64_t bound = programIndexBound(a);
    s.pef.inputs[k++].indexBound = bound;
    for (PefBuffer& b : s.pef.buffers)
      if (b.kind == BufferKind::Input && b.tensor.name == a->name()) b.tensor.indexBound = bound;
  }
  s.pef.programs.push_back(std::move(prog));
  return s.pef.programs.back();
}

} // namespace

void formProgramSections(CompileState& s) {
  Function& program = s.program();
  auto log = [&](const std::string& line) { s.log.line(line); };
  s.programSections = formSections(program, s.target, s.sections, log, &s.instances);
  if (program.module()->functions().size() > 1 && s.instances.empty())
    s.calledBodies = sectionCalledBodies(program, s.target, s.sections, s.programSections, log);
  s.log.line("sections at -o" + std::to_string(s.sections.level) + " for " + s.target.name);
}

CostReport priceAsCompiled(const CompileState& s, Function& f, const Mesh& mesh) {
  std::vector<Section> sections = formSections(f, s.target, s.sections, [](const std::string&) {});
  std::vector<int64_t> groups = costGroups(s.target, f, sections);
  return makeAnalyticCostModel(s.target)->evaluate(f, mesh, &groups);
}

CostReport priceProgramCopy(const CompileState& s, const std::function<void(Function&)>& change) {
  std::unique_ptr<Module> copy = cloneModule(s.programModule());
  Function& f = *copy->functions()[0];
  if (change) change(f);
  return priceAsCompiled(s, f, s.mesh);
}

// The cost model's estimate of one step, priced on the program before its hypersections become
// calls (a body costs what its instances do).
void estimateStep(CompileState& s) {
  Function& program = s.program();
  PefProgram& prog = addPefProgram(s);
  prog.sections = std::move(s.programSections);
  auto model = makeAnalyticCostModel(s.target);
  std::vector<int64_t> groups = costGroups(s.target, program, prog.sections);
  std::map<std::string, std::vector<int64_t>> bodyGroups;
  for (const HypersectionBody& b : s.calledBodies)
    bodyGroups[b.function] =
        costGroups(s.target, *program.module()->findFunction(b.function), b.sections);
  s.report = model->evaluate(program, s.mesh, &groups, &bodyGroups);
  s.log.line("cost model: evaluated " + std::to_string(program.ops().size()) + " ops");
}

// The executable plans: the program's, and each hypersection body's.
void planKernels(CompileState& s) {
  Function& program = s.program();
  PefProgram& prog = s.pef.programs[0];
  std::vector<HypersectionBody> bodies =
      outlineHypersections(program, s.target, s.instances, prog.sections);
  for (HypersectionBody& b : s.calledBodies)
    bodies.push_back(std::move(b));
  for (HypersectionBody& b : bodies) {
    const Function& fn = *program.module()->findFunction(b.function);
    ExecPlan plan = buildPlan(fn, sectionOfOps(b.sections, static_cast<int64_t>(fn.ops().size())));
    if (s.o.dumpKernels) dumpKernelsOf(fn, plan, b.sections, s.out);
    s.log.line("hypersection @" + b.function + " (" + std::string(phaseName(b.phase)) + ", " +
               std::to_string(fn.ops().size()) + " ops, " + std::to_string(b.instances) +
               " instances): " + describePlan(plan, fn));
    prog.bodies.push_back(
        {b.function, b.phase, std::move(plan), std::move(b.sections), b.instances});
  }
  if (!prog.bodies.empty()) {
    s.log.line("program with hypersections: " + std::to_string(program.ops().size()) + " ops, " +
               std::to_string(prog.bodies.size()) + " bodies");
    s.log.line(describeSections(prog.sections));
  }
  prog.plan =
      buildPlan(program, sectionOfOps(prog.sections, static_cast<int64_t>(program.ops().size())));
  if (s.o.dumpKernels) dumpKernelsOf(program, prog.plan, prog.sections, s.out);
  s.log.line("executable plan: " + describePlan(prog.plan, program));
}

// The estimate's activations are the plans' arenas, constants and output buffers when there
// are plans (the liveness bound of the program otherwise). As a dataflow compiler fails a graph
// that does not fit the chip, a PEF that cannot run on its target is an error, not a file that
// fails when it allocates.
void checkMemory(CompileState& s) {
  Function& program = s.program();
  PefProgram& prog = s.pef.programs[0];
  prog.ir = printModule(*program.module());
  CostReport& report = s.report;
  if (!s.o.estimateOnly) {
    int64_t outputs = 0; // the untied results' own buffers
    for (const auto& r : program.results())
      if (r.tiedArg < 0) outputs += r.value->type().bytes();
    report.memory.activations = prog.plan.arenaBytes + prog.plan.constantBytes(program) + outputs;
    for (const PefBody& b : prog.bodies) // each body has an arena and constants of its own
      report.memory.activations +=
          b.plan.arenaBytes + b.plan.constantBytes(*program.module()->findFunction(b.function));
    auto bytes = [](int64_t n) { return formatBytes(static_cast<double>(n)); };
    if (!report.fits() && !s.trial)
      throw Error("the program needs " + bytes(report.memory.peak()) + " per device (parameters " +
                  bytes(report.memory.parameters) + ", optimizer state " +
                  bytes(report.memory.optimizerState) + ", inputs " + bytes(report.memory.inputs) +
                  ", activations and temporaries " + bytes(report.memory.activations) + "); " +
                  s.target.name + " has " + formatBytes(report.memoryCapacity) +
                  " per device. Partition it over more devices (--data-parallel, "
                  "--tensor-parallel, --auto-partition) or lower the batch; --estimate-only "
                  "prints the estimate without a PEF");
  }
  s.pef.costText = report.str();
  s.pef.costJson = costReportJson(report);
  s.log.line(s.pef.costText);
  s.result.estimate = s.pef.costText;
}

// The PEF, then what goes beside it; the log is written last, by the runner.
void writePefFiles(CompileState& s) {
  s.result.pefPath = (s.dir / (s.name + ".pef")).string();
  s.result.logPath = (s.logDir / (s.name + ".log")).string();
  // Compile time proper leaves out the weights' bytes: making them (text IR), copying them
  // into the PEF and writing them.
  double compiledMs = s.elapsedMs() - s.weightsMs - s.copyMs;
  double writeSeconds = 0;
  Stopwatch watch(writeSeconds);
  int64_t weightBytes = 0;
  for (const auto& [name, t] : s.pef.weights)
    weightBytes += t.byteSize();
  int64_t pefBytes = writePef(s.out.staged(CompileOutputs::Place::Pef, s.name + ".pef"), s.pef);
  watch.stop();
  s.log.line("compiled in " + std::to_string(compiledMs) + " ms without the weights; PEF of " +
             std::to_string(pefBytes) + " bytes: program part " +
             std::to_string(pefBytes - weightBytes) + ", weight data " +
             std::to_string(weightBytes) + ", written in " +
             std::to_string(s.copyMs + writeSeconds * 1e3) + " ms");
  for (const auto& [file, text] : s.artifacts)
    s.out.write(CompileOutputs::Place::Pef, file, text);
}

} // namespace shardc
