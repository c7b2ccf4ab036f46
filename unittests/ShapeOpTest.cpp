// Numeric tests of the data-movement ops: transpose, reshape, broadcast, slice, reverse, concat,
// split. Their kernels copy raw elements, so a few cases use i64, i1 and f16 too.
#include "OpTestUtil.h"

#include <numeric>

using namespace shardc;
using namespace shardc::testing;

namespace {

using Ints = std::vector<int64_t>;

// 0..n-1 in the given shape.
Tensor range(DType t, Shape shape) {
  std::vector<int64_t> v(static_cast<size_t>(numel(shape)));
  std::iota(v.begin(), v.end(), 0);
  return Tensor::fromInts(TensorType{t, std::move(shape)}, v);
}

TEST(ShapeOpTest, Transpose2d) {
  EXPECT_TRUE(same(run1("transpose", {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {{"perm", Ints{1, 0}}}),
                   f32({3, 2}, {1, 4, 2, 5, 3, 6})));
}

TEST(ShapeOpTest, TransposeRank3And4) {
  // x[i,j,k] = 6i + 3j + k over [2,2,3]; perm [2,0,1] gives y[k,i,j] = x[i,j,k].
  Tensor x = range(DType::F32, {2, 2, 3});
  EXPECT_TRUE(same(run1("transpose", {x}, {{"perm", Ints{2, 0, 1}}}),
                   f32({3, 2, 2}, {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11})));
  // perm [1,0,2] swaps the two leading dims and keeps rows of 3 together.
  EXPECT_TRUE(same(run1("transpose", {x}, {{"perm", Ints{1, 0, 2}}}),
                   f32({2, 2, 3}, {0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11})));
  // Rank 4, [1,2,1,2] -> perm [3,1,0,2]: y[l,j,i,k] = x[i,j,k,l] = 2j + l.
  Tensor y = range(DType::I64, {1, 2, 1, 2});
  EXPECT_TRUE(
      same(run1("transpose", {y}, {{"perm", Ints{3, 1, 0, 2}}}), i64({2, 2, 1, 1}, {0, 2, 1, 3})));
  EXPECT_TRUE(same(run1("transpose", {i1({2, 2}, {1, 0, 0, 0})}, {{"perm", Ints{1, 0}}}),
                   i1({2, 2}, {1, 0, 0, 0})));
  EXPECT_NE(shapeError("transpose", {{DType::F32, {2, 3}}}, {{"perm", Ints{0, 0}}}), "");
  EXPECT_NE(shapeError("transpose", {{DType::F32, {2, 3}}}, {{"perm", Ints{1, 0, 2}}}), "");
}

TEST(ShapeOpTest, Reshape) {
  // Row-major order is kept.
  EXPECT_TRUE(same(run1("reshape", {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {{"shape", Ints{3, 1, 2}}}),
                   f32({3, 1, 2}, {1, 2, 3, 4, 5, 6})));
  EXPECT_TRUE(same(run1("reshape", {i64({1, 1}, {7})}, {{"shape", Ints{}}}), i64({}, {7})));
  EXPECT_TRUE(same(run1("reshape", {typed(DType::F16, {}, {0.5})}, {{"shape", Ints{1, 1}}}),
                   typed(DType::F16, {1, 1}, {0.5})));
  EXPECT_NE(shapeError("reshape", {{DType::F32, {2, 3}}}, {{"shape", Ints{4}}}), "");
  EXPECT_NE(shapeError("reshape", {{DType::F32, {2, 3}}}, {{"shape", Ints{-1, 6}}}), "");
}

TEST(ShapeOpTest, Broadcast) {
  EXPECT_TRUE(same(run1("broadcast", {f32({3}, {1, 2, 3})}, {{"shape", Ints{2, 3}}}),
                   f32({2, 3}, {1, 2, 3, 1, 2, 3})));
  EXPECT_TRUE(same(run1("broadcast", {f32({2, 1}, {1, 2})}, {{"shape", Ints{2, 3}}}),
                   f32({2, 3}, {1, 1, 1, 2, 2, 2})));
  EXPECT_TRUE(
      same(run1("broadcast", {i64({}, {5})}, {{"shape", Ints{2, 2}}}), i64({2, 2}, {5, 5, 5, 5})));
  // A middle size-1 dim and a new leading dim at once: [2,1,2] -> [2,2,3,2].
  EXPECT_TRUE(same(
      run1("broadcast", {f32({2, 1, 2}, {1, 2, 3, 4})}, {{"shape", Ints{2, 2, 3, 2}}}),
      f32({2, 2, 3, 2}, {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4})));
  EXPECT_NE(shapeError("broadcast", {{DType::F32, {2}}}, {{"shape", Ints{3}}}), "");
  // broadcast_to never shrinks: [2,3] cannot become [3].
  EXPECT_NE(shapeError("broadcast", {{DType::F32, {2, 3}}}, {{"shape", Ints{3}}}), "");
}

TEST(ShapeOpTest, SliceWithStrides) {
  // [3,5] = 0..14; rows 0:3:2 -> {0, 2}; cols 1:5:3 -> {1, 4}.
  Tensor x = range(DType::F32, {3, 5});
  AttrDict a = {{"start", Ints{0, 1}}, {"limit", Ints{3, 5}}, {"stride", Ints{2, 3}}};
  EXPECT_TRUE(same(run1("slice", {x}, a), f32({2, 2}, {1, 4, 11, 14})));
  // Unit strides, inner window only.
  AttrDict b = {{"start", Ints{1, 2}}, {"limit", Ints{3, 4}}, {"stride", Ints{1, 1}}};
  EXPECT_TRUE(same(run1("slice", {x}, b), f32({2, 2}, {7, 8, 12, 13})));
  // A stride past the end keeps just the start.
  AttrDict c = {{"start", Ints{2, 0}}, {"limit", Ints{3, 5}}, {"stride", Ints{5, 7}}};
  EXPECT_TRUE(same(run1("slice", {x}, c), f32({1, 1}, {10})));
}

TEST(ShapeOpTest, SliceRank3AndEmpty) {
  // [2,2,3] = 0..11: [1:2, 0:2:1, 0:3:2] -> {6, 8, 9, 11}.
  Tensor x = range(DType::I64, {2, 2, 3});
  AttrDict a = {{"start", Ints{1, 0, 0}}, {"limit", Ints{2, 2, 3}}, {"stride", Ints{1, 1, 2}}};
  EXPECT_TRUE(same(run1("slice", {x}, a), i64({1, 2, 2}, {6, 8, 9, 11})));
  AttrDict e = {{"start", Ints{1, 0, 0}}, {"limit", Ints{1, 2, 3}}, {"stride", Ints{1, 1, 1}}};
  EXPECT_EQ(run1("slice", {x}, e).type(), (TensorType{DType::I64, {0, 2, 3}}));
  AttrDict bad = {{"start", Ints{0, 0, 0}}, {"limit", Ints{2, 3, 3}}, {"stride", Ints{1, 1, 1}}};
  EXPECT_NE(shapeError("slice", {x.type()}, bad), "");
  AttrDict zero = {{"start", Ints{0, 0, 0}}, {"limit", Ints{2, 2, 3}}, {"stride", Ints{1, 0, 1}}};
  EXPECT_NE(shapeError("slice", {x.type()}, zero), "");
}

TEST(ShapeOpTest, ReverseAlongAxes) {
  // [2,3] = 0..5: rows reversed, columns reversed, both, none.
  Tensor x = range(DType::F32, {2, 3});
  EXPECT_TRUE(same(run1("reverse", {x}, {{"axes", Ints{0}}}), f32({2, 3}, {3, 4, 5, 0, 1, 2})));
  EXPECT_TRUE(same(run1("reverse", {x}, {{"axes", Ints{-1}}}), f32({2, 3}, {2, 1, 0, 5, 4, 3})));
  EXPECT_TRUE(same(run1("reverse", {x}, {{"axes", Ints{1, 0}}}), f32({2, 3}, {5, 4, 3, 2, 1, 0})));
  EXPECT_TRUE(same(run1("reverse", {x}, {{"axes", Ints{}}}), x));
  // Any dtype, a middle axis of rank 3, and an empty tensor.
  Tensor y = range(DType::I64, {2, 2, 2});
  EXPECT_TRUE(
      same(run1("reverse", {y}, {{"axes", Ints{1}}}), i64({2, 2, 2}, {2, 3, 0, 1, 6, 7, 4, 5})));
  EXPECT_EQ(run1("reverse", {range(DType::F32, {0, 3})}, {{"axes", Ints{0, 1}}}).type(),
            (TensorType{DType::F32, {0, 3}}));
  EXPECT_NE(shapeError("reverse", {x.type()}, {{"axes", Ints{2}}}), "");
  EXPECT_NE(shapeError("reverse", {x.type()}, {{"axes", Ints{1, -1}}}), "");
}

TEST(ShapeOpTest, ConcatInnerAxis) {
  // [2,1,2] ++ [2,2,2] along axis 1 -> [2,3,2].
  Tensor a = f32({2, 1, 2}, {1, 2, 3, 4}), b = f32({2, 2, 2}, {10, 11, 12, 13, 14, 15, 16, 17});
  Tensor want = f32({2, 3, 2}, {1, 2, 10, 11, 12, 13, 3, 4, 14, 15, 16, 17});
  EXPECT_TRUE(same(run1("concat", {a, b}, {{"axis", 1}}), want));
  EXPECT_TRUE(same(run1("concat", {a, b}, {{"axis", -2}}), want));
}

TEST(ShapeOpTest, ConcatLastAxisThreeOperands) {
  Tensor a = i64({2, 1}, {1, 2}), b = i64({2, 2}, {3, 4, 5, 6}), c = i64({2, 0}, {});
  EXPECT_TRUE(
      same(run1("concat", {a, c, b, a}, {{"axis", -1}}), i64({2, 4}, {1, 3, 4, 1, 2, 5, 6, 2})));
  EXPECT_TRUE(same(run1("concat", {a, a}, {{"axis", 0}}), i64({4, 1}, {1, 2, 1, 2})));
  EXPECT_NE(shapeError("concat", {{DType::F32, {2, 1}}, {DType::F32, {3, 1}}}, {{"axis", 1}}), "");
  EXPECT_NE(shapeError("concat", {{DType::F32, {2, 1}}, {DType::I64, {2, 1}}}, {{"axis", 1}}), "");
}

TEST(ShapeOpTest, SplitInnerAxis) {
  // [2,3,2] = 0..11 split along axis 1 into sizes 1 and 2.
  Tensor x = range(DType::F32, {2, 3, 2});
  auto parts = runOp("split", {x}, {{"axis", 1}, {"sizes", Ints{1, 2}}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(same(parts[0], f32({2, 1, 2}, {0, 1, 6, 7})));
  EXPECT_TRUE(same(parts[1], f32({2, 2, 2}, {2, 3, 4, 5, 8, 9, 10, 11})));
}

TEST(ShapeOpTest, SplitNegativeAxisWithEmptyPiece) {
  Tensor x = range(DType::I64, {2, 3});
  auto parts = runOp("split", {x}, {{"axis", -1}, {"sizes", Ints{2, 0, 1}}});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_TRUE(same(parts[0], i64({2, 2}, {0, 1, 3, 4})));
  EXPECT_EQ(parts[1].type(), (TensorType{DType::I64, {2, 0}}));
  EXPECT_TRUE(same(parts[2], i64({2, 1}, {2, 5})));
  EXPECT_NE(shapeError("split", {x.type()}, {{"axis", 1}, {"sizes", Ints{2, 2}}}), "");
  // split then concat is the identity.
  auto halves = runOp("split", {x}, {{"axis", 0}, {"sizes", Ints{1, 1}}});
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_TRUE(same(run1("concat", {halves[0], halves[1]}, {{"axis", 0}}), x));
}

} // namespace

TEST(ShapeOpTest, PadLowHighInterior) {
  // [1 2; 3 4] with one row above, one column after, one zero between columns.
  AttrDict attrs{{"low", Ints{1, 0}}, {"high", Ints{0, 1}}, {"interior", Ints{0, 1}}};
  EXPECT_TRUE(same(run1("pad", {f32({2, 2}, {1, 2, 3, 4})}, attrs),
                   f32({3, 4}, {0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0})));
  // A fill value, and an i64 operand.
  AttrDict fill{{"low", Ints{2}}, {"high", Ints{1}}, {"interior", Ints{0}}, {"value", -1.0}};
  EXPECT_TRUE(same(run1("pad", {i64({2}, {7, 8})}, fill), i64({5}, {-1, -1, 7, 8, -1})));
}

TEST(ShapeOpTest, PadUndoesStridedSlice) {
  // slice(x, start 1, stride 2) then pad(low 1, interior 1, high 0) puts the picked
  // elements back in place and zeros elsewhere: the slice's gradient.
  Tensor x = f32({5}, {10, 11, 12, 13, 14});
  Tensor s = run1("slice", {x}, {{"start", Ints{1}}, {"limit", Ints{5}}, {"stride", Ints{2}}});
  EXPECT_TRUE(same(s, f32({2}, {11, 13})));
  EXPECT_TRUE(same(run1("pad", {s}, {{"low", Ints{1}}, {"high", Ints{1}}, {"interior", Ints{1}}}),
                   f32({5}, {0, 11, 0, 13, 0})));
}
