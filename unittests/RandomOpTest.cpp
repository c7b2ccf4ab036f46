// Training-mode dropout: the Philox generator against its published answer, the kept
// fraction and scale, and the property partitioning relies on: a block of the tensor, with
// its slices of the index operands, draws exactly the block of the whole tensor's mask.
#include "OpTestUtil.h"

#include "shardc/support/Philox.h"

using namespace shardc;
using namespace shardc::testing;

namespace {

using Ints = std::vector<int64_t>;

// dropout of x (any shape) at `ratio` with rng [seed, step]; the index operands count from
// `start` per dim, with the strides of `whole` (x's shape before partitioning).
Tensor dropout(const Tensor& x, double ratio, int64_t seed, int64_t step, int64_t stream,
               const Shape& whole, const std::vector<int64_t>& start) {
  std::vector<Tensor> in{x, f64({}, {ratio}), i64({2}, {seed, step})};
  const Shape& s = x.shape();
  for (size_t d = 0; d < s.size(); ++d) {
    Shape shape(s.size(), 1);
    shape[d] = s[d];
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < s[d]; ++i)
      idx.push_back(start[d] + i);
    in.push_back(i64(shape, idx));
  }
  std::vector<int64_t> strides(whole.size(), 1);
  for (size_t d = whole.size(); d-- > 1;)
    strides[d - 1] = strides[d] * whole[d];
  return run1("dropout", in, {{"strides", strides}, {"stream", stream}});
}

Tensor dropout(const Tensor& x, double ratio, int64_t seed = 7, int64_t step = 0,
               int64_t stream = 0) {
  return dropout(x, ratio, seed, step, stream, x.shape(),
                 std::vector<int64_t>(x.shape().size(), 0));
}

Tensor ones(Shape s) {
  return f32(s, std::vector<double>(static_cast<size_t>(numel(s)), 1.0));
}

} // namespace

TEST(RandomOpTest, PhiloxMatchesItsKnownAnswer) {
  // Random123's known-answer vector for philox4x32-10: counter 0 and key 0 give
  // 6627e8d5 e169c58d bc57ac4c 9b00dbd8; the first word is what dropout uses.
  EXPECT_EQ(philox::firstWord(0, 0, 0, 0), 0x6627e8d5u);
}

TEST(RandomOpTest, KeepsTheRightFractionScaled) {
  // 200,000 draws: the kept fraction's standard deviation is below 0.0012, so 0.006 is
  // five of them.
  Shape s{400, 500};
  for (double p : {0.1, 0.5}) {
    Tensor y = dropout(ones(s), p);
    int64_t kept = 0;
    for (int64_t i = 0; i < y.numel(); ++i) {
      double v = y.getDouble(i);
      if (v != 0) {
        ++kept;
        EXPECT_FLOAT_EQ(v, 1.0 / (1.0 - p));
      }
    }
    EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(y.numel()), 1 - p, 0.006) << p;
  }
  EXPECT_TRUE(same(dropout(ones({3, 4}), 0.0), ones({3, 4})));
  EXPECT_TRUE(same(dropout(ones({3, 4}), 1.0), f32({3, 4}, std::vector<double>(12, 0.0))));
}

TEST(RandomOpTest, ABlockDrawsTheWholeTensorsBlock) {
  Shape whole{6, 10};
  Tensor all = dropout(ones(whole), 0.5);
  // Rows 2..5, columns 5..9, as a device holding that block of a [{a}, {b}] sharding sees it.
  Tensor block = dropout(ones({4, 5}), 0.5, 7, 0, 0, whole, {2, 5});
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 5; ++c)
      EXPECT_EQ(block.getDouble(r * 5 + c), all.getDouble((r + 2) * 10 + c + 5)) << r << "," << c;
}

TEST(RandomOpTest, SeedStepAndStreamEachChangeTheMask) {
  Shape s{64, 64};
  Tensor base = dropout(ones(s), 0.5, 7, 0, 0);
  EXPECT_TRUE(same(dropout(ones(s), 0.5, 7, 0, 0), base));
  for (Tensor other : {dropout(ones(s), 0.5, 8, 0, 0), dropout(ones(s), 0.5, 7, 1, 0),
                       dropout(ones(s), 0.5, 7, 0, 1)}) {
    int64_t differ = 0;
    for (int64_t i = 0; i < base.numel(); ++i)
      differ += base.getDouble(i) != other.getDouble(i);
    // Independent masks at 0.5 differ in half the elements (2048 of 4096, sd 32).
    EXPECT_NEAR(static_cast<double>(differ), 2048, 200);
  }
}

TEST(RandomOpTest, ChecksItsOperands) {
  TensorType x{DType::F32, {2, 3}}, ratio{DType::F64, {}}, rng{DType::I64, {2}};
  TensorType i0{DType::I64, {2, 1}}, i1{DType::I64, {1, 3}};
  AttrDict ok = {{"strides", Ints{3, 1}}};
  EXPECT_EQ(shapeError("dropout", {x, ratio, rng, i0, i1}, ok), "");
  EXPECT_NE(shapeError("dropout", {x, ratio, rng, i0}, ok), "");
  EXPECT_NE(shapeError("dropout", {x, ratio, rng, i1, i0}, ok), "");
  EXPECT_NE(shapeError("dropout", {x, ratio, TensorType{DType::I64, {3}}, i0, i1}, ok), "");
  EXPECT_NE(shapeError("dropout", {x, TensorType{DType::F32, {}}, rng, i0, i1}, ok), "");
  EXPECT_NE(shapeError("dropout", {TensorType{DType::I64, {2, 3}}, ratio, rng, i0, i1}, ok), "");
  EXPECT_NE(shapeError("dropout", {x, ratio, rng, i0, i1}, {{"strides", Ints{3}}}), "");
  // The ratio is a run-time value: outside [0, 1] the kernel refuses it.
  std::vector<Tensor> in{ones({2, 3}), f64({}, {1.5}), i64({2}, {0, 0}), i64({2, 1}, {0, 1}),
                         i64({1, 3}, {0, 1, 2})};
  EXPECT_NE(kernelError("dropout", in, ok).find("ratio must be in [0, 1]"), std::string::npos);
}
