// libFuzzer target: strategy files (`--strategy`) through the strategy parser. Bad input must
// be a shardc::Error naming the file; anything else escapes and is a finding.
#include "shardc/sharding/Strategy.h"
#include "shardc/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    shardc::parseStrategy(std::string_view(reinterpret_cast<const char*>(data), size),
                          "fuzz.strategy");
  } catch (const shardc::Error&) {
  }
  return 0;
}
