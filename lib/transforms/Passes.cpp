#include "shardc/transforms/Passes.h"

namespace shardc {

const std::vector<PassInfo>& allPasses() {
  static const std::vector<PassInfo> passes = {
      {"canonicalize", "fold constants and simplify identity and composed shape ops", canonicalize},
      {"inline", "replace every call by its callee's ops", inlineCalls},
      {"dce", "remove ops whose results are unused", eliminateDeadCode},
      {"cse", "merge identical ops", eliminateCommonSubexpressions},
      {"raise-gelu", "replace GELU's tanh approximation spelled out in elementwise ops by gelu",
       raiseGelu},
      {"fold-product-transposes",
       "turn a transpose of a matmul's product (through batch sums and unit-dim reshapes) into "
       "the product of the swapped, transposed operands",
       foldProductTransposes},
      {"rematerialize",
       "recompute large elementwise values made from iotas and much smaller operands in each "
       "reader instead of storing them",
       rematerialize},
      {"localize-constants",
       "make a device's piece of an iota or of a constant whose pieces are all the same directly "
       "instead of slicing the whole one",
       localizeConstants},
      {"bf16", "compute in bf16: every f32 operand read as bf16, the results cast back",
       computeInBf16},
      {"emulate-bf16",
       "run bf16 ops but matmuls and data movement on f32 kernels: bf16 operands widened per "
       "reader, results rounded to bf16",
       emulateBf16},
  };
  return passes;
}

const PassInfo* findPass(const std::string& name) {
  for (const auto& p : allPasses())
    if (p.name == name) return &p;
  return nullptr;
}

} // namespace shardc
