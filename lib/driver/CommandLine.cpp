// The shardc command line: flags parsed into the driver's options, errors into messages and
// exit statuses. A library function, so that Python app scripts take exactly these flags.
#include "shardc/driver/CommandLine.h"
#include "shardc/Version.h"
#include "shardc/collectives/MpiCollectives.h"
#include "shardc/collectives/ThreadCollectives.h"
#include "shardc/cost/Calibrate.h"
#include "shardc/driver/Driver.h"
#include "shardc/support/Error.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <string_view>

namespace shardc {
namespace {

// The section controls: -o0, -o1, -o3 (one of them), the rules for -o1, hypersections, the
// scaling factors.
struct SectionFlags {
  bool o0 = false, o1 = false, o3 = false;

  void add(CLI::App* c, CompileOptions& co) {
    c->add_flag("--o0", o0, "optimization level 0: each op its own section");
    c->add_flag("--o1", o1, "optimization level 1: sections from fusion rules, the rest per op");
    c->add_flag("--o3", o3,
                "optimization level 3 (default): sections as large as the target allows");
    c->add_option("--optimization-rules", co.optimizationRules,
                  "fusion rules for -o1 (YAML; default: shardc's own, rules/default.yaml)");
    c->add_flag("--enable-hypersection", co.hypersections,
                "compile repeated subgraphs (layers, their gradients and updates) once: each "
                "becomes a body the program calls per instance (a text IR `scan` over stacked "
                "weights: one body, whatever the depth); without it calls and scans are "
                "inlined");
    c->add_option("--compiler-mode", co.compilerMode,
                  "NAME: model-type heuristics: default (none) or nlp (transformers: finds the "
                  "attention and MLP blocks, turns on hypersections, names the layers by their "
                  "module scope, fuses whole attention and MLP blocks at -o1 (rules/nlp.yaml) "
                  "and splits attention weights only between whole heads in --auto-partition; "
                  "a model without attention compiles as default)");
    c->add_option("--hypersection-pattern", co.hypersectionPattern,
                  "PATTERN: the repeated blocks named by where their ops come from, N standing "
                  "for the block index ('/h.N/' matches ONNX nodes '/h.0/...', '/h.1/...'; text "
                  "IR value names otherwise): each distinct block is compiled once from the "
                  "start; implies --enable-hypersection");
    c->add_option("--resources-scaling-factors", co.scalingFactors,
                  "F F F [F]: fractions in (0, 1] of a section's resources assumed for the "
                  "forward, backward and optimizer sections [and the gradient reduction's]")
        ->expected(3, 4);
  }

  void apply(CompileOptions& co) const {
    if (int(o0) + int(o1) + int(o3) > 1) throw Error("give one of -o0, -o1 and -o3");
    co.optLevel = o0 ? 0 : o1 ? 1 : 3;
  }
};

// A positive integer, said in the project's words (CLI11's PositiveNumber reports a float
// range: "Value 0 not in range 0.000000 to 1.797e308").
const CLI::Validator kPositive(
    [](std::string& s) {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && end == s.data() + s.size() && v > 0
                 ? std::string()
                 : "must be a positive integer, got '" + s + "'";
    },
    "POSITIVE");

// An empty value would read as "not given" and fall back to the default.
void rejectEmptyValues(const CLI::App* c) {
  for (const auto* opt : c->get_options())
    for (const std::string& v : opt->results())
      if (v.empty() && opt->get_expected_min() > 0)
        throw Error(opt->get_name() + " needs a value, got ''");
}

// A seed is an unsigned 64-bit integer: CLI11 would wrap "-1" and saturate larger values.
std::string checkSeed(const std::string& v) {
  uint64_t seed = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seed);
  return v.empty() || ec != std::errc() || end != v.data() + v.size()
             ? "a seed is an integer from 0 to 18446744073709551615"
             : "";
}

// Flags that say nothing in the compile asked for: refused rather than silently ignored.
void rejectContradictions(const CLI::App* c, const CompileOptions& co) {
  auto given = [&](const char* name) { return c->count(name) > 0; };
  rejectEmptyValues(c);
  const char* training[] = {"--optimizer", "--learning-rate", "--momentum",
                            "--nesterov",  "--weight-decay",  "--beta1",
                            "--beta2",     "--eps",           "--loss",
                            "--labels",    "--freeze",        "--shard-optimizer-state",
                            "--recompute", "--micro-batches"};
  for (const char* name : training)
    if (co.inference && given(name))
      throw Error(std::string(name) + " applies to training; --inference compiles no " +
                  "training step");
  const std::string& opt = co.train.optimizer;
  for (const char* name : {"--momentum", "--nesterov"})
    if (given(name) && opt != "sgd")
      throw Error(std::string(name) + " applies to --optimizer sgd, not " + opt);
  for (const char* name : {"--beta1", "--beta2", "--eps"})
    if (given(name) && opt == "sgd")
      throw Error(std::string(name) + " applies to --optimizer adam or adamw, not sgd");
  if (given("--labels") && co.train.loss.empty())
    throw Error("--labels names the input that --loss adds; give --loss too");
}

// SambaFlow spells some flags with one dash and several letters (-o0, -ws); CLI11 reads
// those as short-option clusters, so rename them first.
std::vector<std::string> normalizeArgs(const std::vector<std::string>& given) {
  std::vector<std::string> args;
  for (std::string a : given) {
    if (a == "-o0" || a == "-o1" || a == "-o3")
      a = "--" + a.substr(1);
    else if (a == "-ws")
      a = "--world-size";
    args.push_back(a);
  }
  std::reverse(args.begin(), args.end()); // CLI11 takes argument vectors in reverse
  return args;
}

// Every command's flags, bound to the options they set.
struct Commands {
  CLI::App app{"shardc: compile ML models into partitioned executables (PEF) and run them"};
  CompileOptions co;
  SectionFlags sectionFlags;
  RunOptions ro;
  std::string inspectPath;
  bool json = false, listSections = false, program = false;
  CalibrateOptions cal;
  ReportOptions rep;
  CLI::App *compile, *run, *inspect, *calibrateCmd, *reportCmd;

