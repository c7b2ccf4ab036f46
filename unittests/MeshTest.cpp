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
