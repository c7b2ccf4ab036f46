// The figures `shardc run` measures (--stats, --measure-sections, --stats-json), beside what
// the PEF's cost model predicted for them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardc {
struct ExecStats;
struct LoadedPef;

// Each section's kernel seconds per step and device (`byStep` sums `devices` devices' times),
// and the section model's estimate on the PEF's target (empty when that target is not built
// in).
struct SectionTimes {
  std::vector<double> measured, estimated;
  std::string target; // the PEF's target, or why there is no estimate
};
SectionTimes sectionTimes(const LoadedPef& l, const std::vector<double>& byStep, int64_t steps,
                          int64_t devices);

// --measure-sections: the table on stdout. `opLimit` >= 0: only sections before that op ran.
void printSectionTimes(const LoadedPef& l, const SectionTimes& t, int64_t opLimit);

// What a run measured.
struct RunMeasurements {
  std::vector<double> stepSeconds;
  std::vector<int64_t> peakBytes; // the most each device held (Executor::peakBytesByDevice)
  int64_t devices = 1;            // the mesh's
  int64_t timedDevices = 1; // those this process ran (one per MPI rank): kernel seconds sum them
  bool reference = false;
  int64_t opLimit = -1;
};

// --stats-json: the measured figures as JSON (`shardc report --stats` reads them). Kernel
// seconds are per step and device (the timed devices' sum over their count), as the cost
// model's estimates are; a fused kernel's seconds are split over its op kinds in proportion to
// the cost model's average time per op of each kind. Needs at least one step.
std::string runStatsJson(const LoadedPef& l, const std::string& pefPath, const RunMeasurements& m,
                         const ExecStats& times);

} // namespace shardc
