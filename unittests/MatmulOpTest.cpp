#include "OpTestUtil.h"

using namespace shardc;
using namespace shardc::testing;

TEST(MatmulOpTest, HandWorked2x2) {
  // [1 2; 3 4] @ [5 6; 7 8] = [19 22; 43 50]
  EXPECT_TRUE(allClose(run1("matmul", {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {5, 6, 7, 8})}),
                       f32({2, 2}, {19, 22, 43, 50})));
}

TEST(MatmulOpTest, BroadcastsBatchDims) {
  // a: [2,1,2] batches, b: [2,1] shared; each row dotted with [1, -1].
  Tensor a = f32({2, 1, 2}, {3, 1, 10, 4});
  Tensor b = f32({2, 1}, {1, -1});
  EXPECT_TRUE(allClose(run1("matmul", {a, b}), f32({2, 1, 1}, {2, 6})));
}

TEST(MatmulOpTest, BothOperandsBroadcast) {
  // a: [2,1,1,2], b: [3,2,1] -> [2,3,1,1]; out[i,j] = a_i . b_j.
  Tensor a = f32({2, 1, 1, 2}, {1, 0, 1, 1});
  Tensor b = f32({3, 2, 1}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(same(run1("matmul", {a, b}), f32({2, 3, 1, 1}, {1, 3, 5, 3, 7, 11})));
}

TEST(MatmulOpTest, Rank3TimesRank2) {
  // Two [1,2] rows against one shared [2,2] matrix.
  Tensor a = f32({2, 1, 2}, {1, 2, 3, 4}), b = f32({2, 2}, {1, 0, 1, -1});
  EXPECT_TRUE(same(run1("matmul", {a, b}), f32({2, 1, 2}, {3, -2, 7, -4})));
}

TEST(MatmulOpTest, Integers) {
  Tensor a = i64({2, 2}, {1, -2, 3, 4}), b = i64({2, 1}, {5, 6});
  EXPECT_TRUE(same(run1("matmul", {a, b}), i64({2, 1}, {-7, 39})));
  // Exact beyond 2^53, where a double accumulator would round.
  int64_t big = int64_t(1) << 60;
  EXPECT_TRUE(
      same(run1("matmul", {i64({1, 2}, {big, 1}), i64({2, 1}, {1, 1})}), i64({1, 1}, {big + 1})));
  EXPECT_TRUE(
      same(run1("matmul", {i32({1, 3}, {1, 2, 3}), i32({3, 1}, {-1, 0, 2})}), i32({1, 1}, {5})));
}

TEST(MatmulOpTest, HalfAccumulatesWider) {
  // Summed in f16, 1 + 2^-11 + 2^-11 would round back to 1 after each add.
  Tensor a = typed(DType::F16, {1, 3}, {1, 0x1p-11, 0x1p-11}),
         b = typed(DType::F16, {3, 1}, {1, 1, 1});
  EXPECT_TRUE(same(run1("matmul", {a, b}), typed(DType::F16, {1, 1}, {1 + 0x1p-10})));
}

TEST(MatmulOpTest, EmptyContractionIsZero) {
  EXPECT_TRUE(
      same(run1("matmul", {f32({2, 0}, {}), f32({0, 3}, {})}), f32({2, 3}, {0, 0, 0, 0, 0, 0})));
}

TEST(MatmulOpTest, ShapeErrors) {
  EXPECT_NE(shapeError("matmul", {{DType::F32, {2, 3}}, {DType::F32, {2, 3}}}), "");
  EXPECT_NE(shapeError("matmul", {{DType::F32, {3}}, {DType::F32, {3, 1}}}), "");
  EXPECT_NE(shapeError("matmul", {{DType::F32, {2, 1, 2}}, {DType::F32, {3, 2, 1}}}), "");
  EXPECT_NE(shapeError("matmul", {{DType::F32, {1, 2}}, {DType::F64, {2, 1}}}), "");
}

TEST(MatmulOpTest, MatchesTorch) {
  // PyTorch accumulates the 4-term dot products in float32 (in its own order), the kernel in
  // double; a few float32 ulps, more in relative terms where terms cancel.
  Tensor out = run1("matmul", {fixture("matmul_bcast_a"), fixture("matmul_bcast_b")});
  EXPECT_TRUE(allClose(out, fixture("matmul_bcast_out"), 1e-5, 1e-6));
}
