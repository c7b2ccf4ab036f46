// Numeric tests of softmax, log_softmax and layer_norm: hand-worked rows, non-last axes,
// extreme inputs, and PyTorch fixtures.
#include "OpTestUtil.h"

#include <cmath>

using namespace shardc;
using namespace shardc::testing;

namespace {

const double kLn2 = std::log(2.0), kLn3 = std::log(3.0);

TEST(NormOpTest, SoftmaxLastAxis) {
  // exp of [0, ln 2, ln 3] is [1, 2, 3], so softmax is [1, 2, 3] / 6.
  Tensor x = f64({1, 3}, {0, kLn2, kLn3});
  EXPECT_TRUE(allClose(run1("softmax", {x}), f64({1, 3}, {1.0 / 6, 2.0 / 6, 3.0 / 6}), 1e-15, 0));
  EXPECT_TRUE(
      allClose(run1("log_softmax", {x}), f64({1, 3}, {-std::log(6.0), -kLn3, -kLn2}), 1e-15, 0));
}

TEST(NormOpTest, SoftmaxNonLastAxis) {
  // Columns of [[0, 1], [ln 3, 1]]: [1, 3] / 4 and [1, 1] / 2.
  Tensor x = f64({2, 2}, {0, 1, kLn3, 1});
  EXPECT_TRUE(
      allClose(run1("softmax", {x}, {{"axis", 0}}), f64({2, 2}, {0.25, 0.5, 0.75, 0.5}), 1e-15, 0));
  EXPECT_TRUE(allClose(run1("log_softmax", {x}, {{"axis", -2}}),
                       f64({2, 2}, {-std::log(4.0), -kLn2, std::log(0.75), -kLn2}), 1e-15, 0));
  // Middle axis of a rank-3 tensor: pairs (x[i,0,k], x[i,1,k]) = (0, ln 3) or (ln 3, 0).
  Tensor y = f64({2, 2, 2}, {0, kLn3, kLn3, 0, kLn3, 0, 0, kLn3});
  EXPECT_TRUE(allClose(run1("softmax", {y}, {{"axis", 1}}),
                       f64({2, 2, 2}, {0.25, 0.75, 0.75, 0.25, 0.75, 0.25, 0.25, 0.75}), 1e-15, 0));
}

TEST(NormOpTest, SoftmaxIsStable) {
  // Large inputs do not overflow, and -inf gets probability 0 (log-probability -inf).
  Tensor x = f32({3}, {1000, 1000, -kInf});
  EXPECT_TRUE(same(run1("softmax", {x}), f32({3}, {0.5, 0.5, 0})));
  EXPECT_TRUE(allClose(run1("log_softmax", {x}), f32({3}, {-kLn2, -kLn2, -kInf}), 1e-7, 0));
  EXPECT_TRUE(same(run1("softmax", {f32({2}, {-1e4, 0})}), f32({2}, {0, 1})));
  // A NaN poisons its whole row, as in PyTorch.
  EXPECT_TRUE(
      same(run1("softmax", {f32({2, 2}, {kNaN, 0, 1, 1})}), f32({2, 2}, {kNaN, kNaN, 0.5, 0.5})));
}

TEST(NormOpTest, SoftmaxRoundsToF16) {
  // 1/3 rounds to the f16 0x3555 = 0.333251953125.
  EXPECT_TRUE(same(run1("softmax", {typed(DType::F16, {3}, {0, 0, 0})}),
                   typed(DType::F16, {3}, {0.333251953125, 0.333251953125, 0.333251953125})));
  EXPECT_NE(shapeError("softmax", {{DType::I64, {3}}}), "");
  EXPECT_NE(shapeError("softmax", {{DType::F32, {3}}}, {{"axis", 1}}), "");
}

TEST(NormOpTest, SoftmaxMatchesTorch) {
  Tensor x = fixture("softmax_x");
  EXPECT_TRUE(
      allClose(run1("softmax", {x}, {{"axis", 1}}), fixture("softmax_axis1_out"), 1e-5, 1e-6));
  EXPECT_TRUE(allClose(run1("softmax", {x}), fixture("softmax_last_out"), 1e-5, 1e-6));
  EXPECT_TRUE(allClose(run1("log_softmax", {x}, {{"axis", 1}}), fixture("log_softmax_axis1_out"),
                       1e-5, 1e-6));
  EXPECT_TRUE(allClose(run1("log_softmax", {x}, {{"axis", -1}}), fixture("log_softmax_last_out"),
                       1e-5, 1e-6));
}

TEST(NormOpTest, LayerNormWithoutScaleOrBias) {
  // [1, 2, 3, 4]: mean 2.5, biased variance 1.25.
  Tensor x = f64({1, 4}, {1, 2, 3, 4});
  double s = std::sqrt(1.25);
  EXPECT_TRUE(allClose(run1("layer_norm", {x}, {{"epsilon", 0.0}}),
                       f64({1, 4}, {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}), 1e-15, 0));
  // epsilon adds to the variance: sqrt(1.25 + 1) = 1.5.
  EXPECT_TRUE(allClose(run1("layer_norm", {x}, {{"epsilon", 1.0}}),
                       f64({1, 4}, {-1, -1.0 / 3, 1.0 / 3, 1}), 1e-15, 0));
  // Default epsilon 1e-5: [0, 2] has mean 1 and variance 1.
  double d = 1 / std::sqrt(1 + 1e-5);
  EXPECT_TRUE(allClose(run1("layer_norm", {f64({2}, {0, 2})}), f64({2}, {-d, d}), 1e-15, 0));
}

TEST(NormOpTest, LayerNormWithScaleAndBias) {
  Tensor x = f64({1, 4}, {1, 2, 3, 4});
  Tensor scale = f64({4}, {1, 2, 1, 2}), bias = f64({4}, {0, 0, 1, 1});
  // Normalized (epsilon 1): [-1, -1/3, 1/3, 1]; then * scale + bias.
  EXPECT_TRUE(allClose(run1("layer_norm", {x, scale, bias}, {{"epsilon", 1.0}}),
                       f64({1, 4}, {-1, -2.0 / 3, 4.0 / 3, 3}), 1e-15, 0));
  // Scale only, normalizing over the last two dims (axis 1 of [2,2,2]); a constant row
  // normalizes to 0.
  Tensor y = f64({2, 2, 2}, {1, 2, 3, 4, 10, 10, 10, 10});
  EXPECT_TRUE(
      allClose(run1("layer_norm", {y, f64({2, 2}, {1, 2, 3, 4})}, {{"axis", 1}, {"epsilon", 1.0}}),
               f64({2, 2, 2}, {-1, -2.0 / 3, 1, 4, 0, 0, 0, 0}), 1e-15, 1e-15));
  EXPECT_NE(shapeError("layer_norm", {{DType::F32, {2, 4}}, {DType::F32, {2, 4}}}), "");
  EXPECT_NE(shapeError("layer_norm", {{DType::F32, {2, 4}}, {DType::F64, {4}}}), "");
  EXPECT_NE(shapeError("layer_norm", {{DType::F32, {4}}}, {{"epsilon", -1.0}}), "");
}

TEST(NormOpTest, LayerNormMatchesTorch) {
  // PyTorch computes mean and variance in float32; a few ulps of difference.
  Tensor x = fixture("layer_norm_x");
  EXPECT_TRUE(
      allClose(run1("layer_norm", {x, fixture("layer_norm_scale"), fixture("layer_norm_bias")},
                    {{"axis", -2}}),
               fixture("layer_norm_out"), 1e-5, 1e-5));
  EXPECT_TRUE(allClose(run1("layer_norm", {x}), fixture("layer_norm_plain_out"), 1e-5, 1e-5));
}

} // namespace
