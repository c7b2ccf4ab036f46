// The cost report and the auto-partition search as JSON, kept in the PEF for `shardc inspect
// --json`, `shardc report` and tools.
#pragma once

#include "shardc/cost/CostModel.h"
#include "shardc/search/Search.h"

#include <string>

namespace shardc {

std::string costReportJson(const CostReport& r);
// The baselines, the tree search's decisions in order, the groups and the choice.
std::string searchResultJson(const SearchResult& r);

} // namespace shardc