  // `debugHelp`: --help lists the support options too.
  explicit Commands(bool debugHelp) {
    // As in the seed compiler, --help lists the support options (for diagnosing the compiler)
    // only together with --debug; an option in no group is hidden.
    const std::string support = debugHelp ? "Support options (listed with --debug)" : "";
    app.set_version_flag("--version", std::string("shardc ") + kShardcVersion);
    app.require_subcommand(1);

    compile = app.add_subcommand("compile", "compile a model (.onnx or text IR) into a PEF");
    compile->add_option("model", co.model, "the model: .onnx, or shardc text IR")->required();
    compile->add_option("--pef-name", co.pefName, "PEF name (default shardc-<date>-<time>-<pid>)");
    compile->add_option("--output-folder", co.outputFolder,
                        "writes DIR/NAME/NAME.pef and NAME.log (default ./out)");
    compile->add_flag("--inference", co.inference,
                      "forward pass only (default: the training step)");
    TrainOptions& t = co.train;
    compile->add_option("--optimizer", t.optimizer, "training: sgd (default), adam or adamw");
    compile->add_option("--learning-rate,--lr", t.learningRate,
                        "training: learning rate (default 0.01)");
    compile->add_option("--momentum", t.momentum, "sgd: momentum (default 0)");
    compile->add_flag("--nesterov", t.nesterov, "sgd: Nesterov momentum");
    compile->add_option("--weight-decay", t.weightDecay,
                        "sgd/adam: L2 added to the gradient; adamw: decoupled decay (default 0)");
    compile->add_option("--beta1", t.beta1, "adam/adamw (default 0.9)");
    compile->add_option("--beta2", t.beta2, "adam/adamw (default 0.999)");
    compile->add_option("--eps", t.epsilon, "adam/adamw (default 1e-8)");
    compile->add_option("--loss", t.loss,
                        "add a loss on output 0: cross-entropy or mse (default: the "
                        "model's scalar output is the loss)");
    compile->add_option("--labels", t.labels,
                        "name of the labels input that --loss adds (default labels)");
    compile->add_option("--freeze", t.freeze,
                        "do not train parameters matching this shell pattern (repeatable)");
    compile
        ->add_option(
            "--recompute", co.recompute,
            "training: activations the backward pass recomputes instead of keeping: "
            "none, selective (the attention core), full (everything but one "
            "checkpoint per layer) or auto (the cheapest that fits; default with --auto-partition, "
            "else none)")
        ->check(CLI::IsMember({"none", "selective", "full", "auto"}));
    compile
        ->add_option("--precision", co.precision,
                     "f32 (default) or bf16: ops compute in bf16 from bf16 copies of the f32 "
                     "parameters; the loss, gradient reduction and optimizer stay in f32")
        ->check(CLI::IsMember({"f32", "bf16"}));
    compile
        ->add_option("--micro-batches", t.microBatches,
                     "training: gradient accumulation; a step runs the forward and backward "
                     "passes over N micro-batches of -b samples each (per replica), one after "
                     "the other, and updates once (default 1; with --auto-partition, when the "
                     "step fits only with the recomputation it chose or not at all, the "
                     "compiler splits the model's batch into the micro-batches that make the "
                     "fastest step that fits)")
        ->check(kPositive);
    compile
        ->add_option("-b,--batch-size", co.batchSize,
                     "rebind the inputs' batch dimension (dim 0); with --data-parallel -ws N, "
                     "one replica's batch (a step takes N x b samples)")
        ->check(kPositive);
    compile->add_flag("--untie-initializers", co.untieInitializers,
                      "ONNX: parameters the exporter merged for having equal values (eval-mode "
                      "exports) each get their own copy, as PyTorch trains them");
    compile->add_option(
        "--arch", co.arch,
        "target: native (default, = cpu), cpu, sn10, sn20, sn30, sn40l, a100, h100, "
        "h200, or a target file PATH.yaml");
    compile->add_option("--arch-file", co.archFile,
                        "target file (YAML, as targets/*.yaml or `shardc calibrate` writes); "
                        "replaces --arch");
    compile->add_flag("--verbose", co.verbose, "log each pass with its time on stderr");
    // A support option: shown by --help only with --debug.
    auto supportOption = [&](const char* name, auto& value, const char* help) {
      compile->add_option(name, value, help)->group(support);
    };
    compile->add_flag("--debug", co.debug,
                      "dump the IR after each pass that changed it, numbered; with --help, also "
                      "list the support options");
    supportOption("--cost-compute-efficiency", co.computeEfficiency,
                  "F in (0, 1]: the target's compute efficiency (fraction of peak FLOP/s), "
                  "overriding its file");
    supportOption("--cost-memory-efficiency", co.memoryEfficiency,
                  "F in (0, 1]: the target's memory efficiency (fraction of peak bandwidth), "
                  "overriding its file");
    supportOption("--cost-overlap", co.commOverlap,
                  "F in [0, 1]: the fraction of the shorter of compute and communication that "
                  "the estimate hides under the other, overriding the target's (cpu: 0)");
    supportOption("--grad-bucket-mib", co.gradBucketMiB,
                  "M >= 0: a partitioned step's gradient sums are merged into all-reduces of at "
                  "most M MiB (default 25; 0: one all-reduce per gradient)");
    compile
        ->add_flag(
            "--keep-temporary-files", co.keepTemporaryFiles,
            "a failed compile keeps its temporary folder, as OUTPUT_FOLDER/NAME.tmp-HOST-PID "
            "(the log up to the error and the files written so far), instead of removing "
            "it")
        ->group(support);
    compile
        ->add_flag("--dump-kernels", co.dumpKernels,
                   "write each section's kernels (the ops each runs, fused ones together, and "
                   "where each value lives) to LOG_DIR/kernels/FUNCTION.txt")
        ->group(support);
    compile->add_option("--log-dir", co.logDir,
                        "where the log and debug dumps go (default: the PEF's folder)");
    compile->add_option("--seed", co.seed, "seed for the initial parameters of text-IR models")
        ->check(checkSeed);
    PartitionOptions& po = co.partition;
    compile->add_flag("--data-parallel", po.dataParallel,
                      "data parallel: replicas on a `data` mesh axis of -ws N devices");
    compile
        ->add_option("--world-size", po.worldSize,
                     "-ws N: data parallel replicas, the fewest a run uses (run on more with "
                     "mpirun -np R or run --replicas R)")
        ->check(kPositive);
    compile->add_option("--tensor-parallel", po.tensorParallel,
                        "batch (split the batch) or weight (Megatron) over --n-chips devices");
    compile->add_option("--n-chips", po.nChips, "chips for --tensor-parallel")->check(kPositive);
    compile->add_option("--mesh", po.mesh,
                        "AXIS=N[,AXIS=N...] device mesh, with --strategy or --auto-partition");
    compile->add_option("--strategy", po.strategy,
                        "file of argument shardings (NAME: [{axis}, {}]), kept fixed");
    compile->add_flag("--estimate-only", co.estimateOnly,
                      "partition and print the cost estimate; write no PEF (text-IR parameters "
                      "are not even initialized, so model shapes alone suffice)");
    compile->add_flag("--shard-optimizer-state", po.shardOptimizerState,
                      "ZeRO: split optimizer state over the `data` axis");
    compile->add_flag(
        "--auto-partition", po.autoPartition,
        "search for the partitioning on --mesh (Automap); --strategy FILE fixes some");
    compile->add_option("--search-budget", po.searchBudget,
                        "--auto-partition: tree-search episodes (N) or wall-clock seconds (Ns); "
                        "default 200 episodes within 60 s");
    compile->add_option("--search-mode", po.searchMode,
                        "--auto-partition: joint (all mesh axes at once, the default) or per-axis "
                        "(one axis after another, in mesh order)");
    compile
        ->add_option("--search-seed", po.searchSeed,
                     "--auto-partition: seed of the tree search (default 0); same seed, same "
                     "plan")
        ->check(checkSeed);
    supportOption("--search-exploration", po.searchExploration,
                  "C >= 0: the tree search's UCT exploration constant (default 1)");
    supportOption("--search-rollout-continue", po.searchRolloutContinue,
                  "P in [0, 1): chance of one more random action in a rollout (default 0.5)");
    supportOption("--search-rescored", po.searchRescored,
                  "N in [1, 1000]: plans the search keeps by their step-by-step cost and "
                  "re-scores propagated all at once, as the compile will (default 16)");
    sectionFlags.add(compile, co);

    run = app.add_subcommand("run", "run a PEF on the CPU");
    run->add_option("--pef", ro.pef, "the PEF file")->required();
    run->add_option("--input", ro.inputs, "NAME=FILE.npy for each model input");
    run->add_option("--output-dir", ro.outputDir,
                    "writes DIR/<output-name>.npy (default out/<PEF name>/results)");
    run->add_option("--sections", ro.sections,
                    "forward: run only a training PEF's forward sections (an evaluation pass: "
                    "the loss and outputs, weights and state untouched)");
    run->add_flag("--measure-sections", ro.measureSections,
                  "time every section and print it beside the cost model's estimate");
    run->add_option("--steps", ro.steps,
                    "training: steps on the --input batch, outputs stacked along a new first axis "
                    "(with --data: the step the run ends at); inference: the forward pass "
                    "repeated (for timing), outputs written once")
        ->check(kPositive);
    run->add_option("--data", ro.data,
                    "training: NAME=FILE.npy per model input, samples along the leading axis "
                    "(memory-mapped), read in batches of the input's first dimension (with -ws N, "
                    "the batch of all replicas that run); the last step's outputs are written, "
                    "each step's loss goes to --metrics")
        ->allow_extra_args(false);
    run->add_option("--epochs", ro.epochs, "passes over --data (default 1, or --steps alone)")
        ->check(kPositive);
    run->add_flag("--shuffle", ro.shuffle,
                  "each epoch visits --data in its own order (a Fisher-Yates shuffle seeded by "
                  "--data-seed and the epoch; the README gives the rule)");
    run->add_option("--data-seed", ro.dataSeed, "seed of --shuffle's order (default 0)")
        ->check(checkSeed);
    run->add_option("--eval-data", ro.evalData,
                    "NAME=FILE.npy held-out samples for the inputs --data feeds: the mean loss of "
                    "the forward sections over them, weights and state untouched")
        ->allow_extra_args(false);
    run->add_option("--eval-every", ro.evalEvery,
                    "steps between evaluations (default: at the end of each epoch)")
        ->check(kPositive);
    run->add_option("--metrics", ro.metrics,
                    "FILE.jsonl: one JSON record per step (step, epoch, loss, lr, samples/s, wall "
                    "time) and per evaluation; appended to with --resume");
    run->add_option("--checkpoint-dir", ro.checkpointDir,
                    "write checkpoints into DIR/step-N/ (params.npz, state.npz, progress.json), "
                    "each atomically; one at the end of the run");
    run->add_option("--checkpoint-every", ro.checkpointEvery, "steps between checkpoints")
        ->check(kPositive);
    run->add_option("--keep", ro.keep, "checkpoints kept, the latest ones (default: all)")
        ->check(kPositive);
    run->add_option("--resume", ro.resume,
                    "DIR: continue from its latest checkpoint (parameters, optimizer state, data "
                    "position) up to --steps or --epochs");
    run->add_option("--weights", ro.weights, "parameters from an .npz (as --save-weights writes)");
    run->add_option("--seed", ro.seed,
                    "seed of training-mode dropout's masks (default: the PEF's, 0); each step "
                    "draws new ones");
    run->add_option("--save-weights", ro.saveWeights,
                    "write the parameters after the run to an .npz");
    run->add_option("--save-state", ro.saveState,
                    "write the opt_state after the run to an .npz: optimizer moments, BatchNorm "
                    "running statistics, dropout's random-number state");
    run->add_flag("--stop-on-nonfinite", ro.stopOnNonfinite,
                  "end a training run with an error at the first step whose loss is NaN or "
                  "infinite (without it, the run warns once and goes on)");
    run->add_flag("--stats", ro.stats,
                  "print the median step time, the peak bytes one device held, the time per "
                  "kernel and the library each large GEMM shape runs on (timed faster here; "
                  "SHARDC_GEMM=openblas|onednn decides instead)");
    run->add_option("--stats-json", ro.statsJson,
                    "write the measured figures as JSON (step times, peak bytes, seconds per "
                    "kernel, op kind and section) for shardc report --stats");
    run->add_flag("--reference", ro.reference,
                  "run the program through the reference interpreter (double precision, op by op) "
                  "instead of its compiled plan");
    run->add_option("--threads", ro.threads,
                    "threads of the run, shared by its devices (default: SHARDC_THREADS, else "
                    "every core the process may use: affinity and cgroup quota; MPI ranks on "
                    "one host share them)")
        ->check(CLI::Range(1, 4096));
    run->add_option("--replicas", ro.replicas,
                    "a PEF compiled with --data-parallel -ws N: run R >= N replicas as thread "
                    "devices (under mpirun the ranks decide: R = ranks / devices per replica); "
                    "each step takes R replicas' batches and averages their gradients (as one "
                    "device on R x b samples for a loss that is a mean over the batch)")
        ->check(CLI::Range(int64_t{1}, kMaxThreadDevices));
    run->add_option("--collective-timeout", ro.collectiveTimeout,
                    "under mpirun: seconds a collective waits for the other ranks before it ends "
                    "the job with an error (a rank stopped, hung or died; default 300)")
        ->check(CLI::Range(0.001, 1e6))
        ->check([](const std::string& v) {
          return v.find_first_not_of("0123456789.eE+-") == std::string::npos
                     ? ""
                     : "seconds are a number from 0.001 to 1e6";
        });

    inspect = app.add_subcommand("inspect", "describe a PEF");
    inspect->add_option("pef", inspectPath, "the PEF file")->required();
    inspect->add_flag("--json", json, "machine-readable output");
    inspect->add_flag("--sections", listSections,
                      "list every section: phase, ops, rule, bytes in and out, on-chip resources");
    inspect
        ->add_flag("--program", program,
                   "print the program as text IR (per device when partitioned)")
        ->excludes("--json")
        ->excludes("--sections");

    reportCmd = app.add_subcommand(
        "report", "write a PEF's plan (and a run's figures) as one self-contained HTML page");
    reportCmd->add_option("pef", rep.pef, "the PEF file")->required();
    reportCmd->add_option("-o,--output", rep.output, "the page to write (default: FILE.html)");
    reportCmd->add_option("--metrics", rep.metrics,
                          "a run's --metrics file: loss and throughput curves over steps");
    reportCmd->add_option("--stats", rep.stats,
                          "a run's --stats-json file: measured against estimated, per op kind "
                          "and section");

    calibrateCmd = app.add_subcommand(
        "calibrate", "measure what shardc's runtime reaches here and write a target file");
    calibrateCmd->add_option("--output", cal.output,
                             "target file to write (default: print it after the summary)");
    calibrateCmd->add_flag("--mpi", cal.mpi,
                           "measure MPI collectives as inter_node (run under mpirun -np N)");
    calibrateCmd->add_flag("--quick", cal.quick, "fewer, smaller measurements (for tests)");
  }
};

} // namespace

