// The lane kernels (lib/exec/KernelsElementwise.cpp) against the interpreter, op by op.
#include "TestUtil.h"

#include "shardc/exec/ExecPlan.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"

#include <gtest/gtest.h>

using namespace shardc;
using namespace shardc::testing;

namespace {

// Values in [-4.1, 4.04], every argument its own pattern: negative, fractional and past 1 in
// magnitude, so floor, ceil, log, sqrt, exp and pow each meet their edge cases.
std::vector<Tensor> spreadArgs(const Function& f) {
  std::vector<Tensor> args;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    Tensor t(f.argument(i)->type());
    for (int64_t k = 0; k < t.numel(); ++k)
      t.setDouble(k, 0.37 * static_cast<double>((k * 7 + static_cast<int64_t>(i)) % 23) - 4.1);
    args.push_back(std::move(t));
  }
  return args;
}

} // namespace

// Every op of the lane kernels' table that takes f32 operands and no attribute, alone in its
// step and fused behind another lane op, against the interpreter.
TEST(LaneKernelTest, EveryLaneOpMatchesTheInterpreter) {
  int tested = 0;
  for (const auto& def : OpRegistry::get().all()) {
    if (nativeKernelFamily(*def) != "lanes" || !def->attrs.empty() || def->minOperands < 1 ||
        def->minOperands > 2 || !(def->element.unaryF || def->element.binaryF))
      continue;
    std::string args = "input %a: f32[3,37]", operands = "%a";
    if (def->minOperands == 2) {
      args += ", input %b: f32[3,37]";
      operands += ", %b";
    }
    for (bool fused : {false, true}) {
      std::string ir = "func @f(" + args + ") -> (r: f32[3,37]) {\n";
      std::string first = operands;
      if (fused) {
        ir += "  %s = mul(%a, %a) : f32[3,37]\n";
        first = "%s" + operands.substr(2);
      }
      ir += "  %r = " + def->name + "(" + first + ") : f32[3,37]\n  return %r\n}\n";
      auto m = parseIR(ir);
      ASSERT_TRUE(m) << ir;
      const Function& f = *m->functions()[0];
      ExecPlan plan = buildPlan(f);
      ASSERT_EQ(plan.steps.size(), 1u) << ir;
      EXPECT_FALSE(plan.steps[0].reference) << def->name;
      SCOPED_TRACE(def->name + (fused ? " after mul" : ""));
      std::vector<Tensor> args = spreadArgs(f);
      Tensor want = interpret(f, args)[0], mag = interpret(f, absoluteValues(args))[0];
      EXPECT_TRUE(nearReference(runCompiled(f, args)[0], want, mag));
    }
    ++tested;
  }
  EXPECT_GE(tested, 20);
}
