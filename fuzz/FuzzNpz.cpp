// libFuzzer target: .npz bytes through the reader `run --weights` uses. Bad input must be a
// shardc::Error naming the file; anything else escapes and is a finding.
#include "shardc/io/Npz.h"
#include "shardc/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    shardc::parseNpz(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npz");
  } catch (const shardc::Error&) {
  }
  return 0;
}
