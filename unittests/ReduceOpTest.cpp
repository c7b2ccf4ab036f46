// Numeric tests of reduce_sum/mean/max/min and argmax: several axes, negative axes,
// keepdims, NaN propagation, integer dtypes, and numpy fixtures.
#include "OpTestUtil.h"

using namespace shardc;
using namespace shardc::testing;

namespace {

AttrDict axes(std::vector<int64_t> a, bool keepdims = false) {
  return {{"axes", std::move(a)}, {"keepdims", keepdims}};
}

// 0..11 as [2,2,3]: element (i,j,k) = 6i + 3j + k.
Tensor iota223() {
  return f32({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

TEST(ReduceOpTest, SumOneAxis) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(same(run1("reduce_sum", {x}, axes({0})), f32({3}, {5, 7, 9})));
  EXPECT_TRUE(same(run1("reduce_sum", {x}, axes({1})), f32({2}, {6, 15})));
  EXPECT_TRUE(same(run1("reduce_sum", {x}, axes({-1}, true)), f32({2, 1}, {6, 15})));
  EXPECT_TRUE(same(run1("reduce_sum", {x}, axes({-2}, true)), f32({1, 3}, {5, 7, 9})));
}

TEST(ReduceOpTest, SumSeveralAxes) {
  // Over i and k: j = 0 -> 0+1+2+6+7+8 = 24, j = 1 -> 3+4+5+9+10+11 = 42.
  EXPECT_TRUE(same(run1("reduce_sum", {iota223()}, axes({0, 2})), f32({2}, {24, 42})));
  EXPECT_TRUE(
      same(run1("reduce_sum", {iota223()}, axes({-1, -3}, true)), f32({1, 2, 1}, {24, 42})));
  // All axes gives a scalar; no axes is the identity.
  EXPECT_TRUE(same(run1("reduce_sum", {iota223()}, axes({0, 1, 2})), f32({}, {66})));
  EXPECT_TRUE(same(run1("reduce_sum", {iota223()}, axes({})), iota223()));
  EXPECT_NE(shapeError("reduce_sum", {{DType::F32, {2, 3}}}, axes({2})), "");
  EXPECT_NE(shapeError("reduce_sum", {{DType::F32, {2, 3}}}, axes({1, -1})), "");
}

TEST(ReduceOpTest, SumIntegers) {
  EXPECT_TRUE(same(run1("reduce_sum", {i64({2, 2}, {1, 2, 3, -4})}, axes({1})), i64({2}, {3, -1})));
  EXPECT_TRUE(same(run1("reduce_sum", {i32({2, 2}, {1, 2, 3, -4})}, axes({0})), i32({2}, {4, -2})));
  // Exact beyond 2^53, where a double accumulator would round.
  EXPECT_TRUE(same(run1("reduce_sum", {i64({2}, {(int64_t(1) << 60) + 1, 2})}, axes({0})),
                   i64({}, {(int64_t(1) << 60) + 3})));
}

TEST(ReduceOpTest, SumAccumulatesHalfTypesWider) {
  // Summed one at a time in f16, 1 + 2^-11 + 2^-11 would round back to 1 at each step.
  Tensor h = typed(DType::F16, {3}, {1, 0x1p-11, 0x1p-11});
  EXPECT_TRUE(same(run1("reduce_sum", {h}, axes({0})), typed(DType::F16, {}, {1 + 0x1p-10})));
}

TEST(ReduceOpTest, Mean) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(same(run1("reduce_mean", {x}, axes({1})), f32({2}, {2, 5})));
  EXPECT_TRUE(same(run1("reduce_mean", {x}, axes({0, 1}, true)), f32({1, 1}, {3.5})));
  // Over i and k of iota223: j = 0 -> 24 / 6, j = 1 -> 42 / 6.
  EXPECT_TRUE(same(run1("reduce_mean", {iota223()}, axes({2, 0})), f32({2}, {4, 7})));
  EXPECT_NE(shapeError("reduce_mean", {{DType::I64, {2}}}, axes({0})), "");
}

TEST(ReduceOpTest, MaxMinPropagateNaN) {
  Tensor x = f32({2, 3}, {1, kNaN, 3, 4, 5, -kInf});
  EXPECT_TRUE(same(run1("reduce_max", {x}, axes({1})), f32({2}, {kNaN, 5})));
  EXPECT_TRUE(same(run1("reduce_min", {x}, axes({1})), f32({2}, {kNaN, -kInf})));
  EXPECT_TRUE(same(run1("reduce_max", {x}, axes({0})), f32({3}, {4, kNaN, 3})));
  EXPECT_TRUE(same(run1("reduce_min", {x}, axes({0})), f32({3}, {1, kNaN, -kInf})));
  // NaN first or last in the reduced run both propagate.
  EXPECT_TRUE(same(run1("reduce_max", {f32({3}, {kNaN, 1, 2})}, axes({0})), f32({}, {kNaN})));
  EXPECT_TRUE(same(run1("reduce_min", {f32({3}, {1, 2, kNaN})}, axes({0})), f32({}, {kNaN})));
}

TEST(ReduceOpTest, MaxMinSeveralAxes) {
  EXPECT_TRUE(same(run1("reduce_max", {iota223()}, axes({0, 2}, true)), f32({1, 2, 1}, {8, 11})));
  EXPECT_TRUE(same(run1("reduce_min", {iota223()}, axes({-2, -1})), f32({2}, {0, 6})));
  // All-negative input: the result is no larger than the inputs (the identity is -inf).
  EXPECT_TRUE(same(run1("reduce_max", {f32({2}, {-7, -3})}, axes({0})), f32({}, {-3})));
}

TEST(ReduceOpTest, MaxMinIntegers) {
  Tensor x = i64({2, 2}, {INT64_MIN, -5, INT64_MAX, 3});
  EXPECT_TRUE(same(run1("reduce_max", {x}, axes({1})), i64({2}, {-5, INT64_MAX})));
  EXPECT_TRUE(same(run1("reduce_min", {x}, axes({0, 1})), i64({}, {INT64_MIN})));
  EXPECT_TRUE(same(run1("reduce_max", {i32({3}, {-9, -2, -4})}, axes({0})), i32({}, {-2})));
  EXPECT_TRUE(same(run1("reduce_min", {i32({3}, {9, 2, 4})}, axes({-1})), i32({}, {2})));
}

TEST(ReduceOpTest, MatchesNumpy) {
  // numpy sums float32 pairwise in float32; the kernel sums in double. 20 terms of |x| <= 2
  // differ by a few float32 ulps at most.
  Tensor x = fixture("reduce_x");
  EXPECT_TRUE(
      allClose(run1("reduce_sum", {x}, axes({0, 2})), fixture("reduce_sum_02_out"), 1e-5, 1e-5));
  EXPECT_TRUE(allClose(run1("reduce_mean", {x}, axes({1, 2}, true)),
                       fixture("reduce_mean_12_keep_out"), 1e-5, 1e-6));
  EXPECT_TRUE(same(run1("reduce_max", {x}, axes({0, 1})), fixture("reduce_max_01_out")));
}

TEST(ReduceOpTest, ArgmaxFirstMaxWins) {
  Tensor x = f32({2, 3}, {1, 3, 3, 2, 2, 1});
  EXPECT_TRUE(same(run1("argmax", {x}, {{"axis", 1}}), i64({2}, {1, 0})));
  EXPECT_TRUE(same(run1("argmax", {x}, {{"axis", 0}}), i64({3}, {1, 0, 0})));
  EXPECT_TRUE(same(run1("argmax", {x}, {{"axis", -1}, {"keepdims", true}}), i64({2, 1}, {1, 0})));
  EXPECT_TRUE(same(run1("argmax", {f32({4}, {5, 5, 5, 5})}, {{"axis", 0}}), i64({}, {0})));
}

TEST(ReduceOpTest, ArgmaxMiddleAxisAndIntegers) {
  // iota223 along j: the larger j always wins.
  EXPECT_TRUE(same(run1("argmax", {iota223()}, {{"axis", 1}}), i64({2, 3}, {1, 1, 1, 1, 1, 1})));
  Tensor t = i64({2, 2, 2}, {0, 9, 4, 9, -1, -2, -3, -1});
  EXPECT_TRUE(
      same(run1("argmax", {t}, {{"axis", -2}, {"keepdims", true}}), i64({2, 1, 2}, {1, 0, 0, 1})));
  EXPECT_TRUE(same(run1("argmax", {i32({3}, {-5, 7, 7})}, {{"axis", 0}}), i64({}, {1})));
  // Distinct above 2^53, where doubles would tie them.
  int64_t big = int64_t(1) << 62;
  EXPECT_TRUE(same(run1("argmax", {i64({2}, {big, big + 1})}, {{"axis", 0}}), i64({}, {1})));
}

TEST(ReduceOpTest, ArgmaxNaNIsTheMaximum) {
  // As numpy and PyTorch: the first NaN wins.
  EXPECT_TRUE(same(run1("argmax", {f32({4}, {1, kNaN, 5, kNaN})}, {{"axis", 0}}), i64({}, {1})));
  EXPECT_TRUE(same(run1("argmax", {f32({3}, {kNaN, 5, kNaN})}, {{"axis", 0}}), i64({}, {0})));
  EXPECT_NE(shapeError("argmax", {{DType::F32, {2, 0}}}, {{"axis", 1}}), "");
}

} // namespace
