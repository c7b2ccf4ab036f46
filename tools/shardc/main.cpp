// shardc: compile a model into a PEF, run a PEF, inspect a PEF, calibrate a target.
#include "shardc/driver/CommandLine.h"
#include "shardc/exec/CompiledFunction.h"

#include <string_view>

int main(int argc, char** argv) {
  // The commands that run kernels; the others need not start twice.
  if (argc > 1 && (std::string_view(argv[1]) == "run" || std::string_view(argv[1]) == "calibrate"))
    shardc::settleWaitPolicy(argv);
  return shardc::commandLineMain(argc, argv);
}
