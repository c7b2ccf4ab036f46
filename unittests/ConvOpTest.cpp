// Numeric tests of conv2d, max_pool2d and avg_pool2d (NCHW; pads = [top, left, bottom, right]).
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

} // namespace
