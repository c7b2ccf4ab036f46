#include "shardc/support/Error.h"

#include <cstring>
#include <filesystem>
#include <new>

namespace shardc {

Failure failureOf(const std::exception& e) {
  if (dynamic_cast<const InternalError*>(&e)) return {e.what(), 2};
  if (dynamic_cast<const Error*>(&e) || dynamic_cast<const std::filesystem::filesystem_error*>(&e))
    return {e.what(), 1};
  if (dynamic_cast<const std::bad_alloc*>(&e)) return {"out of memory", 1};
  return {std::string("internal error: ") + e.what(), 2};
}

void failCheck(const char* file, int line, const char* condition, const std::string& message) {
  const char* base = std::strrchr(file, '/');
  throw InternalError(message + " (" + (base ? base + 1 : file) + ":" + std::to_string(line) +
                      ": " + condition + ")");
}

} // namespace shardc
