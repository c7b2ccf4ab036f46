// libFuzzer target: target files (YAML, `--arch-file`) through the target parser. Bad input
// must be a shardc::Error naming the file; anything else escapes and is a finding.
#include "shardc/cost/Target.h"
#include "shardc/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    shardc::parseTarget(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  } catch (const shardc::Error&) {
  }
  return 0;
}
