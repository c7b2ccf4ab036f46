// libFuzzer target: .npy bytes through the reader `run --input` uses. Bad input must be a
// shardc::Error naming the file; anything else escapes and is a finding.
#include "shardc/io/Npy.h"
#include "shardc/ir/Tensor.h"
#include "shardc/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    shardc::parseNpy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  } catch (const shardc::Error&) {
  }
  return 0;
}
