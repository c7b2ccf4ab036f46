// Runs ONNX's own backend test cases (Debian's libonnx-testdata) through the importer and
// the reference interpreter. A case whose model imports (its ops, attributes and dtypes are
// supported) must reproduce every test data set; the number of such cases is the
// importer's coverage figure. Exits 1 if any imported case gives wrong results.
#include "shardc/import/OnnxImporter.h"
#include "shardc/ir/IR.h"
#include "shardc/runtime/Interpreter.h"
#include "shardc/runtime/TensorFormat.h"
#include "shardc/support/Error.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

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

// Cases whose expected outputs are draws of numpy's random generator (dropout masks at a
// non-zero ratio): no other generator reproduces them.
const std::set<std::string> kNumpyRandom = {
    "test_training_dropout", "test_training_dropout_default", "test_training_dropout_default_mask",
    "test_training_dropout_mask"};

Outcome runCase(const fs::path& dir, std::string& detail) {
  if (kNumpyRandom.count(dir.filename().string())) {
    detail = "its expected outputs are draws of numpy's random generator";
    return Outcome::Unsupported;
  }
  ImportedModel m;
  try {
    // As for a training step: the training-mode nodes of these cases expect training.
    ImportOptions options;
    options.training = true;
    m = importOnnx((dir / "model.onnx").string(), options);
  } catch (const Error& e) {
    detail = e.what();
    return Outcome::Unsupported;
  }
  const Function& f = *m.module->functions()[0];
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  for (const fs::path& set : sets) {
    std::vector<Tensor> args, wants;
    // Test data in a dtype shardc cannot read (bfloat16 data is stored as uint16) makes the
    // case unsupported, not failed.
    try {
      size_t inputIndex = 0;
      for (size_t i = 0; i < f.numArguments(); ++i) {
        const Value* a = f.argument(i);
        if (a->argKind() == ArgKind::Param)
          args.push_back(*m.weights.at(a->name()));
        else if (a->argKind() == ArgKind::OptState)
          args.push_back(*m.state.at(a->name()));
        else
          args.push_back(
              readOnnxTensor((set / ("input_" + std::to_string(inputIndex++) + ".pb")).string()));
      }
      // Results tied to arguments are state the training step carries, not graph outputs.
      for (size_t i = 0; i < f.results().size(); ++i)
        if (f.results()[i].tiedArg < 0)
          wants.push_back(readOnnxTensor((set / ("output_" + std::to_string(i) + ".pb")).string()));
    } catch (const Error& e) {
      detail = e.what();
      return Outcome::Unsupported;
    }
    try {
      std::vector<Tensor> out = interpret(f, args);
      for (size_t i = 0; i < wants.size(); ++i) {
        const Tensor& want = wants[i];
        std::string err = compare(out[i], want);
        if (!err.empty()) {
          detail = set.filename().string() + " output " + std::to_string(i) + ": " + err;
          return Outcome::Fail;
        }
      }
    } catch (const Error& e) {
      detail = set.filename().string() + ": " + e.what();
      return Outcome::Fail;
    }
  }
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
      Outcome o = runCase(c, detail);
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
  if (totalPass < minPass) {
    std::cout << "error: only " << totalPass << " cases pass, expected at least " << minPass
              << "\n";
    return 1;
  }
  return totalFail ? 1 : 0;
}
