// libFuzzer target: a PEF's protobuf payload, wrapped in a valid header and checksum (so the
// input reaches the payload's checks rather than stopping at the checksum), loaded as `run`
// and `inspect` load it. Bad input must be a shardc::Error.
#include "shardc/ir/IR.h"
#include "shardc/pef/Pef.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/shardc-fuzz-pef." + std::to_string(::getpid()) + ".pef";
  shardc::writeFileAtomic(
      path, shardc::wrapPefPayload(std::string(reinterpret_cast<const char*>(data), size)));
  try {
    shardc::loadPef(path);
  } catch (const shardc::Error&) {
  }
  return 0;
}
