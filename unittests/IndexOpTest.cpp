// Numeric tests of constant, iota and gather (negative indices, inner axes, errors).
#include "OpTestUtil.h"

#include <memory>

using namespace shardc;
using namespace shardc::testing;

namespace {

using Ints = std::vector<int64_t>;

AttrDict iotaAttrs(Ints shape, int64_t axis, DType dtype = DType::I64) {
  return {{"shape", std::move(shape)}, {"axis", axis}, {"dtype", dtype}};
}

TEST(IndexOpTest, ConstantReturnsItsValue) {
  for (const Tensor& t : {f32({2, 2}, {1, -2, 3.5, kNaN}), i64({}, {42}), i1({3}, {1, 0, 1}),
                          typed(DType::BF16, {1}, {0.5})}) {
    Tensor got = run1("constant", {}, {{"value", std::make_shared<const Tensor>(t)}});
    EXPECT_TRUE(got.identical(t)) << t.type().str();
  }
}

TEST(IndexOpTest, IotaOnEachAxis) {
  EXPECT_TRUE(same(run1("iota", {}, iotaAttrs({2, 3}, 0)), i64({2, 3}, {0, 0, 0, 1, 1, 1})));
  EXPECT_TRUE(same(run1("iota", {}, iotaAttrs({2, 3}, 1)), i64({2, 3}, {0, 1, 2, 0, 1, 2})));
  EXPECT_TRUE(same(run1("iota", {}, iotaAttrs({2, 3}, -1)), i64({2, 3}, {0, 1, 2, 0, 1, 2})));
  EXPECT_TRUE(same(run1("iota", {}, iotaAttrs({2, 3, 2}, 1)),
                   i64({2, 3, 2}, {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2})));
  EXPECT_TRUE(same(run1("iota", {}, iotaAttrs({2, 3, 2}, 2)),
                   i64({2, 3, 2}, {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1})));
  EXPECT_TRUE(same(run1("iota", {}, iotaAttrs({2, 3, 2}, -3)),
                   i64({2, 3, 2}, {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1})));
}

TEST(IndexOpTest, IotaDtypes) {
  EXPECT_TRUE(same(run1("iota", {}, iotaAttrs({3}, 0, DType::F32)), f32({3}, {0, 1, 2})));
  EXPECT_TRUE(same(run1("iota", {}, iotaAttrs({1, 2}, 1, DType::I32)), i32({1, 2}, {0, 1})));
  // 2049 is not an f16; it rounds to even, 2048 (one less than its index).
  Tensor h = run1("iota", {}, iotaAttrs({2050}, 0, DType::F16));
  EXPECT_EQ(h.getDouble(2047), 2047);
  EXPECT_EQ(h.getDouble(2049), 2048);
  EXPECT_NE(shapeError("iota", {}, iotaAttrs({2}, 0, DType::I1)), "");
  EXPECT_NE(shapeError("iota", {}, iotaAttrs({2}, 1)), "");
}

TEST(IndexOpTest, GatherAxis0IsEmbeddingLookup) {
  Tensor table = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(same(run1("gather", {table, i64({2, 2}, {2, 0, 1, 2})}),
                   f32({2, 2, 2}, {5, 6, 1, 2, 3, 4, 5, 6})));
  // Negative indices count from the end: -1 is row 2, -3 is row 0.
  EXPECT_TRUE(same(run1("gather", {table, i64({2}, {-1, -3})}), f32({2, 2}, {5, 6, 1, 2})));
  // A scalar index drops the axis.
  EXPECT_TRUE(same(run1("gather", {table, i32({}, {1})}), f32({2}, {3, 4})));
}

TEST(IndexOpTest, GatherInnerAxes) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor want = f32({2, 2}, {3, 1, 6, 4});
  EXPECT_TRUE(same(run1("gather", {x, i64({2}, {-1, 0})}, {{"axis", 1}}), want));
  EXPECT_TRUE(same(run1("gather", {x, i32({2}, {2, -3})}, {{"axis", -1}}), want));
  // Middle axis of [2,2,2] with [1,3] indices -> [2,1,3,2].
  Tensor y = i64({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_TRUE(same(run1("gather", {y, i64({1, 3}, {1, 0, 1})}, {{"axis", 1}}),
                   i64({2, 1, 3, 2}, {2, 3, 0, 1, 2, 3, 6, 7, 4, 5, 6, 7})));
  EXPECT_TRUE(same(run1("gather", {i1({3}, {0, 1, 0}), i64({2}, {1, 1})}), i1({2}, {1, 1})));
  EXPECT_NE(shapeError("gather", {{DType::F32, {3}}, {DType::F32, {1}}}), "");
}

TEST(IndexOpTest, GatherOutOfRangeIsAnError) {
  Tensor table = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  for (int64_t bad : {int64_t(3), int64_t(-4), int64_t(INT64_MIN)}) {
    std::string err = kernelError("gather", {table, i64({2}, {0, bad})});
    // interpret() names the op; the kernel names the index and where it is.
    EXPECT_NE(err.find("'gather' op"), std::string::npos) << err;
    EXPECT_NE(err.find("out of range"), std::string::npos) << err;
    EXPECT_NE(err.find(std::to_string(bad)), std::string::npos) << err;
  }
}

TEST(IndexOpTest, GatherMatchesTorch) {
  EXPECT_TRUE(same(run1("gather", {fixture("embedding_table"), fixture("embedding_ids")}),
                   fixture("embedding_out")));
  EXPECT_TRUE(
      same(run1("gather", {fixture("index_select_x"), fixture("index_select_idx")}, {{"axis", 1}}),
           fixture("index_select_out")));
}

} // namespace

TEST(IndexOpTest, ScatterAddAccumulatesRepeatedIndices) {
  // Rows 2, 0, 2 of a [3,2] zero tensor receive the updates; row 2 gets two of them.
  Tensor idx = i64({3}, {2, 0, -1});
  Tensor upd = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(same(run1("scatter_add", {idx, upd}, {{"axis", 0}, {"shape", Ints{3, 2}}}),
                   f32({3, 2}, {3, 4, 0, 0, 6, 8})));
  // Along axis 1 with 2-D indices: updates [2, (1,2)] -> [2, 3].
  Tensor idx2 = i64({1, 2}, {0, 2});
  Tensor upd2 = f32({2, 1, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(same(run1("scatter_add", {idx2, upd2}, {{"axis", 1}, {"shape", Ints{2, 3}}}),
                   f32({2, 3}, {1, 0, 2, 3, 0, 4})));
}

TEST(IndexOpTest, ScatterAddIsTheTransposeOfGather) {
  // <gather(x, i), u> == <x, scatter_add(i, u)> for any x, u.
  Tensor x = f32({4, 2}, {1, -2, 3, 0.5, -1, 2, 4, -3});
  Tensor idx = i64({3}, {3, 1, 3});
  Tensor u = f32({3, 2}, {0.5, 1, -2, 3, 1.5, -1});
  Tensor g = run1("gather", {x, idx}, {{"axis", 0}});
  Tensor s = run1("scatter_add", {idx, u}, {{"axis", 0}, {"shape", Ints{4, 2}}});
  double lhs = 0, rhs = 0;
  for (int64_t i = 0; i < g.numel(); ++i)
    lhs += g.getDouble(i) * u.getDouble(i);
  for (int64_t i = 0; i < x.numel(); ++i)
    rhs += x.getDouble(i) * s.getDouble(i);
  EXPECT_DOUBLE_EQ(lhs, rhs);
}

TEST(IndexOpTest, ScatterAddRejectsOutOfRangeIndex) {
  std::string err =
      kernelError("scatter_add", {i64({1}, {3}), f32({1}, {1})}, {{"shape", Ints{3}}});
  EXPECT_NE(err.find("scatter_add index 3 at position 0 is out of range"), std::string::npos)
      << err;
}
