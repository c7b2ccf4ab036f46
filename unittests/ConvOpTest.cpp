// Numeric tests of conv2d, max_pool2d, avg_pool2d and their backward ops (NCHW; pads = [top,
// left, bottom, right]).
#include "OpTestUtil.h"

using namespace shardc;
using namespace shardc::testing;

namespace {

using Ints = std::vector<int64_t>;

// 1..9 as a [1,1,3,3] image.
Tensor image3x3() {
  return f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST(ConvOpTest, Conv2dPlainAndBias) {
  // The 2x2 filter [1 0; 0 1] adds each pixel to its lower-right neighbour.
  Tensor w = f32({1, 1, 2, 2}, {1, 0, 0, 1});
  EXPECT_TRUE(same(run1("conv2d", {image3x3(), w}), f32({1, 1, 2, 2}, {6, 8, 12, 14})));
  EXPECT_TRUE(
      same(run1("conv2d", {image3x3(), w, f32({1}, {10})}), f32({1, 1, 2, 2}, {16, 18, 22, 24})));
}

TEST(ConvOpTest, Conv2dStridePadding) {
  // All-ones 2x2 filter, pad 1 on every side, stride 2: windows start at rows/cols -1 and 1.
  Tensor ones = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  AttrDict a = {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}};
  EXPECT_TRUE(same(run1("conv2d", {image3x3(), ones}, a), f32({1, 1, 2, 2}, {1, 5, 11, 28})));
  // Asymmetric pads: only bottom and right, stride 1 -> 3x3 output of 2x2 window sums.
  AttrDict b = {{"pads", Ints{0, 0, 1, 1}}};
  EXPECT_TRUE(same(run1("conv2d", {image3x3(), ones}, b),
                   f32({1, 1, 3, 3}, {12, 16, 9, 24, 28, 15, 15, 17, 9})));
}

TEST(ConvOpTest, Conv2dDilation) {
  // Dilation 2 spreads the 2x2 ones filter over the four corners: 1 + 3 + 7 + 9.
  Tensor ones = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  EXPECT_TRUE(same(run1("conv2d", {image3x3(), ones}, {{"dilations", Ints{2, 2}}}),
                   f32({1, 1, 1, 1}, {20})));
  // Dilation along W only: taps (r, c) and (r, c + 2), rows r and r + 1.
  EXPECT_TRUE(same(run1("conv2d", {image3x3(), ones}, {{"dilations", Ints{1, 2}}}),
                   f32({1, 1, 2, 1}, {1 + 3 + 4 + 6, 4 + 6 + 7 + 9})));
}

TEST(ConvOpTest, Conv2dChannelsAndGroups) {
  // x: two 1x1 channels [2, 3].
  Tensor x = f32({1, 2, 1, 1}, {2, 3});
  // groups = 1: each filter sees both channels.
  EXPECT_TRUE(
      same(run1("conv2d", {x, f32({2, 2, 1, 1}, {1, 1, 1, -1})}), f32({1, 2, 1, 1}, {5, -1})));
  // groups = 2: filter 0 sees channel 0, filter 1 sees channel 1.
  EXPECT_TRUE(same(run1("conv2d", {x, f32({2, 1, 1, 1}, {10, 100})}, {{"groups", 2}}),
                   f32({1, 2, 1, 1}, {20, 300})));
  // groups = 2 with 4 filters (2 per group) and bias; batch of 2.
  Tensor xb = f32({2, 2, 1, 1}, {2, 3, -1, 1});
  Tensor w = f32({4, 1, 1, 1}, {1, 2, 3, 4}), bias = f32({4}, {0, 0, 0, 100});
  EXPECT_TRUE(same(run1("conv2d", {xb, w, bias}, {{"groups", 2}}),
                   f32({2, 4, 1, 1}, {2, 4, 9, 112, -1, -2, 3, 104})));
  EXPECT_NE(shapeError("conv2d", {{DType::F32, {1, 3, 4, 4}}, {DType::F32, {2, 1, 1, 1}}},
                       {{"groups", 2}}),
            "");
  EXPECT_NE(shapeError("conv2d",
                       {{DType::F32, {1, 2, 4, 4}}, {DType::F32, {2, 2, 1, 1}}, {DType::F32, {3}}}),
            "");
  EXPECT_NE(shapeError("conv2d", {{DType::F32, {1, 1, 2, 2}}, {DType::F32, {1, 1, 3, 3}}}), "");
}

TEST(ConvOpTest, Conv2dMatchesTorch) {
  // Sums of 18 products of |v| <= 1: PyTorch accumulates in float32 in its own order, the
  // kernel in double, so allow ~1e-5 absolute for cancellation near zero.
  AttrDict a = {{"strides", Ints{2, 1}},
                {"pads", Ints{1, 2, 1, 2}},
                {"dilations", Ints{1, 2}},
                {"groups", 2}};
  EXPECT_TRUE(allClose(
      run1("conv2d", {fixture("conv2d_x"), fixture("conv2d_w"), fixture("conv2d_bias")}, a),
      fixture("conv2d_out"), 1e-5, 1e-5));
  EXPECT_TRUE(allClose(run1("conv2d", {fixture("conv2d_asym_x"), fixture("conv2d_asym_w")},
                            {{"strides", Ints{1, 2}}, {"pads", Ints{0, 1, 2, 0}}}),
                       fixture("conv2d_asym_out"), 1e-5, 1e-5));
}

TEST(ConvOpTest, MaxPoolPaddingNeverWins) {
  // All-negative input, 2x2 windows with pad 1: zero padding must not be the maximum.
  Tensor x = f32({1, 1, 2, 2}, {-1, -2, -3, -4});
  AttrDict a = {{"kernel", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  EXPECT_TRUE(
      same(run1("max_pool2d", {x}, a), f32({1, 1, 3, 3}, {-1, -1, -2, -1, -1, -2, -3, -3, -4})));
  // Stride 2 over the 3x3 image: windows rows/cols {0,1} and {2}.
  AttrDict b = {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{0, 0, 1, 1}}};
  EXPECT_TRUE(same(run1("max_pool2d", {image3x3()}, b), f32({1, 1, 2, 2}, {5, 6, 8, 9})));
  EXPECT_NE(shapeError("max_pool2d", {{DType::F32, {1, 1, 3, 3}}},
                       {{"kernel", Ints{2, 2}}, {"pads", Ints{2, 0, 0, 0}}}),
            "");
}

TEST(ConvOpTest, MaxPoolPropagatesNaN) {
  Tensor x = f32({1, 1, 2, 2}, {1, kNaN, 3, 4});
  EXPECT_TRUE(
      same(run1("max_pool2d", {x}, {{"kernel", Ints{1, 2}}}), f32({1, 1, 2, 1}, {kNaN, 4})));
}

TEST(ConvOpTest, AvgPoolCountIncludePad) {
  // [1 2; 3 4], 2x2 windows, pad 1, stride 1 -> 3x3.
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  AttrDict excl = {{"kernel", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  EXPECT_TRUE(
      same(run1("avg_pool2d", {x}, excl), f32({1, 1, 3, 3}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4})));
  AttrDict incl = excl;
  incl.set("count_include_pad", true);
  EXPECT_TRUE(same(run1("avg_pool2d", {x}, incl),
                   f32({1, 1, 3, 3}, {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1})));
}

TEST(ConvOpTest, AvgPoolAsymmetricPads) {
  // 3x3 image, pads bottom/right 1, 2x2 windows, stride 2: the right and bottom windows
  // hang over the padding.
  AttrDict a = {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{0, 0, 1, 1}}};
  EXPECT_TRUE(same(run1("avg_pool2d", {image3x3()}, a), f32({1, 1, 2, 2}, {3, 4.5, 7.5, 9})));
  a.set("count_include_pad", true);
  EXPECT_TRUE(same(run1("avg_pool2d", {image3x3()}, a), f32({1, 1, 2, 2}, {3, 2.25, 3.75, 2.25})));
}

TEST(ConvOpTest, PoolingMatchesTorch) {
  Tensor x = fixture("pool_x");
  // max is exact; averages of 9 values differ by float32 rounding of the sum.
  EXPECT_TRUE(
      same(run1("max_pool2d", {x},
                {{"kernel", Ints{3, 2}}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 1, 1, 1}}}),
           fixture("max_pool2d_out")));
  EXPECT_TRUE(
      same(run1("max_pool2d", {x},
                {{"kernel", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"dilations", Ints{2, 3}}}),
           fixture("max_pool2d_dil_out")));
  AttrDict avg = {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  EXPECT_TRUE(allClose(run1("avg_pool2d", {x}, avg), fixture("avg_pool2d_excl_out"), 1e-5, 1e-6));
  avg.set("count_include_pad", true);
  EXPECT_TRUE(allClose(run1("avg_pool2d", {x}, avg), fixture("avg_pool2d_incl_out"), 1e-5, 1e-6));
}

// The gradient of sum(dy * conv2d(x, w)) in the general case: groups 2 with 2 filters each,
// strides [2, 1], asymmetric pads, dilations [1, 2], batch 2. Integer values keep every sum
// exact. Expected dx and dw from PyTorch autograd (float64; the asymmetric pads via F.pad).
struct ConvGradCase {
  AttrDict attrs = {{"groups", 2},
                    {"strides", Ints{2, 1}},
                    {"pads", Ints{1, 0, 0, 1}},
                    {"dilations", Ints{1, 2}}};
  // x = arange(48) % 5 - 2, w = arange(16) % 3 - 1, dy = arange(48) % 7 - 3.
  Tensor x = f32({2, 2, 3, 4}, {-2, -1, 0, 1,  2,  -2, -1, 0, 1,  2,  -2, -1, 0, 1,  2,  -2,
                                -1, 0,  1, 2,  -2, -1, 0,  1, 2,  -2, -1, 0,  1, 2,  -2, -1,
                                0,  1,  2, -2, -1, 0,  1,  2, -2, -1, 0,  1,  2, -2, -1, 0});
  Tensor w = f32({4, 1, 2, 2}, {-1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1});
  Tensor dy = f32({2, 4, 2, 3}, {-3, -2, -1, 0,  1,  2,  3,  -3, -2, -1, 0,  1,  2,  3,  -3, -2,
                                 -1, 0,  1,  2,  3,  -3, -2, -1, 0,  1,  2,  3,  -3, -2, -1, 0,
                                 1,  2,  3,  -3, -2, -1, 0,  1,  2,  3,  -3, -2, -1, 0,  1,  2});
  Tensor dx = f32({2, 2, 3, 4}, {-6, 1,  4,  2, 0,  -1, -3, 0, 1, 1, 1, -1, 1,  2, 4, 1,
                                 1,  1,  3,  1, -3, -2, 0,  1, 1, 1, 1, -1, -3, 3, 4, 3,
                                 1,  -6, -2, 3, -3, -2, 0,  1, 1, 1, 0, -2, 0,  1, 3, 1});
  Tensor dw = f32({4, 1, 2, 2}, {-3, -3, -5, 9, 11, -6, -12, -2, -2, -2, -1, -8, 1, -6, 14, -11});
};

TEST(ConvOpTest, Conv2dBackwardInput) {
  // Filter [1 0; 0 1] on the 3x3 image: pixel (i, j) feeds output (i, j) through w[0,0] and
  // output (i-1, j-1) through w[1,1], so dx[i][j] = dy[i][j] + dy[i-1][j-1] where in range.
  Tensor w = f32({1, 1, 2, 2}, {1, 0, 0, 1}), dy = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  AttrDict a = {{"input_shape", Ints{1, 1, 3, 3}}};
  EXPECT_TRUE(same(run1("conv2d_backward_input", {dy, w}, a),
                   f32({1, 1, 3, 3}, {1, 2, 0, 3, 5, 2, 0, 3, 4})));
  // Stride 2 over a 3x3 input with a 1x1 filter: only the even pixels were read.
  AttrDict s = {{"input_shape", Ints{1, 1, 3, 3}}, {"strides", Ints{2, 2}}};
  EXPECT_TRUE(same(run1("conv2d_backward_input", {dy, f32({1, 1, 1, 1}, {10})}, s),
                   f32({1, 1, 3, 3}, {10, 0, 20, 0, 0, 0, 30, 0, 40})));
  ConvGradCase c;
  AttrDict g = c.attrs;
  g.set("input_shape", Ints{2, 2, 3, 4});
  EXPECT_TRUE(same(run1("conv2d_backward_input", {c.dy, c.w}, g), c.dx));
}

TEST(ConvOpTest, Conv2dBackwardFilter) {
  // dy all ones: dw[ky][kx] is the sum of the 2x2 block of the image at offset (ky, kx).
  AttrDict a = {{"filter_shape", Ints{1, 1, 2, 2}}};
  EXPECT_TRUE(same(run1("conv2d_backward_filter", {image3x3(), f32({1, 1, 2, 2}, {1, 1, 1, 1})}, a),
                   f32({1, 1, 2, 2}, {12, 16, 24, 28})));
  ConvGradCase c;
  AttrDict g = c.attrs;
  g.set("filter_shape", Ints{4, 1, 2, 2});
  EXPECT_TRUE(same(run1("conv2d_backward_filter", {c.x, c.dy}, g), c.dw));
  // f64 in, f64 out.
  EXPECT_TRUE(
      same(run1("conv2d_backward_filter",
                {typed(DType::F64, {1, 1, 1, 2}, {0.5, 2}), typed(DType::F64, {1, 1, 1, 1}, {3})},
                {{"filter_shape", Ints{1, 1, 1, 2}}}),
           typed(DType::F64, {1, 1, 1, 2}, {1.5, 6})));
}

TEST(ConvOpTest, Conv2dBackwardShapeRules) {
  // input_shape/filter_shape pick among the inputs that give dy's shape (stride 2: 5 or 6).
  EXPECT_EQ(shapeError("conv2d_backward_input",
                       {{DType::F32, {1, 1, 2, 2}}, {DType::F32, {1, 1, 2, 2}}},
                       {{"input_shape", Ints{1, 1, 5, 4}}, {"strides", Ints{2, 2}}}),
            "");
  EXPECT_EQ(shapeError("conv2d_backward_input",
                       {{DType::F32, {1, 1, 2, 2}}, {DType::F32, {1, 1, 2, 2}}},
                       {{"input_shape", Ints{1, 1, 3, 3}}, {"strides", Ints{2, 2}}}),
            "dy must be f32[1,1,1,1], the conv2d result for x f32[1,1,3,3] and w f32[1,1,2,2], "
            "got f32[1,1,2,2]");
  EXPECT_EQ(shapeError("conv2d_backward_filter",
                       {{DType::F32, {1, 2, 3, 3}}, {DType::F32, {1, 4, 2, 2}}},
                       {{"filter_shape", Ints{4, 2, 2}}}),
            "filter_shape must be 4 non-negative dims [F,C/groups,KH,KW], got [4,2,2]");
}

TEST(ConvOpTest, MaxPoolBackwardMatchesTorch) {
  // x: (randperm(20) - 10) / 2, distinct; 3x3 windows, stride 2, pad 1 overlap, so x = 4.5
  // collects the gradient of four windows. Expected from PyTorch autograd.
  Tensor x = f32({1, 1, 4, 5}, {2.5, 3.5, -0.5, 1, -1.5, -4.5, 4.5, -3.5, -3, 0.5,
                                4,   -1,  -4,   2, 3,    -5,   0,   1.5,  -2, -2.5});
  AttrDict a = {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  EXPECT_TRUE(
      same(run1("max_pool2d_backward", {x, f32({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6})}, a),
           f32({1, 1, 4, 5}, {0, 0, 0, 3, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0})));
  // Dilation 2, stride 1, pad 1: dy = 1..20.
  AttrDict d = {{"kernel", Ints{2, 2}}, {"dilations", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  std::vector<double> dy(20);
  for (size_t i = 0; i < dy.size(); ++i)
    dy[i] = static_cast<double>(i + 1);
  EXPECT_TRUE(same(
      run1("max_pool2d_backward", {x, f32({1, 1, 4, 5}, dy)}, d),
      f32({1, 1, 4, 5}, {0, 14, 0, 0, 0, 0, 28, 2, 5, 4, 24, 16, 0, 48, 28, 0, 0, 26, 15, 0})));
}

TEST(ConvOpTest, MaxPoolBackwardTiesNaNAndPadding) {
  // Ties: the first maximum of each window (row by row) gets it, as in PyTorch. 2x2 windows
  // with pad 1 over a constant 2x2 input: the 9 windows' first taps.
  AttrDict a = {{"kernel", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  EXPECT_TRUE(same(
      run1("max_pool2d_backward",
           {f32({1, 1, 2, 2}, {1, 1, 1, 1}), f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}, a),
      f32({1, 1, 2, 2}, {12, 9, 15, 9})));
  // A window with NaN has the forward result NaN; its gradient goes to the first NaN
  // (PyTorch's kernel gives it to the last one).
  EXPECT_TRUE(same(run1("max_pool2d_backward",
                        {f32({1, 1, 1, 4}, {1, kNaN, 3, kNaN}), f32({1, 1, 1, 1}, {5})},
                        {{"kernel", Ints{1, 4}}}),
                   f32({1, 1, 1, 4}, {0, 5, 0, 0})));
  // -inf is a maximum like any other.
  EXPECT_TRUE(
      same(run1("max_pool2d_backward", {f32({1, 1, 1, 2}, {-kInf, -kInf}), f32({1, 1, 1, 1}, {5})},
                {{"kernel", Ints{1, 2}}}),
           f32({1, 1, 1, 2}, {5, 0})));
  // With dilation 2 and pad 1 the only window of a 1x1 input lies in the padding: the
  // forward gives -inf and no gradient flows.
  AttrDict pad = {{"kernel", Ints{2, 2}}, {"dilations", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  EXPECT_TRUE(same(run1("max_pool2d", {f32({1, 1, 1, 1}, {5})}, pad), f32({1, 1, 1, 1}, {-kInf})));
  EXPECT_TRUE(
      same(run1("max_pool2d_backward", {f32({1, 1, 1, 1}, {5}), f32({1, 1, 1, 1}, {7})}, pad),
           f32({1, 1, 1, 1}, {0})));
  EXPECT_NE(shapeError("max_pool2d_backward",
                       {{DType::F32, {1, 1, 4, 4}}, {DType::F32, {1, 1, 3, 3}}},
                       {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}}),
            "");
}

TEST(ConvOpTest, AvgPoolBackward) {
  // The 3x3-window, stride-2, pad-1 pooling of a 4x5 input; dy = 36 * (1..6), so that every
  // share dy / divisor (divisors 4, 6, 9) is an integer. Expected from PyTorch autograd.
  AttrDict a = {{"kernel", Ints{3, 3}},
                {"strides", Ints{2, 2}},
                {"pads", Ints{1, 1, 1, 1}},
                {"input_shape", Ints{1, 1, 4, 5}}};
  Tensor dy = f32({1, 1, 2, 3}, {36, 72, 108, 144, 180, 216});
  EXPECT_TRUE(same(run1("avg_pool2d_backward", {dy}, a),
                   f32({1, 1, 4, 5}, {9,  21, 12, 39, 27, 33, 65, 32, 95, 63,
                                      24, 44, 20, 56, 36, 24, 44, 20, 56, 36})));
  a.set("count_include_pad", true);
  EXPECT_TRUE(same(run1("avg_pool2d_backward", {dy}, a),
                   f32({1, 1, 4, 5}, {4,  12, 8,  20, 12, 20, 48, 28, 64, 36,
                                      16, 36, 20, 44, 24, 16, 36, 20, 44, 24})));
}

TEST(ConvOpTest, AvgPoolBackwardDilatedAsymmetric) {
  // 2x2 windows, dilations [2, 1], pads [1, 0, 0, 1], strides [1, 2] over a 3x4 input, which
  // PyTorch's avg_pool2d cannot express; expected from a direct numpy loop over a zero-padded
  // canvas. Row 0 of the taps of the top windows lies in the padding.
  AttrDict a = {{"kernel", Ints{2, 2}},
                {"dilations", Ints{2, 1}},
                {"pads", Ints{1, 0, 0, 1}},
                {"strides", Ints{1, 2}},
                {"input_shape", Ints{1, 1, 3, 4}}};
  Tensor dy = f32({1, 1, 2, 2}, {12, 24, 36, 48});
  EXPECT_TRUE(same(run1("avg_pool2d_backward", {dy}, a),
                   f32({1, 1, 3, 4}, {9, 9, 12, 12, 6, 6, 12, 12, 9, 9, 12, 12})));
  a.set("count_include_pad", true);
  EXPECT_TRUE(same(run1("avg_pool2d_backward", {dy}, a),
                   f32({1, 1, 3, 4}, {9, 9, 12, 12, 3, 3, 6, 6, 9, 9, 12, 12})));
  // The input shape must pool to dy's shape.
  a.set("input_shape", Ints{1, 1, 5, 4});
  EXPECT_EQ(shapeError("avg_pool2d_backward", {dy.type()}, a),
            "dy must be f32[1,1,4,2], the avg_pool2d result for x f32[1,1,5,4], got f32[1,1,2,2]");
}

} // namespace
