// The cost report as JSON, for `shardc inspect --json` and tools.
#pragma once

#include "shardc/cost/CostModel.h"

#include <string>

namespace shardc {

std::string costReportJson(const CostReport& r);

} // namespace shardc
