// libFuzzer target: text IR through the parser and the verifier. Bad input must end in
// diagnostics, never in a crash, a sanitizer report or an unbounded allocation.
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"
#include "shardc/ir/Verifier.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  shardc::DiagEngine diags("fuzz.ir");
  std::unique_ptr<shardc::Module> m = shardc::parseModule(text, diags);
  if (m && !diags.hasErrors()) shardc::verifyModule(*m, diags);
  return 0;
}
