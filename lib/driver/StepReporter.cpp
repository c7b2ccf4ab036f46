#include "StepReporter.h"

#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <unistd.h>

namespace shardc {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// JSON has no NaN or infinity; a diverged loss is written as null.
std::string jsonNumber(double v) {
  return std::isfinite(v) ? fmt("%.9g", v) : "null";
}

std::string duration(double seconds) {
  if (!(seconds < 1e9)) return "a very long time"; // a run of --epochs beyond any end
  auto s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

} // namespace

StepReporter::StepReporter(const std::string& metricsPath, bool append, int64_t firstStep,
                           int64_t totalSteps, int64_t epochs, double learningRate, bool progress,
                           std::vector<std::string>* records)
    : metricsPath_(metricsPath), records_(records), first_(firstStep), total_(totalSteps),
      epochs_(epochs), lr_(learningRate), progress_(progress), terminal_(::isatty(2) == 1),
      start_(std::chrono::steady_clock::now()) {
  // About 20 plain lines per run when stderr is not a terminal.
  every_ = std::max<int64_t>(1, (total_ - first_) / 20);
  if (metricsPath.empty()) return;
  metrics_ = openOutputStream(metricsPath, append, "--metrics");
}

StepReporter::~StepReporter() {
  if (metrics_) std::fclose(metrics_);
}

void StepReporter::step(int64_t step, int64_t epoch, double loss, int64_t samples, double seconds) {
  busySeconds_ += seconds;
  ++busySteps_;
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = seconds > 0 ? static_cast<double>(samples) / seconds : 0;
  record("{\"step\": " + std::to_string(step) + ", \"epoch\": " + std::to_string(epoch) +
         ", \"loss\": " + jsonNumber(loss) + ", \"lr\": " + jsonNumber(lr_) +
         ", \"samples\": " + std::to_string(samples) + ", \"samples_per_s\": " + fmt("%.1f", rate) +
         ", \"step_s\": " + fmt("%.6f", seconds) + ", \"wall_s\": " + fmt("%.3f", wall) + "}");
  if (!progress_) return;
  bool last = step == total_;
  if (!terminal_ && !last && (step - first_) % every_ != 0 && step != first_ + 1) return;
  double mean = busySeconds_ / static_cast<double>(busySteps_);
  std::string text = "step " + std::to_string(step) + "/" + std::to_string(total_);
  if (epochs_ > 0) text += " epoch " + std::to_string(epoch + 1) + "/" + std::to_string(epochs_);
  text += " loss " + fmt("%.6g", loss) + " " + fmt("%.1f", rate) + " samples/s, " + duration(wall) +
          " elapsed, " + duration(mean * static_cast<double>(total_ - step)) + " left";
  line(text, last);
}

void StepReporter::evaluation(int64_t step, int64_t epoch, double loss, int64_t batches) {
  record("{\"eval\": true, \"step\": " + std::to_string(step) +
         ", \"epoch\": " + std::to_string(epoch) + ", \"eval_loss\": " + jsonNumber(loss) +
         ", \"batches\": " + std::to_string(batches) + "}");
  if (progress_)
    line("eval after step " + std::to_string(step) + ": loss " + fmt("%.6g", loss) + " over " +
             std::to_string(batches) + " batches",
         true);
}

void StepReporter::record(const std::string& json) {
  if (records_) records_->push_back(json);
  if (!metrics_) return;
  if (std::fprintf(metrics_, "%s\n", json.c_str()) < 0 || std::fflush(metrics_) != 0)
    throw Error("--metrics " + metricsPath_ + ": write error: " + std::strerror(errno));
}

void StepReporter::finish() {
  if (metrics_ && std::fclose(metrics_) != 0) {
    metrics_ = nullptr;
    throw Error("--metrics " + metricsPath_ + ": write error: " + std::strerror(errno));
  }
  metrics_ = nullptr;
}

void StepReporter::line(const std::string& text, bool final) {
  if (!terminal_) {
    std::fprintf(stderr, "%s\n", text.c_str());
    return;
  }
  // Redrawn in place; padded so that a shorter line hides the longer one before it.
  std::string padded = text;
  if (padded.size() < lastWidth_) padded.append(lastWidth_ - padded.size(), ' ');
  lastWidth_ = final ? 0 : text.size();
  std::fprintf(stderr, "\r%s%s", padded.c_str(), final ? "\n" : "");
  std::fflush(stderr);
}

} // namespace shardc
