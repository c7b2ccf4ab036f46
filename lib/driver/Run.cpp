// `shardc run` as a list of stages, run in order over one RunState (RunState.h).
#include "RunState.h"

#include <chrono>

namespace shardc {
namespace {

struct RunStage {
  const char* name;
  void (*run)(RunState&);
};

const RunStage kRunStages[] = {
    {"load", loadForRun},         {"check-options", checkRunOptions},
    {"sources", gatherSources},   {"state", restoreState},
    {"arguments", bindArguments}, {"schedule", scheduleSteps},
    {"start", startExecution},    {"steps", runSteps},
    {"stats", printStats},        {"results", deliverResults},
};

} // namespace

void runPef(const RunOptions& options, RunArrays* arrays) {
  RunState s(options, arrays);
  for (const RunStage& stage : kRunStages) {
    auto t0 = std::chrono::steady_clock::now();
    stage.run(s);
    s.stageSeconds.emplace_back(
        stage.name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
}

} // namespace shardc
