// The precision stages (--precision bf16): the model computes in bf16 before its training step
// is built, and the program the PEF runs gets f32 kernels for the bf16 ops that the CPU runtime
// has no bf16 kernel for (all but matmuls and the ops that only move values).
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
    s.log.line("precision bf16: matmuls run on bf16 kernels (oneDNN's bf16 GEMM where the CPU "
               "has AVX512-BF16 or AMX, else the f32 GEMM on widened copies: `run --stats` says "
               "which); the other bf16 ops but data movement run their f32 kernels on operands "
               "widened to f32 and round their results to bf16 (the values stored between ops "
               "are bf16)");
}

} // namespace shardc
