#include "shardc/sharding/Mesh.h"
#include "shardc/support/Error.h"

#include <gtest/gtest.h>

using namespace shardc;

namespace {
std::string meshError(const std::string& spec) {
  try {
    Mesh::parse(spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
std::string shardingError(const std::string& text) {
  try {
    parseSharding(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST(MeshTest, ParsesAndPrints) {
  Mesh m = Mesh::parse(" data=4, model=2 ");
  EXPECT_EQ(m.str(), "data=4,model=2");
  EXPECT_EQ(m.numDevices(), 8);
  EXPECT_EQ(m.axisIndex("model"), 1u);
  EXPECT_FALSE(m.axisIndex("seq"));
}

TEST(MeshTest, DevicesAreRowMajorOverAxes) {
  Mesh m = Mesh::parse("data=2,model=3");
  EXPECT_EQ(m.coordinates(4), (std::vector<int64_t>{1, 1}));
  for (int64_t d = 0; d < m.numDevices(); ++d)
    EXPECT_EQ(m.device(m.coordinates(d)), d);
}

TEST(MeshTest, BadMeshesAreErrors) {
  EXPECT_EQ(meshError(""), "mesh '' is empty; write AXIS=N[,AXIS=N...]");
  EXPECT_EQ(meshError("data"), "mesh 'data': 'data' must be AXIS=N");
  EXPECT_EQ(meshError("data=0"),
            "mesh 'data=0': the size of axis 'data' must be an integer from 1 to 65536");
  EXPECT_EQ(meshError("data=2x"),
            "mesh 'data=2x': the size of axis 'data' must be an integer from 1 to 65536");
  EXPECT_EQ(meshError("data=2,data=2"), "mesh 'data=2,data=2': axis 'data' appears twice");
  EXPECT_EQ(meshError("1x=2"), "mesh '1x=2': '1x' is not an axis name");
  EXPECT_EQ(meshError("a=256,b=512"), "mesh 'a=256,b=512' has more than 65536 devices");
}

TEST(MeshTest, ShardingRoundTrips) {
  for (const char* text :
       {"[{data}, {}]", "[]", "[{data, model}, {}, {seq}]", "[{}, {model}] partial{data}"}) {
    TensorSharding s = parseSharding(text);
    EXPECT_EQ(s.str(), text);
    EXPECT_EQ(parseSharding(s.str()), s);
  }
  EXPECT_TRUE(parseSharding("[{}, {}]").isReplicated());
  EXPECT_FALSE(parseSharding("[{}] partial{x}").isReplicated());
}

TEST(MeshTest, BadShardingsAreErrors) {
  EXPECT_EQ(shardingError("{data}"),
            "sharding '{data}': expected [{axes}, ...] with one {} per dimension");
  EXPECT_EQ(shardingError("[data]"), "sharding '[data]': expected {axis, ...}, got 'data'");
  EXPECT_EQ(shardingError("[{1}]"), "sharding '[{1}]': '1' is not an axis name");
  EXPECT_EQ(shardingError("[{}] extra"), "sharding '[{}] extra': unexpected 'extra'");
  EXPECT_EQ(shardingError("[{}] partial{}"),
            "sharding '[{}] partial{}': partial{} needs at least one axis");
}

TEST(MeshTest, CheckShardingNamesDimensionAndAxis) {
  Mesh m = Mesh::parse("data=4,model=2");
  TensorType t{DType::F32, {8, 6}};
  EXPECT_EQ(checkSharding(parseSharding("[{data}, {model}]"), t, m), "");
  EXPECT_EQ(checkSharding(parseSharding("[{data}]"), t, m),
            "sharding [{data}] has 1 dimensions, the tensor f32[8,6] has 2");
  EXPECT_EQ(checkSharding(parseSharding("[{seq}, {}]"), t, m),
            "axis 'seq' is not in the mesh data=4,model=2");
  EXPECT_EQ(checkSharding(parseSharding("[{data}, {data}]"), t, m),
            "axis 'data' is used twice in [{data}, {data}]");
  EXPECT_EQ(checkSharding(parseSharding("[{}, {data}]"), t, m),
            "dimension 1 of f32[8,6] (size 6) does not divide evenly over {data} (4 devices)");
  EXPECT_EQ(checkSharding(parseSharding("[{data}, {}] partial{data}"), t, m),
            "axis 'data' is used twice in [{data}, {}] partial{data}");
  EXPECT_EQ(localShape(parseSharding("[{data, model}, {}]"), t, m), (Shape{1, 6}));
  EXPECT_EQ(localShape(parseSharding("[{model}, {}] partial{data}"), t, m), (Shape{4, 6}));
}

TEST(MeshTest, ChunkedDimensionsRoundTrip) {
  TensorSharding s = parseSharding("[{}, {model}:3]");
  EXPECT_EQ(s.chunksOf(0), 1);
  EXPECT_EQ(s.chunksOf(1), 3);
  EXPECT_EQ(s.chunksOf(5), 1);
  for (const char* text : {"[{}, {model}:3]", "[{data, model}:2, {}:4] partial{seq}", "[{}:3]"}) {
    TensorSharding t = parseSharding(text);
    EXPECT_EQ(t.str(), text);
    EXPECT_EQ(parseSharding(t.str()), t);
  }
  // One chunk is no chunking, however it is written.
  EXPECT_EQ(parseSharding("[{model}:1, {}]").str(), "[{model}, {}]");
  EXPECT_EQ(parseSharding("[{model}:1, {}]"), parseSharding("[{model}, {}]"));
  EXPECT_TRUE(parseSharding("[{model}:1, {}]").chunks.empty());
  EXPECT_FALSE(parseSharding("[{model}:3]") == parseSharding("[{model}]"));
  EXPECT_EQ(parseSharding(" [ {model} : 3 ] ").str(), "[{model}:3]");
  EXPECT_EQ(shardingError("[{model}:0]"),
            "sharding '[{model}:0]': chunk count '0' must be a positive integer");
  EXPECT_EQ(shardingError("[{model}:x]"),
            "sharding '[{model}:x]': chunk count 'x' must be a positive integer");
  EXPECT_EQ(shardingError("[{model}:-2]"),
            "sharding '[{model}:-2]': chunk count '-2' must be a positive integer");
}

TEST(MeshTest, SetChunksKeepsOneCountPerDimension) {
  TensorSharding s = TensorSharding::replicated(3);
  s.setChunks(1, 1);
  EXPECT_TRUE(s.chunks.empty());
  s.setChunks(2, 4);
  EXPECT_EQ(s.chunks, (std::vector<int64_t>{1, 1, 4}));
  EXPECT_EQ(s.str(), "[{}, {}, {}:4]");
}

TEST(MeshTest, CheckShardingCountsChunks) {
  Mesh m = Mesh::parse("data=4,model=2");
  TensorType t{DType::F32, {8, 12}};
  EXPECT_EQ(checkSharding(parseSharding("[{}, {model}:3]"), t, m), "");
  EXPECT_EQ(checkSharding(parseSharding("[{}, {model}:6]"), t, m), "");
  EXPECT_EQ(checkSharding(parseSharding("[{}, {model}:4]"), t, m),
            "dimension 1 of f32[8,12] (size 12) does not divide evenly over {model} (2 devices "
            "per chunk of 4)");
  EXPECT_EQ(checkSharding(parseSharding("[{}, {data, model}:3]"), t, m),
            "dimension 1 of f32[8,12] (size 12) does not divide evenly over {data, model} (8 "
            "devices per chunk of 3)");
  EXPECT_EQ(checkSharding(parseSharding("[{}:3, {}]"), t, m),
            "dimension 0 of f32[8,12] (size 8) does not divide evenly over {} (1 devices per chunk "
            "of 3)");
  TensorSharding bad = parseSharding("[{}, {model}]");
  bad.chunks = {3};
  EXPECT_EQ(checkSharding(bad, t, m),
            "sharding [{}:3, {model}] has chunk counts for 1 of its 2 dimensions");
  // Every device holds its slice of each chunk: n / ways elements, as without chunks.
  EXPECT_EQ(localShape(parseSharding("[{data}, {model}:3]"), t, m), (Shape{2, 6}));
}
