// Steps that read only parameters no result is tied to (an inference program's weights) and
// constants run at the first run and again only when such a parameter comes in a new buffer:
// checked against the interpreter across runs, with new weights and with weights a training
// step updates (never held).
#include "PlanTestUtil.h"

#include "shardc/exec/CompiledFunction.h"

#include <gtest/gtest.h>

using namespace shardc;
using namespace shardc::testing;

namespace {

// The matmul of a bf16 copy of the weights: the cast of %w is held.
const char* kInference = R"(
func @f(input %x: f32[4,8], param %w: f32[8,6]) -> (y: f32[4,6]) {
  %wb = cast(%w) {to = bf16} : bf16[8,6]
  %xb = cast(%x) {to = bf16} : bf16[4,8]
  %p = matmul(%xb, %wb) : bf16[4,6]
  %y = cast(%p) {to = f32} : f32[4,6]
  return %y
}
)";

Tensor patterned(const TensorType& t, double scale) {
  Tensor out(t);
  for (int64_t i = 0; i < out.numel(); ++i)
    out.setDouble(i, scale * static_cast<double>((i * 7) % 11) - 0.4);
  return out;
}

TEST(HeldStepsTest, NewWeightsInANewTensorAreReadAgain) {
  Planned p = plan(kInference);
  ASSERT_TRUE(p.m);
  CompiledFunction cf(p.f(), p.plan, 2);
  std::vector<Tensor> args = {patterned(p.f().argument(0)->type(), 0.1),
                              patterned(p.f().argument(1)->type(), 0.05)};
  Tensor first = cf.run(args)[0];
  EXPECT_TRUE(allClose(first, interpret(p.f(), args)[0], 0, 0));
  EXPECT_TRUE(allClose(cf.run(args)[0], first, 0, 0));  // the same buffers: held
  args[0] = patterned(p.f().argument(0)->type(), -0.2); // a new input is always read
  EXPECT_TRUE(allClose(cf.run(args)[0], interpret(p.f(), args)[0], 0, 0));
  args[1] = patterned(p.f().argument(1)->type(), 0.3); // new weights, in a new tensor
  Tensor again = cf.run(args)[0];
  EXPECT_TRUE(allClose(again, interpret(p.f(), args)[0], 0, 0));
  EXPECT_FALSE(allClose(again, first, 0, 0));
}

// A parameter a result is tied to changes every step: nothing that reads it is held.
TEST(HeldStepsTest, UpdatedWeightsAreNeverHeld) {
  Planned p = plan(R"(
func @g(input %x: f32[4,8], param %w: f32[8,6]) -> (y: f32[4,6], w2: f32[8,6] tied %w) {
  %wb = cast(%w) {to = bf16} : bf16[8,6]
  %xb = cast(%x) {to = bf16} : bf16[4,8]
  %p = matmul(%xb, %wb) : bf16[4,6]
  %y = cast(%p) {to = f32} : f32[4,6]
  %c = constant() {value = dense<f32[], [0.5]>} : f32[]
  %s = mul(%w, %c) : f32[8,6]
  %w2 = sub(%w, %s) : f32[8,6]
  return %y, %w2
}
)");
  ASSERT_TRUE(p.m);
  CompiledFunction cf(p.f(), p.plan, 2);
  std::vector<Tensor> args = {patterned(p.f().argument(0)->type(), 0.1),
                              patterned(p.f().argument(1)->type(), 0.05)};
  std::vector<Tensor> ref = args;
  for (int step = 0; step < 3; ++step) {
    std::vector<Tensor> want = interpret(p.f(), ref);
    EXPECT_TRUE(allClose(cf.run(args)[0], want[0], 0, 0)) << "step " << step;
    ref[1] = want[1];
  }
}

} // namespace
