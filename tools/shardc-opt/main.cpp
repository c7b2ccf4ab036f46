// shardc-opt: reads text IR, runs the passes named on the command line, prints the result
// (with its mesh and sharding annotations), or executes a function with the reference
// interpreter (--run).
#include "shardc/Version.h"
#include "shardc/collectives/ShardTensor.h"
#include "shardc/collectives/ThreadCollectives.h"
#include "shardc/cost/Target.h"
#include "shardc/dataflow/Sections.h"
#include "shardc/exec/ExecPlan.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/io/Npy.h"
#include "shardc/io/TensorFormat.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/ExpectedDiagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"
#include "shardc/ir/Printer.h"
#include "shardc/ir/Verifier.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/sharding/Annotations.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/sharding/SpmdLowering.h"
#include "shardc/sharding/Strategy.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"
#include "shardc/support/HostMemory.h"
#include "shardc/train/Recompute.h"
#include "shardc/train/TrainStep.h"
#include "shardc/transforms/Passes.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

using namespace shardc;

namespace {

struct Options {
  std::string input;
  std::string passes;
  std::string output;
  bool verifyDiagnostics = false;
  bool run = false;
  std::string function;
  std::vector<std::string> inputs;
  std::string inputDir;
  uint64_t seed = 0;
  int64_t intBound = 2;
  std::string outputDir;
  int64_t printLimit = 64;
  bool listOps = false;
  bool listPasses = false;
  bool printShardingRules = false;
  std::string strategy;
  bool printStrategy = false;
  bool propagate = false, printOrigins = false, spmd = false;
  // The compile stages shardc-opt runs besides the IR passes: the training step's settings,
  // the gradient buckets' size, and the sections to print.
  TrainOptions train;
  int64_t bucketBytes = int64_t(25) << 20;
  std::string recompute = "full";
  int optLevel = -1; // --print-sections LEVEL
  std::string arch = "cpu";
};

// A compile stage run on text IR, as shardc compile runs it on the model's function (the
// first): the training step, or the gradient buckets of a per-device program.
struct StagePass {
  const char* name;
  const char* summary;
  void (*run)(Function& f, const Options& o);
};
const StagePass kStagePasses[] = {
    {"train-step", "the training step: loss, autodiff, optimizer (--optimizer, --loss, --lr)",
     [](Function& f, const Options& o) { buildTrainStep(f, o.train); }},
    {"grad-buckets", "merge the gradient all-reduces into buckets (--bucket-bytes)",
     [](Function& f, const Options& o) { bucketGradientReductions(f, o.bucketBytes); }},
    {"recompute", "the backward pass recomputes activations (--recompute)",
     [](Function& f, const Options& o) { recomputeActivations(f, *parseRecompute(o.recompute)); }},
};

// --print-sections: the phases and sections of the first function at a level, on a target.
void printSections(Function& f, const Options& o) {
  SectionOptions so;
  so.level = o.optLevel;
  if (so.level != 0 && so.level != 1 && so.level != 3)
    throw Error("--print-sections takes 0, 1 or 3, got " + std::to_string(so.level));
  Target target = loadTarget(o.arch);
  std::vector<Section> sections = formSections(f, target, so, [](const std::string&) {});
  std::vector<const Op*> ops; // in the order the sections number them
  for (const auto& op : f.ops())
    ops.push_back(op.get());
  std::cout << describeSections(sections) << "\n";
  for (size_t k = 0; k < sections.size(); ++k) {
    const Section& s = sections[k];
    std::cout << "#" << k << " " << phaseName(s.phase) << " ops " << s.firstOp << ".."
              << s.firstOp + s.numOps - 1;
    if (!s.rule.empty()) std::cout << " rule " << s.rule;
    std::cout << ":";
    for (int64_t i = s.firstOp; i < s.firstOp + s.numOps; ++i)
      std::cout << " " << ops[static_cast<size_t>(i)]->name();
    std::cout << "\n";
  }
}

// One line per op: its result names and the sharding rule the registry gives it.
void printShardingRules(const Module& m) {
  for (const auto& f : m.functions()) {
    std::cout << "@" << f->name() << ":\n";
    for (const auto& op : f->ops()) {
      std::vector<TensorType> operands, results;
      for (Value* v : op->operands())
        operands.push_back(v->type());
      for (size_t i = 0; i < op->numResults(); ++i)
        results.push_back(op->result(i)->type());
      std::cout << "  " << op->name() << ": "
                << op->def().shardingRule(OpSig{operands, op->attrs()}, results).str() << "\n";
    }
  }
}

void listOps() {
  for (const auto& d : OpRegistry::get().all()) {
    std::string arity = d->maxOperands < 0 ? std::to_string(d->minOperands) + "+"
                        : d->minOperands == d->maxOperands
                            ? std::to_string(d->minOperands)
                            : std::to_string(d->minOperands) + "-" + std::to_string(d->maxOperands);
    std::cout << d->name << " (" << arity << " operands";
    for (const auto& a : d->attrs) {
      std::cout << ", " << a.name;
      if (a.defaultValue) std::cout << " = " << printAttr(*a.defaultValue);
    }
    std::cout << "): " << d->summary;
    std::string_view family = nativeKernelFamily(*d);
    std::cout << " [native: " << (family.empty() ? "none, reference kernel" : family) << "]\n";
  }
}

// Binds NAME=FILE.npy inputs and random values to the function's arguments.
std::vector<Tensor> bindInputs(const Function& f, const Options& o) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : o.inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("--input '" + spec + "' must be NAME=FILE.npy");
    std::string name = spec.substr(0, eq);
    if (!f.findArgument(name))
      throw Error("--input names '" + name + "', but @" + f.name() + " has no such argument");
    if (!files.emplace(name, spec.substr(eq + 1)).second)
      throw Error("--input '" + name + "' is given twice");
  }
  std::vector<Tensor> args;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    auto it = files.find(a->name());
    if (it == files.end() && !o.inputDir.empty()) {
      std::string path = o.inputDir + "/" + a->name() + ".npy";
      if (!std::filesystem::exists(path))
        throw Error("argument '" + a->name() + "' has no --input and no file " + path);
      it = files.emplace(a->name(), path).first;
    }
    if (it == files.end()) {
      args.push_back(randomTensor(a->type(), o.seed + i, o.intBound));
      continue;
    }
    Tensor t = readNpy(it->second);
    if (t.type() != a->type())
      throw Error(it->second + ": argument '" + a->name() + "' expects " + a->type().str() +
                  ", the file holds " + t.type().str());
    args.push_back(std::move(t));
  }
  return args;
}

