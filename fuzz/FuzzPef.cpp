// libFuzzer target: a little-endian u32, the length of a weights block (at most 16 MiB), then a
// PEF's protobuf payload; wrapped with a block of that many zero bytes in a valid header and
// checksum (so the input reaches the payload's checks rather than stopping at the checksum),
// and loaded as `run` and `inspect` load it. Bad input must be a shardc::Error.
#include "shardc/ir/IR.h"
#include "shardc/pef/Pef.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/shardc-fuzz-pef." + std::to_string(::getpid()) + ".pef";
  if (size < 4) return 0;
  uint32_t block = 0;
  std::memcpy(&block, data, 4);
  shardc::writeFileAtomic(
      path, shardc::wrapPefPayload(std::string(reinterpret_cast<const char*>(data) + 4, size - 4),
                                   std::string(std::min<uint32_t>(block, 16u << 20), '\0')));
  try {
    shardc::loadPef(path);
  } catch (const shardc::Error&) {
  }
  return 0;
}
