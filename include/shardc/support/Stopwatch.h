// Adds the wall-clock time of a scope (or until stop()) to a running total in seconds.
#pragma once

#include <chrono>

namespace shardc {

class Stopwatch {
public:
  explicit Stopwatch(double& total) : total_(&total), start_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() { stop(); }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

  void stop() {
    if (!total_) return;
    *total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    total_ = nullptr;
  }

private:
  double* total_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace shardc
