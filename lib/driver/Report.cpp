#include "shardc/report/Report.h"
#include "shardc/driver/Driver.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <filesystem>

namespace shardc {

std::string reportPef(const ReportOptions& o) {
  std::string output = o.output;
  if (output.empty()) output = std::filesystem::path(o.pef).replace_extension(".html").string();
  if (std::filesystem::path(output) == std::filesystem::path(o.pef))
    throw Error("-o " + output + " would overwrite the PEF");
  checkWritable(output, "-o", false);
  ReportInputs in;
  in.pefPath = o.pef;
  in.inspectJson = inspectPef(o.pef, true);
  if (!o.metrics.empty()) in.metricsPath = o.metrics, in.metricsText = readFile(o.metrics);
  if (!o.stats.empty()) in.statsPath = o.stats, in.statsText = readFile(o.stats);
  std::string page = renderReport(in);
  if (std::filesystem::path folder = std::filesystem::path(output).parent_path(); !folder.empty())
    std::filesystem::create_directories(folder);
  writeFileAtomic(output, page);
  return output;
}

} // namespace shardc
