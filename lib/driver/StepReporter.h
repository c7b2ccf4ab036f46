// What a training run shows while it runs: a progress line on stderr (redrawn in place on a
// terminal, plain periodic lines otherwise) and, with --metrics, one JSON record per step and
// per evaluation.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace shardc {

class StepReporter {
public:
  // `totalSteps`: the step the run ends at; `epochs`: 0 when the run is not over a dataset;
  // `progress`: whether to show the progress line at all; `append`: add to an existing
  // metrics file (a resumed run) rather than replace it; `records`: where each record also
  // goes, as its JSON text (the Python module's metrics), or null.
  StepReporter(const std::string& metricsPath, bool append, int64_t firstStep, int64_t totalSteps,
               int64_t epochs, double learningRate, bool progress,
               std::vector<std::string>* records = nullptr);
  ~StepReporter();
  StepReporter(const StepReporter&) = delete;
  StepReporter& operator=(const StepReporter&) = delete;

  // After step `step` (counted from 1) of epoch `epoch` (from 0), which took `seconds` for
  // `samples` samples.
  void step(int64_t step, int64_t epoch, double loss, int64_t samples, double seconds);
  void evaluation(int64_t step, int64_t epoch, double loss, int64_t batches);
  void finish();

private:
  void line(const std::string& text, bool final);
  void record(const std::string& json);
  std::FILE* metrics_ = nullptr;
  std::string metricsPath_;
  std::vector<std::string>* records_;
  int64_t first_, total_, epochs_;
  double lr_;
  bool progress_, terminal_;
  int64_t every_;
  double busySeconds_ = 0;
  int64_t busySteps_ = 0;
  std::chrono::steady_clock::time_point start_;
  size_t lastWidth_ = 0;
};

} // namespace shardc
