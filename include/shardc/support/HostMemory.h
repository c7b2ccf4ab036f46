// This machine's memory, so that a run refuses an allocation that cannot succeed with a
// message naming what asked for it (rather than std::bad_alloc, or the kernel's OOM killer).
#pragma once

#include <cstdint>
#include <unistd.h>

namespace shardc {

inline int64_t hostMemoryBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<int64_t>(pages) * size : INT64_MAX;
}

} // namespace shardc