// The function named by --function, else the only one, else @main; `purpose` ends the error
// for a module without functions ("to run").
const Function* selectFunction(const Module& m, const Options& o, const std::string& purpose) {
  if (!o.function.empty()) {
    const Function* f = m.findFunction(o.function);
    if (!f) throw Error("no function @" + o.function + " in " + o.input);
    return f;
  }
  if (m.functions().empty()) throw Error(o.input + " has no functions " + purpose);
  if (m.functions().size() == 1) return m.functions()[0].get();
  const Function* f = m.findFunction("main");
  if (!f)
    throw Error(o.input + " has several functions and none is @main; choose one with --function");
  return f;
}

void emit(const Options& o, const std::string& text) {
  if (o.output.empty())
    std::cout << text;
  else
    writeFileAtomic(o.output, text);
}

// The per-device program, after a header saying how each argument and result is laid out.
std::string printSpmd(const SpmdProgram& p) {
  const Function& f = p.function();
  std::string s = "// per-device program for mesh " + p.mesh.str() + "\n";
  for (size_t i = 0; i < f.numArguments(); ++i)
    s += "// argument " + printName(f.argument(i)->name()) + ": " + p.argShardings[i].str() + "\n";
  for (size_t i = 0; i < f.results().size(); ++i)
    s += "// result " + printName(f.results()[i].name) + ": " + p.resultShardings[i].str() + "\n";
  return s + printModule(*p.module);
}

// Runs the function with the reference interpreter, or its per-device program `spmd` on
// in-process devices (inputs cut into pieces, results put back together).
int runFunction(const Module& m, const Options& o, const SpmdProgram* spmd = nullptr) {
  const Function* f = selectFunction(m, o, "to run");
  // Checked before running, so that a bad name leaves no partial output behind.
  if (!o.outputDir.empty())
    for (const auto& r : f->results())
      if (r.name.find('/') != std::string::npos || r.name == "." || r.name == "..")
        throw Error("result name '" + r.name + "' cannot be used as a file name");
  std::vector<Tensor> results;
  keepFreedMemory();
  if (!spmd) {
    results = interpret(*f, bindInputs(*f, o));
  } else {
    std::vector<Tensor> whole = bindInputs(*f, o);
    std::vector<std::vector<Tensor>> perDevice;
    for (int64_t d = 0; d < spmd->mesh.numDevices(); ++d) {
      perDevice.emplace_back();
      for (size_t i = 0; i < whole.size(); ++i)
        perDevice.back().push_back(shardOf(whole[i], spmd->argShardings[i], spmd->mesh, d));
    }
    auto out = runOnDevices(spmd->function(), spmd->mesh, perDevice);
    for (size_t r = 0; r < f->results().size(); ++r) {
      std::vector<Tensor> pieces;
      for (auto& dev : out)
        pieces.push_back(std::move(dev[r]));
      results.push_back(assemble(pieces, spmd->resultShardings[r], spmd->mesh));
    }
  }
  if (!o.outputDir.empty()) std::filesystem::create_directories(o.outputDir);
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& name = f->results()[i].name;
    std::cout << name << ": " << formatTensor(results[i], o.printLimit) << "\n";
    if (!o.outputDir.empty()) writeNpy(o.outputDir + "/" + name + ".npy", results[i]);
  }
  return 0;
}

