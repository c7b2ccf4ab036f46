#include "shardc/report/Report.h"
#include "shardc/driver/Driver.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <filesystem>

namespace shardc {

std::string reportPef(const ReportOptions& o) {
  std::string output = o.output;
  if (output.empty()) output = std::filesystem::path(o.pef).replace_extension(".html").string();
  // However spelled (./x.pef, an absolute path), the page must not replace what it reads.
  auto same = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec) &&
           !ec;
  };
  for (const auto& [file, what] : {std::pair{o.pef, "the PEF"}, std::pair{o.metrics, "--metrics"},
                                   std::pair{o.stats, "--stats"}})
    if (!file.empty() && same(output, file))
      throw Error("-o " + output + " would overwrite " + what + " (" + file + ")");
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
