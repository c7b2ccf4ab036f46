// `shardc compile` as a list of stages (kCompileStages). The runner gives every stage the same
// treatment: timed and logged (--verbose prints each with its time), the IR verified after it,
// and dumped when it changed the IR (--debug: LOG_DIR/debug/NN-STAGE.ir).
#include "CompileState.h"
#include "CompilerMode.h"

#include "shardc/exec/ExecPlan.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/Printer.h"
#include "shardc/ir/Verifier.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"
#include "shardc/transforms/Passes.h"

#include <cstring>
#include <ctime>
#include <tuple>
#include <unistd.h>

namespace shardc {
namespace {

namespace fs = std::filesystem;

bool training(const CompileState& s) {
  return !s.o.inference;
}
bool heuristics(const CompileState& s) {
  return s.o.compilerMode != "default" || !s.o.hypersectionPattern.empty();
}
bool partitioning(const CompileState& s) {
  return s.setup.has_value();
}
bool planning(const CompileState& s) {
  return !s.o.estimateOnly;
}
bool writing(const CompileState& s) {
  return planning(s) && !s.trial;
}
bool bf16Kernels(const CompileState& s) {
  return planning(s) && bf16(s);
}

} // namespace

const std::vector<CompileStage> kCompileStages = {
    {"import", importModel},
    {"model-heuristics", applyModelHeuristics, heuristics},
    {"calls", keepOrInlineCalls},
    // Before the training step is built, so the backward pass uses gelu's own gradient.
    {"raise-gelu"},
    {"precision", lowerPrecision, bf16},
    {"train-step", buildTraining, training},
    {"canonicalize"},
    {"cse"},
    {"dce"},
    {"signature", describeSignature},
    {"partition", partition, partitioning},
    {"grad-buckets", bucketGradients, partitioning},
    // After the last CSE, which would merge the recomputed copies back.
    {"recompute", recompute, training},
    {"micro-batches", chooseMicroBatches, choosesMicroBatches},
    // The last passes on the program the PEF runs, after the search (they change its layout
    // for the kernels, not its cost): rematerialize after any CSE, which would undo it.
    {"fold-product-transposes", nullptr, planning},
    {"rematerialize", nullptr, planning},
    // The CPU runtime's kernels compute in f32 (and the estimate prices what it runs).
    {"emulate-bf16", emulatePrecision, bf16Kernels},
    {"sections", formProgramSections},
    {"estimate", estimateStep},
    {"plan", planKernels, planning},
    {"memory", checkMemory},
    {"write", writePefFiles, writing},
};

namespace {

// At most 200 characters: NAME.sharded.ir and the other files it names must fit a file
// name (255 bytes).
bool validPefName(const std::string& n) {
  if (n.empty() || n.size() > 200 || n == "." || n == "..") return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

std::string pefName(const CompileOptions& o) {
  if (!o.pefName.empty()) return o.pefName;
  std::time_t t = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y%m%d-%H%M%S", std::gmtime(&t));
  return "shardc-" + std::string(date) + "-" + std::to_string(::getpid());
}

// The target of --arch or --arch-file, with the support options' overrides; the support
// options checked.
Target compileTarget(const CompileOptions& o) {
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
  return target;
}

void checkScalingFactors(const std::vector<double>& f, ScalingFactors& scaling) {
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
  scaling.byPhase[static_cast<size_t>(Phase::Forward)] = f[0];
  scaling.byPhase[static_cast<size_t>(Phase::Backward)] = f[1];
  scaling.byPhase[static_cast<size_t>(Phase::Optimizer)] = f[2];
  if (f.size() == 4) scaling.byPhase[static_cast<size_t>(Phase::GradReduce)] = f[3];
}

// Verified after every stage: a pass that breaks the IR is a compiler bug, caught where it
// happens rather than by a later stage or a wrong result.
void verifyAfter(const CompileState& s, const char* stage) {
  DiagEngine diags(s.o.model);
  if (!verifyModule(s.programModule(), diags))
    throw InternalError("IR invalid after stage " + std::string(stage) + ": " +
                        diags.format(diags.diagnostics()[0]));
}

} // namespace

// The controls read before the model loads, so that bad ones fail fast: sections, compiler
// mode, partitioning.
void checkControls(CompileState& s) {
  const CompileOptions& o = s.o;
  checkCompilerMode(o.compilerMode);
  SectionOptions& so = s.sections;
  so.level = o.optLevel;
  so.hypersections = o.hypersections;
  so.kernels = planKernelOps;
  if (so.level != 0 && so.level != 1 && so.level != 3)
    throw Error("optimization level " + std::to_string(so.level) + " is not one of -o0, -o1, -o3");
  if (!o.optimizationRules.empty()) {
    if (so.level != 1)
      throw Error("--optimization-rules applies to -o1 (this compile is -o" +
                  std::to_string(so.level) + ")");
    s.rules = FusionRules::parse(readFile(o.optimizationRules), o.optimizationRules);
    so.rules = &*s.rules;
  }
  if (!o.scalingFactors.empty()) checkScalingFactors(o.scalingFactors, so.scaling);
  if (o.partition.requested()) s.setup = preparePartition(o.partition);
}

void runStages(CompileState& s) {
  std::string dumped; // --debug: the IR last dumped
  int dumps = 0;
  for (const CompileStage& stage : kCompileStages) {
    if (stage.applies && !stage.applies(s)) continue;
    double begin = s.elapsedMs();
    if (stage.run) {
      stage.run(s);
    } else {
      const PassInfo* pass = findPass(stage.name);
      SHARDC_CHECK(pass, std::string("no IR pass named ") + stage.name);
      for (const auto& g : s.programModule().functions())
        pass->run(*g);
    }
    s.log.line("stage " + std::string(stage.name) + ": " + std::to_string(s.elapsedMs() - begin) +
               " ms, " + std::to_string(s.program().ops().size()) + " ops");
    if (s.restartWith) return;
    verifyAfter(s, stage.name);
    if (!s.o.debug) continue;
    std::string text = printModule(s.programModule());
    if (text == dumped) continue;
    std::string num = std::to_string(dumps++);
    if (num.size() < 2) num = "0" + num;
    s.out.write(CompileOutputs::Place::Log, "debug/" + num + "-" + stage.name + ".ir", text);
    dumped = std::move(text);
  }
}

CompileResult compileModel(const CompileOptions& given) {
  CompileOptions o = given;
  o.hypersections |= !o.hypersectionPattern.empty();
  Target target = compileTarget(o);
  std::string name = pefName(o);
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
  auto state = std::make_unique<CompileState>(o, target, log, out);
  try {
    for (bool split = false;; split = true) {
      CompileState& s = *state;
      s.name = name;
      s.dir = dir;
      s.logDir = logDir;
      s.splitBatch = split;
      checkControls(s);
      runStages(s);
      if (!s.restartWith) break;
      o.train.microBatches = s.restartWith;
      log.line("compiling again with the batch split into " + std::to_string(s.restartWith) +
               " micro-batches");
      auto started = s.started; // the compile's time includes the first pass
      state = std::make_unique<CompileState>(o, target, log, out);
      state->started = started;
    }
    CompileState& s = *state;
    if (!o.estimateOnly) {
      log.line("wrote " + s.result.pefPath + " (" + std::to_string(s.elapsedMs()) + " ms)");
      out.write(CompileOutputs::Place::Log, name + ".log", log.text());
    }
    out.publish(); // with --estimate-only, --debug's files
    return s.result;
  } catch (const Error& e) {
    std::string kept = out.keepAfterFailure(log.text() + "error: " + e.what() + "\n");
    if (kept.empty()) throw;
    std::string where =
        " (--keep-temporary-files: the log and the files written so far are in " + kept + ")";
    // A bug stays one (exit status 2), its message without a second "internal error: ".
    if (dynamic_cast<const InternalError*>(&e))
      throw InternalError(std::string(e.what()).substr(std::strlen("internal error: ")) + where);
    throw Error(e.what() + where);
  } catch (const std::exception& e) {
    out.keepAfterFailure(log.text() + "error: " + e.what() + "\n");
    throw;
  }
}

} // namespace shardc