int process(const Options& o) {
  std::string text = o.input == "-" ? std::string(std::istreambuf_iterator<char>(std::cin), {})
                                    : readFile(o.input);
  DiagEngine diags(o.input == "-" ? "<stdin>" : o.input);
  ParsedAnnotations annotations;
  std::unique_ptr<Module> m = parseModule(text, diags, annotations);
  if (m) verifyModule(*m, diags);
  ShardingPlan plan;
  if (m && !diags.hasErrors()) plan = planFromAnnotations(annotations, diags);
  if (o.verifyDiagnostics) {
    auto problems = checkExpectedDiagnostics(text, diags);
    for (const auto& p : problems)
      std::cerr << p << "\n";
    return problems.empty() ? 0 : 1;
  }
  if (diags.hasErrors()) {
    diags.print(std::cerr);
    return 1;
  }
  // A pass of the registry, "verify" (null), or a compile stage.
  std::vector<std::pair<const PassInfo*, const StagePass*>> pipeline;
  std::string list = o.passes;
  for (size_t start = 0; !list.empty() && start <= list.size();) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(start, end - start);
    auto stage = std::find_if(std::begin(kStagePasses), std::end(kStagePasses),
                              [&](const StagePass& s) { return name == s.name; });
    if (name == "verify") {
      pipeline.emplace_back(nullptr, nullptr);
    } else if (const PassInfo* p = findPass(name)) {
      pipeline.emplace_back(p, nullptr);
    } else if (stage != std::end(kStagePasses)) {
      pipeline.emplace_back(nullptr, stage);
    } else {
      std::string known = "verify";
      for (const auto& p : allPasses())
        known += ", " + p.name;
      for (const StagePass& s : kStagePasses)
        known += ", " + std::string(s.name);
      throw Error("unknown pass '" + name + "' (known: " + known + ")");
    }
    start = end + 1;
  }
  // Passes erase and create ops, which would leave the plan pointing at dead values.
  bool opResultsSharded =
      std::any_of(annotations.shardings.begin(), annotations.shardings.end(),
                  [](const auto& a) { return a.value && !a.value->isArgument(); });
  if (opResultsSharded && std::any_of(pipeline.begin(), pipeline.end(),
                                      [](const auto& p) { return p.first || p.second; }))
    throw Error("passes do not keep the sharding annotations of op results yet; run them on IR "
                "without those annotations");
  for (const auto& [pass, stage] : pipeline) {
    if (stage) stage->run(*m->functions()[0], o);
    for (const auto& f : m->functions()) {
      if (pass) pass->run(*f);
      if (!verifyFunction(*f, diags)) {
        diags.print(std::cerr);
        throw InternalError("IR is invalid after pass '" +
                            (pass    ? pass->name
                             : stage ? stage->name
                                     : "verify") +
                            "'");
      }
    }
  }
  if (o.optLevel >= 0) {
    printSections(*m->functions()[0], o);
    return 0;
  }
  if (!o.strategy.empty())
    applyStrategy(parseStrategy(readFile(o.strategy), o.strategy),
                  *selectFunction(*m, o, "to apply --strategy to"), plan, o.strategy);
  if (o.propagate || o.printOrigins || o.spmd) {
    const Function* f = selectFunction(*m, o, "to partition");
    if (plan.mesh().axes().empty())
      throw Error(o.input + ": partitioning needs a mesh declaration");
    propagateShardings(*f, plan);
    if (o.printOrigins) {
      std::cout << printShardingOrigins(*f, plan);
      return 0;
    }
    if (o.spmd) {
      SpmdProgram spmd = lowerToSpmd(*f, plan);
      if (o.run) return runFunction(*m, o, &spmd);
      emit(o, printSpmd(spmd));
      return 0;
    }
  }
  if (o.run) return runFunction(*m, o);
  if (o.printShardingRules) {
    printShardingRules(*m);
    return 0;
  }
  emit(o, o.printStrategy ? writeStrategy(*selectFunction(*m, o, "to print a strategy for"), plan)
                          : printShardedModule(*m, plan));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"shardc-opt: run IR passes and the reference interpreter on text IR"};
  app.set_version_flag("--version", std::string("shardc-opt ") + kShardcVersion);
  Options o;
  app.add_option("input", o.input, "text IR file, or - for stdin");
  app.add_option(
      "-p,--passes", o.passes,
      "comma-separated passes to run in order (--list-passes): IR passes, verify, and the "
      "compile stages train-step, grad-buckets and recompute");
  app.add_option("--optimizer", o.train.optimizer, "train-step: sgd, adam or adamw (default sgd)");
  app.add_option("--loss", o.train.loss,
                 "train-step: cross-entropy or mse on result 0 (default: the scalar result)");
  app.add_option("--lr", o.train.learningRate, "train-step: learning rate (default 0.01)");
  app.add_option("--micro-batches", o.train.microBatches,
                 "train-step: gradient accumulation over N micro-batches (default 1)")
      ->check(CLI::PositiveNumber);
  app.add_option("--recompute", o.recompute, "recompute: none, selective or full (default full)")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  app.add_option("--bucket-bytes", o.bucketBytes, "grad-buckets: bytes per bucket (default 25 MiB)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--print-sections", o.optLevel,
                 "after the passes, print the first function's phases and sections at -o0, -o1 "
                 "or -o3 (LEVEL: 0, 1 or 3) instead of the IR");
  app.add_option("--arch", o.arch, "--print-sections: the target (default cpu)");
  app.add_option("-o,--output", o.output, "write the resulting IR here instead of stdout");
  app.add_flag("--verify-diagnostics", o.verifyDiagnostics,
               "check errors against the file's // expected-error {{...}} comments");
  app.add_flag("--run", o.run, "execute the function with the reference interpreter");
  app.add_option("--function", o.function,
                 "function to run or to apply --strategy to (default: the only one, or @main)");
  app.add_option(
      "--input", o.inputs,
      "NAME=FILE.npy: value of an argument (others come from --input-dir, else are random)");
  app.add_option("--input-dir", o.inputDir,
                 "read each argument not given by --input from DIR/<argument-name>.npy");
  app.add_option("--seed", o.seed, "seed for random arguments (default 0)");
  app.add_option("--int-bound", o.intBound,
                 "random integer arguments are drawn from [0, N) (default 2)")
      ->check(CLI::PositiveNumber);
  app.add_option("--output-dir", o.outputDir, "write each result as DIR/<result-name>.npy");
  app.add_option("--print-limit", o.printLimit,
                 "print whole tensors up to N elements (default 64)");
  app.add_flag("--list-ops", o.listOps, "list the registered ops and their attributes");
  app.add_flag("--list-passes", o.listPasses, "list the available passes");
  app.add_flag("--print-sharding-rules", o.printShardingRules,
               "print each op's factor-based sharding rule instead of the IR");
  app.add_option("--strategy", o.strategy,
                 "strategy file: shardings of the function's arguments (and the mesh, unless "
                 "the IR declares it)");
  app.add_flag("--propagate-sharding", o.propagate,
               "infer a sharding for every value from the annotated ones and print the IR");
  app.add_flag("--print-sharding-origins", o.printOrigins,
               "after propagation, print each value's sharding and where it came from");
  app.add_flag("--spmd", o.spmd,
               "after propagation, print the per-device program; with --run, run it on "
               "in-process devices and print the whole results");
  app.add_flag("--print-strategy", o.printStrategy,
               "print the mesh and every argument's sharding as a strategy file instead of the IR");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (o.listOps) {
    listOps();
    return 0;
  }
  if (o.listPasses) {
    std::cout << "verify: check the IR\n";
    for (const auto& p : allPasses())
      std::cout << p.name << ": " << p.summary << "\n";
    for (const StagePass& s : kStagePasses)
      std::cout << s.name << ": " << s.summary << "\n";
    return 0;
  }
  if (o.input.empty()) {
    std::cerr << "shardc-opt: error: no input file (see --help)\n";
    return 1;
  }
  // Exit status 1: a bad input; 2: an InternalError (a shardc bug), as in shardc itself.
  try {
    return process(o);
  } catch (const std::exception& e) {
    Failure f = failureOf(e);
    std::cerr << "shardc-opt: error: " << f.message << "\n";
    return f.status;
  }
}
