// Cutting whole tensors into per-device pieces and putting them back together.
#include "OpTestUtil.h"

#include "shardc/collectives/ShardTensor.h"

using namespace shardc;
using namespace shardc::testing;

namespace {

Tensor arange(Shape shape) {
  std::vector<int64_t> v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<int64_t>(i);
  return i64(std::move(shape), v);
}

std::string shardError(const Tensor& whole, const std::string& sharding, const char* mesh) {
  try {
    shardOf(whole, parseSharding(sharding), Mesh::parse(mesh), 0);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(ShardTensorTest, PiecesFollowTheDeviceCoordinates) {
  Mesh m = Mesh::parse("data=2,model=3");
  Tensor x = arange({4, 6});
  // Device 4 is (data 1, model 1): rows 2..3, columns 2..3.
  EXPECT_TRUE(
      same(shardOf(x, parseSharding("[{data}, {model}]"), m, 4), i64({2, 2}, {14, 15, 20, 21})));
  // Replicated along data: only the model coordinate matters.
  EXPECT_TRUE(same(shardOf(x, parseSharding("[{}, {model}]"), m, 5),
                   i64({4, 2}, {4, 5, 10, 11, 16, 17, 22, 23})));
}

TEST(ShardTensorTest, AxesSplitMajorToMinor) {
  Mesh m = Mesh::parse("data=2,model=3");
  Tensor x = arange({6});
  // Device 1 is (data 0, model 1): piece 1 over {data, model}, piece 3 over {model, data}.
  EXPECT_TRUE(same(shardOf(x, parseSharding("[{data, model}]"), m, 1), i64({1}, {1})));
  EXPECT_TRUE(same(shardOf(x, parseSharding("[{model, data}]"), m, 1), i64({1}, {2})));
  EXPECT_TRUE(same(shardOf(x, parseSharding("[{model, data}]"), m, 3), i64({1}, {1})));
}

TEST(ShardTensorTest, ChunkedDimsSplitEveryChunk) {
  // Three chunks of 4 (q|k|v), each split in two: a device holds half of every chunk.
  Mesh m = Mesh::parse("model=2");
  Tensor x = arange({12});
  TensorSharding s = parseSharding("[{model}:3]");
  EXPECT_TRUE(same(shardOf(x, s, m, 0), i64({6}, {0, 1, 4, 5, 8, 9})));
  EXPECT_TRUE(same(shardOf(x, s, m, 1), i64({6}, {2, 3, 6, 7, 10, 11})));
}

TEST(ShardTensorTest, AssembleInvertsShardOf) {
  Mesh m = Mesh::parse("data=2,model=3,seq=2");
  Tensor x =
      Tensor::fromDoubles(TensorType{DType::F32, {24, 6, 4}}, arange({24, 6, 4}).toDoubles());
  for (const char* text : {"[{}, {}, {}]", "[{data}, {model}, {seq}]", "[{model, data}, {}, {seq}]",
                           "[{data, seq}:2, {model}:2, {}]", "[{}, {model}:2, {data}]",
                           "[{seq}:3, {}, {}]", "[{data}:2, {}, {seq}:2]"}) {
    TensorSharding s = parseSharding(text);
    std::vector<Tensor> pieces;
    for (int64_t d = 0; d < m.numDevices(); ++d)
      pieces.push_back(shardOf(x, s, m, d));
    EXPECT_EQ(pieces[0].shape(), localShape(s, x.type(), m)) << text;
    EXPECT_TRUE(same(assemble(pieces, s, m), x)) << text;
  }
}

TEST(ShardTensorTest, AssembleTakesReplicasAtCoordinateZero) {
  Mesh m = Mesh::parse("data=2,model=2");
  // Sharded over model, replicated over data: devices 0 and 1 (data 0) are the ones used.
  std::vector<Tensor> pieces = {f32({1}, {1}), f32({1}, {2}), f32({1}, {-1}), f32({1}, {-2})};
  EXPECT_TRUE(same(assemble(pieces, parseSharding("[{model}]"), m), f32({2}, {1, 2})));
}

TEST(ShardTensorTest, Errors) {
  Tensor x = arange({4, 6});
  EXPECT_EQ(shardError(x, "[{}, {}] partial{data}", "data=2"),
            "sharding [{}, {}] partial{data} holds partial sums, not pieces of a tensor");
  EXPECT_EQ(shardError(x, "[{data}, {}]", "data=3"),
            "dimension 0 of i64[4,6] (size 4) does not divide evenly over {data} (3 devices)");
  EXPECT_EQ(shardError(x, "[{seq}, {}]", "data=2"), "axis 'seq' is not in the mesh data=2");
  Mesh m = Mesh::parse("data=2");
  EXPECT_THROW(assemble({x, x}, parseSharding("[{}, {}] partial{data}"), m), Error);
  EXPECT_THROW(assemble({x}, parseSharding("[{data}, {}]"), m), Error);
  EXPECT_THROW(assemble({x, arange({2, 6})}, parseSharding("[{data}, {}]"), m), Error);
}
