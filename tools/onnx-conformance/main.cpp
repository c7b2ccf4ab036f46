// Runs ONNX's own backend test cases (Debian's libonnx-testdata) through the importer and
// the reference interpreter. A case whose model imports (its ops, attributes and dtypes are
// supported) must reproduce every test data set; the number of such cases is the
// importer's coverage figure. With --compiled, each such case is also compiled for inference
// and run on the native kernels, as `shardc compile --inference` and `shardc run` do.
// Exits 1 if any case gives wrong results either way.
#include "shardc/driver/Driver.h"
#include "shardc/driver/RunArrays.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/import/OnnxImporter.h"
#include "shardc/io/TensorFormat.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace shardc;

namespace {

enum class Outcome { Pass, Unsupported, Fail };

// ONNX's backend tests compare with rtol 1e-3 and atol 1e-7; results of float ops are
// checked in float32, so allow a little absolute slack too.
std::string compare(const Tensor& got, const Tensor& want) {
  if (got.type() != want.type())
    return "type " + got.type().str() + ", expected " + want.type().str();
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (isFloat(want.dtype())) {
      double a = got.getDouble(i), b = want.getDouble(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (a == b) continue;
      if (!(std::fabs(a - b) <= 1e-5 + 1e-3 * std::fabs(b)))
        return "element " + std::to_string(i) + ": " + std::to_string(a) + ", expected " +
               std::to_string(b);
    } else if (got.getInt(i) != want.getInt(i)) {
      return "element " + std::to_string(i) + ": " + std::to_string(got.getInt(i)) + ", expected " +
             std::to_string(want.getInt(i));
    }
  }
  return "";
}

// Cases no correct implementation reproduces, and why.
const std::map<std::string, std::string> kUnreproducible = {
    // Dropout masks at a non-zero ratio: no other generator draws them.
    {"test_training_dropout", "its expected outputs are draws of numpy's random generator"},
    {"test_training_dropout_default", "its expected outputs are draws of numpy's random generator"},
    {"test_training_dropout_default_mask",
     "its expected outputs are draws of numpy's random generator"},
    {"test_training_dropout_mask", "its expected outputs are draws of numpy's random generator"},
    // ONNX 1.12's generator truncated; its own float32_to_bfloat16 rounds.
    {"test_cast_FLOAT_to_BFLOAT16",
     "its expected outputs truncate float to bfloat16, where shardc rounds to nearest even (as "
     "PyTorch and ONNX's own float32_to_bfloat16 do)"}};

// One test data set: the function's arguments, its inputs by name and the expected graph
// outputs (the untied results) by name.
struct DataSet {
  std::string name;
  std::vector<Tensor> args;
  std::map<std::string, Tensor> inputs;
  std::vector<std::pair<std::string, Tensor>> wants;
};

// Reads every test data set of `dir` for `m`'s @main (bfloat16 data, stored as UINT16, read
// as bfloat16 bits where the model says bfloat16). Data in a dtype shardc cannot read throws.
std::vector<DataSet> readDataSets(const fs::path& dir, const ImportedModel& m) {
  const Function& f = *m.module->functions()[0];
  std::vector<fs::path> paths;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  std::vector<DataSet> sets;
  for (const fs::path& path : paths) {
    DataSet set{path.filename().string(), {}, {}, {}};
    size_t inputIndex = 0;
    for (size_t i = 0; i < f.numArguments(); ++i) {
      const Value* a = f.argument(i);
      if (a->argKind() == ArgKind::Param) {
        set.args.push_back(*m.weights.at(a->name()));
      } else if (a->argKind() == ArgKind::OptState) {
        set.args.push_back(*m.state.at(a->name()));
      } else {
        fs::path file = path / ("input_" + std::to_string(inputIndex++) + ".pb");
        set.args.push_back(readOnnxTensor(file.string(), a->type().dtype));
        if (set.args.back().type() != a->type())
          throw Error(file.string() + " holds " + set.args.back().type().str() +
                      ", where the model declares " + a->type().str());
        set.inputs.emplace(a->name(), set.args.back());
      }
    }
    // Results tied to arguments are state the training step carries, not graph outputs.
    for (size_t i = 0; i < f.results().size(); ++i)
      if (f.results()[i].tiedArg < 0)
        set.wants.emplace_back(
            f.results()[i].name,
            readOnnxTensor((path / ("output_" + std::to_string(i) + ".pb")).string(),
                           f.results()[i].value->type().dtype));
    sets.push_back(std::move(set));
  }
  return sets;
}

// The case compiled for inference into `work` and run on the native kernels with each data
// set's inputs. A compile that refuses the model (a user error) makes it Unsupported.
Outcome runCompiled(const fs::path& dir, const fs::path& work, const std::vector<DataSet>& sets,
                    std::string& detail) {
  fs::remove_all(work);
  CompileOptions co;
  co.model = (dir / "model.onnx").string();
  co.inference = true;
  co.outputFolder = work.string();
  co.pefName = "case";
  RunOptions ro;
  ro.threads = 1;
  try {
    ro.pef = compileModel(co).pefPath;
  } catch (const Error& e) {
    detail = std::string("compile: ") + e.what();
    return Outcome::Unsupported;
  }
  for (const DataSet& set : sets) {
    RunArrays arrays;
    arrays.inputs = set.inputs;
    try {
      runPef(ro, &arrays);
    } catch (const Error& e) {
      detail = set.name + ": run: " + e.what();
      return Outcome::Fail;
    }
    for (const auto& [name, want] : set.wants) {
      // clang 14 cannot capture a structured binding in a lambda.
      const std::string& wanted = name;
      auto got = std::find_if(arrays.outputs.begin(), arrays.outputs.end(),
                              [&](const auto& o) { return o.first == wanted; });
      std::string err = got == arrays.outputs.end() ? "missing" : compare(got->second, want);
      if (!err.empty()) {
        detail = set.name + " output " + name + " (compiled): " + err;
        return Outcome::Fail;
      }
    }
  }
  return Outcome::Pass;
}

// The compiled run of a case the interpreter passes (--compiled).
struct CompiledRun {
  fs::path work; // the compile's output folder
  Outcome outcome = Outcome::Unsupported;
  std::string detail;
};

// The case through the importer and the interpreter; with `compiled`, then compiled too when
// the interpreter passes.
Outcome runCase(const fs::path& dir, CompiledRun* compiled, std::string& detail) {
  if (auto why = kUnreproducible.find(dir.filename().string()); why != kUnreproducible.end()) {
    detail = why->second;
    return Outcome::Unsupported;
  }
  ImportedModel m;
  std::vector<DataSet> sets;
  try {
    // As for a training step: the training-mode nodes of these cases expect training.
    ImportOptions options;
    options.training = true;
    m = importOnnx((dir / "model.onnx").string(), options);
    sets = readDataSets(dir, m);
  } catch (const Error& e) {
    detail = e.what();
    return Outcome::Unsupported;
  }
  const Function& f = *m.module->functions()[0];
  for (DataSet& set : sets) {
    try {
      std::vector<Tensor> out = interpret(f, set.args);
      for (size_t i = 0; i < set.wants.size(); ++i) {
        std::string err = compare(out[i], set.wants[i].second);
        if (!err.empty()) {
          detail = set.name + " output " + std::to_string(i) + ": " + err;
          return Outcome::Fail;
        }
      }
    } catch (const Error& e) {
      detail = set.name + ": " + e.what();
      return Outcome::Fail;
    }
  }
  if (compiled) compiled->outcome = runCompiled(dir, compiled->work, sets, compiled->detail);
  return Outcome::Pass;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run ONNX backend test cases through shardc's importer and interpreter"};
  std::string data = "/usr/share/libonnx-testdata/data";
  std::vector<std::string> suites{"node", "pytorch-operator", "pytorch-converted", "simple"};
  std::string filter;
  bool verbose = false;
  int minPass = 0;
  app.add_option("--data", data, "libonnx-testdata's data folder");
  app.add_option("--suite", suites, "suites to run (default: all four)");
  app.add_option("--filter", filter, "only cases whose name contains this");
  app.add_flag("-v,--verbose", verbose, "one line per case, with the reason when not passing");
  app.add_option("--min-pass", minPass,
                 "also fail when fewer cases pass (guards against the importer "
                 "silently rejecting what it used to support)");
  bool compiledToo = false;
  app.add_flag("--compiled", compiledToo,
               "also compile each passing case for inference and run it on the native kernels");
  bool listOps = false;
  app.add_flag("--list-ops", listOps, "print the ONNX op types the importer maps, and exit");
  CLI11_PARSE(app, argc, argv);
  if (listOps) {
    for (const std::string& op : supportedOnnxOps())
      std::cout << op << "\n";
    return 0;
  }
  if (!fs::is_directory(data)) {
    std::cerr << "onnx-conformance: error: " << data
              << " is not a folder (install libonnx-testdata)\n";
    return 1;
  }
  int totalPass = 0, totalFail = 0, totalUnsupported = 0;
  // --compiled: pass, fail and not compiled, over the cases the interpreter passes.
  std::map<Outcome, int> compiledTotals;
  fs::path work = fs::temp_directory_path() / ("shardc-conformance-" + std::to_string(getpid()));
  for (const std::string& suite : suites) {
    fs::path root = fs::path(data) / suite;
    if (!fs::is_directory(root)) {
      std::cerr << "onnx-conformance: error: no suite " << root << "\n";
      return 1;
    }
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(root))
      if (fs::exists(e.path() / "model.onnx") &&
          e.path().filename().string().find(filter) != std::string::npos)
        cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    int pass = 0, fail = 0, unsupported = 0;
    for (const fs::path& c : cases) {
      std::string detail;
      CompiledRun compiled{work, Outcome::Unsupported, ""};
      Outcome o = runCase(c, compiledToo ? &compiled : nullptr, detail);
      if (compiledToo && o == Outcome::Pass) {
        ++compiledTotals[compiled.outcome];
        if (compiled.outcome != Outcome::Pass && (verbose || compiled.outcome == Outcome::Fail))
          std::cout << (compiled.outcome == Outcome::Fail ? "FAIL " : "NOT COMPILED ") << suite
                    << "/" << c.filename().string() << ": " << compiled.detail << "\n";
      }
      if (o == Outcome::Pass)
        ++pass;
      else if (o == Outcome::Fail)
        ++fail;
      else
        ++unsupported;
      if (o == Outcome::Fail || verbose)
        std::cout << (o == Outcome::Pass   ? "PASS "
                      : o == Outcome::Fail ? "FAIL "
                                           : "UNSUPPORTED ")
                  << suite << "/" << c.filename().string() << (detail.empty() ? "" : ": " + detail)
                  << "\n";
    }
    std::cout << suite << ": " << pass << " pass, " << fail << " fail, " << unsupported
              << " unsupported, of " << cases.size() << "\n";
    totalPass += pass;
    totalFail += fail;
    totalUnsupported += unsupported;
  }
  std::cout << "total: " << totalPass << " pass, " << totalFail << " fail, " << totalUnsupported
            << " unsupported\n";
  if (compiledToo) {
    fs::remove_all(work);
    std::cout << "compiled: " << compiledTotals[Outcome::Pass] << " pass, "
              << compiledTotals[Outcome::Fail] << " fail, " << compiledTotals[Outcome::Unsupported]
              << " not compiled, of the " << totalPass << " the interpreter passes\n";
  }
  if (totalPass < minPass) {
    std::cout << "error: only " << totalPass << " cases pass, expected at least " << minPass
              << "\n";
    return 1;
  }
  return totalFail || compiledTotals[Outcome::Fail] ? 1 : 0;
}
