// shardc: compile a model into a PEF, run a PEF, inspect a PEF, calibrate a target.
#include "shardc/driver/CommandLine.h"
#include "shardc/exec/CompiledFunction.h"

int main(int argc, char** argv) {
  shardc::settleWaitPolicy(argv);
  return shardc::commandLineMain(argc, argv);
}
