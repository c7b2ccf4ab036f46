// The precision stages (--precision bf16): the model computes in bf16 before its training step
// is built, and the program the PEF runs gets kernels that compute in f32 (shardc's CPU
// runtime has no bf16 kernels yet).
#include "CompileState.h"

#include "shardc/transforms/Passes.h"

namespace shardc {

bool bf16(const CompileState& s) {
  return s.o.precision == "bf16";
}

void lowerPrecision(CompileState& s) {
  computeInBf16(s.model());
  s.log.line("precision bf16: ops compute in bf16 from bf16 copies of the f32 parameters and "
             "inputs; the loss, the gradients' reduction and the optimizer stay in f32");
}

void emulatePrecision(CompileState& s) {
  bool changed = false;
  for (const auto& g : s.programModule().functions())
    changed = emulateBf16(*g) || changed;
  if (changed)
    s.log.line("precision bf16: the CPU runtime has no bf16 kernels yet, so each bf16 op runs "
               "its f32 kernel on its operands widened to f32 and rounds its results to bf16 "
               "(the values stored between ops are bf16)");
}

} // namespace shardc
