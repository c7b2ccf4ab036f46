// `shardc report`: a PEF's plan, and optionally a run's measurements and metrics, as one
// self-contained HTML page (inline CSS, SVG and script; nothing fetched).
#pragma once

#include <string>

namespace shardc {

struct ReportInputs {
  std::string pefPath;
  std::string inspectJson;              // `shardc inspect --json` of the PEF
  std::string metricsPath, metricsText; // --metrics: the run's JSON lines (StepReporter)
  std::string statsPath, statsText;     // --stats: `shardc run --stats-json`'s file
};

// The page. Throws shardc::Error naming the file (and line) of malformed metrics or stats,
// and stats measured on another PEF.
std::string renderReport(const ReportInputs& in);

} // namespace shardc
