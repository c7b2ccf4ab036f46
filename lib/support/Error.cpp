#include "shardc/support/Error.h"

#include <cstring>

namespace shardc {

void failCheck(const char* file, int line, const char* condition, const std::string& message) {
  const char* base = std::strrchr(file, '/');
  throw InternalError(message + " (" + (base ? base + 1 : file) + ":" + std::to_string(line) +
                      ": " + condition + ")");
}

} // namespace shardc
