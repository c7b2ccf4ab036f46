// libFuzzer target: a checkpoint's progress.json through the reader `run --resume` uses and
// the checks against a data set of 100 samples in batches of 4 (and a run without data). Bad
// input must be a shardc::Error; anything else escapes and is a finding. (The checkpoint's
// arrays are .npz files: fuzz-Npz covers them.)
#include "shardc/io/Checkpoint.h"
#include "shardc/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    shardc::Checkpoint c;
    c.path = "fuzz/step-00000001";
    c.progress = shardc::parseProgress(std::string(reinterpret_cast<const char*>(data), size),
                                       "fuzz/progress.json");
    shardc::checkProgress(c, 0, 0);
    shardc::checkProgress(c, 100, 4);
  } catch (const shardc::Error&) {
  }
  return 0;
}
