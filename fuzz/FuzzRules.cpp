// libFuzzer target: fusion-rules files (YAML, `--optimization-rules`) through the rules
// parser. Bad input must be a shardc::Error naming the file; anything else is a finding.
#include "shardc/dataflow/FusionRules.h"
#include "shardc/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    shardc::FusionRules::parse(std::string(reinterpret_cast<const char*>(data), size),
                               "fuzz.yaml");
  } catch (const shardc::Error&) {
  }
  return 0;
}