int commandLineMain(int argc, char** argv) {
  bool debugHelp = std::any_of(argv + 1, argv + argc,
                               [](const char* a) { return std::string_view(a) == "--debug"; });
  Commands cmds(debugHelp);
  auto& [app, co, sectionFlags, ro, inspectPath, json, listSections, program, cal, rep, compile,
         run, inspect, calibrateCmd, reportCmd] = cmds;
  std::string first = argc > 1 ? argv[1] : "";
  if (!first.empty() && first[0] != '-' && first != "compile" && first != "run" &&
      first != "inspect" && first != "report" && first != "calibrate") {
    std::cerr << "shardc: error: unknown command '" << first
              << "' (commands: compile, run, inspect, report, calibrate)\n";
    return 1;
  }
  try {
    app.parse(normalizeArgs(std::vector<std::string>(argv + 1, argv + argc)));
  } catch (const CLI::Success& e) { // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage errors read and exit like every other error (CLI11's own codes are 100 and up).
    bool command = !first.empty() && first[0] != '-';
    std::cerr << "shardc: error: " << e.what() << " (see shardc " << (command ? first + " " : "")
              << "--help)\n";
    return 1;
  }
  // Under mpirun every rank runs this; an error on one rank must end them all.
  bool underMpi = (run->parsed() || calibrateCmd->parsed()) && mpi::launchedByMpi();
  if (underMpi) mpi::init(argc, argv);
  // Exit status 1: what was given is wrong (or the run failed); 2: a shardc bug, an
  // InternalError (README, "Exit status").
  auto fail = [&](const std::string& message, int status = 1) {
    if (underMpi) mpi::abortAll("shardc: error: " + message);
    std::cerr << "shardc: error: " << message << "\n";
    return status;
  };
  try {
    if (compile->parsed()) {
      sectionFlags.apply(co);
      rejectContradictions(compile, co);
      co.microBatchesGiven = compile->count("--micro-batches") > 0;
      for (int i = 0; i < argc; ++i)
        co.commandLine.push_back(argv[i]);
      CompileResult r = compileModel(co);
      if (!r.pefPath.empty()) std::cout << "wrote " << r.pefPath << "\n";
      std::cout << r.estimate << "\n";
    } else if (run->parsed()) {
      rejectEmptyValues(run);
      for (int i = 0; i < argc; ++i)
        ro.commandLine.push_back(argv[i]);
      runPef(ro);
    } else if (inspect->parsed()) {
      std::cout << (program ? pefProgram(inspectPath)
                            : inspectPef(inspectPath, json, listSections));
    } else if (reportCmd->parsed()) {
      rejectEmptyValues(reportCmd);
      std::string page = reportPef(rep);
      std::cout << "wrote " << page << "\n";
    } else if (calibrateCmd->parsed()) {
      std::cout << calibrate(cal);
    }
  } catch (const std::exception& e) {
    // A library's exception (oneDNN, the standard library) that no check turned into a
    // message is a compiler bug, said as one rather than an abort.
    Failure f = failureOf(e);
    return fail(f.message, f.status);
  }
  // Standard output is an output too: a write that failed there (a full disk, /dev/full) is
  // not a success.
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout)
    return fail("standard output: write failed");
  if (underMpi) mpi::finalize();
  return 0;
}

