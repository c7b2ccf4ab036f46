// libFuzzer target: ONNX model bytes through the importer `compile` uses (written to a file
// first: the importer reads a path, for the model's external data). Bad input must be a
// shardc::Error.
#include "shardc/import/OnnxImporter.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/shardc-fuzz-onnx." + std::to_string(::getpid()) + ".onnx";
  shardc::writeFileAtomic(path, std::string(reinterpret_cast<const char*>(data), size));
  try {
    shardc::importOnnx(path, shardc::ImportOptions{});
  } catch (const shardc::Error&) {
  }
  return 0;
}
