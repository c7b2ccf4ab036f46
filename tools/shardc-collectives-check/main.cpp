// shardc-collectives-check: runs a per-device program with one device per MPI rank and
// again with every device on a thread of rank 0, and checks that each device's results
// agree bitwise. The test of the MPI collectives:
//   mpirun -np 4 shardc-collectives-check --mesh data=2,model=2 program.ir
#include "shardc/collectives/MpiCollectives.h"
#include "shardc/collectives/ThreadCollectives.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>

using namespace shardc;

namespace {

struct Options {
  std::string input;
  std::string mesh;
  int failOnRank = -1;
};

// Device d's value for an argument: different on every device, of mixed magnitudes so
// that sums round and their order shows.
Tensor argument(const TensorType& t, int64_t d) {
  Tensor x(t);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = d * 1000 + i + 1;
    if (isFloat(t.dtype))
      x.setDouble(i, std::sin(0.7 * static_cast<double>(k)) * std::pow(10.0, k % 7 - 3));
    else
      x.setInt(i, (k * 37) % 201 - 100);
  }
  return x;
}

// Returns the number of results that differ between MPI and threads (on rank 0).
int check(const Options& o) {
  std::string text = readFile(o.input);
  DiagEngine diags(o.input);
  std::unique_ptr<Module> module = parseModule(text, diags);
  if (!module) throw Error(diags.format(diags.diagnostics().front()));
  if (module->functions().empty()) throw Error(o.input + " has no function");
  const Function& f = *module->functions().front();
  Mesh mesh = Mesh::parse(o.mesh);
  std::vector<std::vector<Tensor>> args(static_cast<size_t>(mesh.numDevices()));
  for (size_t d = 0; d < args.size(); ++d)
    for (size_t i = 0; i < f.numArguments(); ++i)
      args[d].push_back(argument(f.argument(i)->type(), static_cast<int64_t>(d)));

  MpiCollectives comm(mesh);
  if (mpi::worldRank() == o.failOnRank) throw Error("injected failure");
  std::vector<Tensor> mine = interpret(f, args[static_cast<size_t>(comm.device())], &comm);
  bool root = mpi::worldRank() == 0;
  std::vector<std::vector<Tensor>> byThreads;
  if (root) byThreads = runOnDevices(f, mesh, args);
  int mismatches = 0;
  for (size_t r = 0; r < mine.size(); ++r) {
    std::vector<Tensor> byRanks = mpi::gatherToRoot(mine[r]);
    if (!root) continue;
    int agree = 0;
    for (size_t d = 0; d < byRanks.size(); ++d)
      agree += byRanks[d].identical(byThreads[d][r]);
    const std::string& name = f.results()[r].name;
    if (agree == mesh.numDevices()) {
      std::cout << name << ": " << mine[r].type().str() << " bitwise equal on " << agree
                << " devices\n";
    } else {
      std::cout << name << ": MISMATCH on " << mesh.numDevices() - agree << " devices\n";
      ++mismatches;
    }
  }
  return mismatches;
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"shardc-collectives-check: run a per-device program on MPI ranks and on threads, "
               "compare bitwise"};
  app.add_option("input", o.input, "per-device program (text IR); its first function runs")
      ->required();
  app.add_option("--mesh", o.mesh, "device mesh, one device per rank, e.g. data=2,model=2")
      ->required();
  app.add_option("--fail-on-rank", o.failOnRank, "throw on this rank (tests the abort)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!mpi::launchedByMpi()) {
    std::cerr << "shardc-collectives-check: error: start it with mpirun\n";
    return 1;
  }
  mpi::init(argc, argv);
  int mismatches = 0;
  try {
    mismatches = check(o);
  } catch (const std::exception& e) {
    mpi::abortAll("shardc-collectives-check: error: rank " + std::to_string(mpi::worldRank()) +
                  ": " + e.what());
  }
  mpi::finalize();
  return mismatches ? 1 : 0;
}