namespace {

// Parses `shardc ARGS` where ARGS[0] must be `command`; a usage error becomes an Error.
std::unique_ptr<Commands> parseCommand(const std::vector<std::string>& args,
                                       const std::string& command) {
  auto cmds = std::make_unique<Commands>(false);
  if (args.empty() || args[0] != command) throw Error("expected the " + command + " command");
  try {
    cmds->app.parse(normalizeArgs(args));
  } catch (const CLI::CallForVersion&) {
    throw Error("--version is the command line's; from Python, see shardc.__version__");
  } catch (const CLI::Success&) { // --help
    throw Error("--help is the command line's; from Python, see help() of the function");
  } catch (const CLI::ParseError& e) {
    throw Error(e.what());
  }
  return cmds;
}

} // namespace

CompileOptions parseCompileCommand(const std::vector<std::string>& args) {
  std::unique_ptr<Commands> cmds = parseCommand(args, "compile");
  cmds->sectionFlags.apply(cmds->co);
  rejectContradictions(cmds->compile, cmds->co);
  cmds->co.microBatchesGiven = cmds->compile->count("--micro-batches") > 0;
  cmds->co.commandLine = {"shardc"};
  cmds->co.commandLine.insert(cmds->co.commandLine.end(), args.begin(), args.end());
  return cmds->co;
}

RunOptions parseRunCommand(const std::vector<std::string>& args) {
  std::unique_ptr<Commands> cmds = parseCommand(args, "run");
  rejectEmptyValues(cmds->run);
  cmds->ro.commandLine = {"shardc"};
  cmds->ro.commandLine.insert(cmds->ro.commandLine.end(), args.begin(), args.end());
  return cmds->ro;
}

} // namespace shardc
