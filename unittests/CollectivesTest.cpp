// Collectives and the collective ops on in-process devices (threads), checked against
// expectations computed here from each device's coordinates.
#include "OpTestUtil.h"

#include "shardc/collectives/ThreadCollectives.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"
#include "shardc/transforms/Passes.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>

using namespace shardc;
using namespace shardc::testing;

namespace {

using Axes = std::vector<std::string>;

// Device d's input: distinct values of mixed magnitudes, so that sums round.
Tensor input(int64_t d, Shape shape, DType t = DType::F32) {
  std::vector<double> v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::sin(static_cast<double>(d * 100 + static_cast<int64_t>(i) + 1)) *
           std::pow(10.0, static_cast<double>(i % 5) - 2);
  return Tensor::fromDoubles(TensorType{t, std::move(shape)}, v);
}

// The devices of d's group for `axes`, in rank order, worked out independently of the
// library: same coordinates off `axes`, ordered by the coordinates on `axes` in list order.
std::vector<int64_t> members(const Mesh& m, int64_t d, const Axes& axes) {
  std::vector<size_t> on;
  for (const std::string& a : axes)
    on.push_back(*m.axisIndex(a));
  auto mine = m.coordinates(d);
  std::vector<int64_t> out;
  for (int64_t e = 0; e < m.numDevices(); ++e) {
    auto c = m.coordinates(e);
    bool same = true;
    for (size_t i = 0; i < c.size(); ++i)
      same &= std::count(on.begin(), on.end(), i) || c[i] == mine[i];
    if (same) out.push_back(e);
  }
  auto key = [&](int64_t e) {
    std::vector<int64_t> k;
    for (size_t i : on)
      k.push_back(m.coordinates(e)[i]);
    return k;
  };
  std::sort(out.begin(), out.end(), [&](int64_t a, int64_t b) { return key(a) < key(b); });
  return out;
}

int64_t rankOf(const Mesh& m, int64_t d, const Axes& axes) {
  auto g = members(m, d, axes);
  return std::find(g.begin(), g.end(), d) - g.begin();
}

// Runs `fn` on every device; one result per device.
std::vector<Tensor> onDevices(const Mesh& mesh, const std::function<Tensor(Collectives&)>& fn) {
  std::vector<Tensor> out;
  for (auto& r : runOnDevices(mesh, [&](Collectives& c) { return std::vector<Tensor>{fn(c)}; }))
    out.push_back(r[0]);
  return out;
}

Tensor sumOf(const std::vector<Tensor>& parts) {
  std::vector<double> acc(static_cast<size_t>(parts[0].numel()), 0.0);
  for (size_t i = 0; i < acc.size(); ++i) {
    acc[i] = parts[0].getDouble(static_cast<int64_t>(i));
    for (size_t p = 1; p < parts.size(); ++p)
      acc[i] += parts[p].getDouble(static_cast<int64_t>(i));
  }
  return Tensor::fromDoubles(parts[0].type(), acc);
}

Tensor concatOf(const std::vector<Tensor>& parts, int64_t dim) {
  return run1("concat", parts, {{"axis", dim}});
}

// Piece `index` of `n` along `dim`.
Tensor pieceOf(const Tensor& x, int64_t dim, int64_t index, int64_t n) {
  std::vector<int64_t> start(x.shape().size(), 0), limit = x.shape(), stride(start.size(), 1);
  int64_t len = x.shape()[static_cast<size_t>(dim)] / n;
  start[static_cast<size_t>(dim)] = index * len;
  limit[static_cast<size_t>(dim)] = (index + 1) * len;
  return run1("slice", {x}, {{"start", start}, {"limit", limit}, {"stride", stride}});
}

struct Case {
  const char* mesh;
  Axes axes;
};
const std::vector<Case> kCases = {
    {"data=4", {"data"}},
    {"data=3,model=2", {"data"}},
    {"data=3,model=2", {"model"}},
    {"data=3,model=2", {"data", "model"}},
    {"data=3,model=2", {"model", "data"}},
    {"a=2,b=3,c=2", {"c", "a"}},
};

std::string describe(const Case& c) {
  std::string s = std::string(c.mesh) + " over {";
  for (const std::string& a : c.axes)
    s += a + (a == c.axes.back() ? "" : ",");
  return s + "}";
}

} // namespace

TEST(CollectivesTest, GroupRanksFollowTheListedAxes) {
  Mesh m = Mesh::parse("data=3,model=2");
  auto ranks = onDevices(m, [](Collectives& c) {
    return i64({4}, {c.groupRank({"data"}), c.groupRank({"model"}), c.groupRank({"data", "model"}),
                     c.groupRank({"model", "data"})});
  });
  // Device 1 is (data 0, model 1), device 4 is (data 2, model 0).
  EXPECT_TRUE(same(ranks[1], i64({4}, {0, 1, 1, 3})));
  EXPECT_TRUE(same(ranks[4], i64({4}, {2, 0, 4, 2})));
  auto sizes = onDevices(m, [](Collectives& c) {
    return i64({3}, {c.groupSize({"data"}), c.groupSize({"model", "data"}), c.groupSize({})});
  });
  EXPECT_TRUE(same(sizes[5], i64({3}, {3, 6, 1})));
}

TEST(CollectivesTest, AllGatherOrdersByGroupRank) {
  Mesh m = Mesh::parse("data=3,model=2");
  auto dev = [](Collectives& c) { return i64({1}, {c.device()}); };
  auto rows = onDevices(m, [&](Collectives& c) {
    return c.allGather(dev(c), {"data", "model"}, 0);
  });
  auto cols = onDevices(m, [&](Collectives& c) {
    return c.allGather(dev(c), {"model", "data"}, 0);
  });
  for (int64_t d = 0; d < 6; ++d) {
    EXPECT_TRUE(same(rows[static_cast<size_t>(d)], i64({6}, {0, 1, 2, 3, 4, 5})));
    EXPECT_TRUE(same(cols[static_cast<size_t>(d)], i64({6}, {0, 2, 4, 1, 3, 5})));
  }
}

TEST(CollectivesTest, AllReduceSumsInGroupRankOrder) {
  // In double, (1e20 + 1) - 1e20 is 0 while (1e20 - 1e20) + 1 is 1: the axes' order decides.
  Mesh m = Mesh::parse("data=2,model=2");
  std::vector<double> v = {1e20, -1e20, 1, 0};
  auto run = [&](const Axes& axes) {
    return onDevices(m, [&](Collectives& c) {
      return c.allReduce(f32({1}, {v[static_cast<size_t>(c.device())]}), axes);
    });
  };
  for (const Tensor& t : run({"data", "model"})) // devices 0, 1, 2, 3
    EXPECT_TRUE(same(t, f32({1}, {1})));
  for (const Tensor& t : run({"model", "data"})) // devices 0, 2, 1, 3
    EXPECT_TRUE(same(t, f32({1}, {0})));
}

// A collective waits for its group only: devices 0 and 1 finish their all_reduce over `model`
// while devices 2 and 3 are still waiting for that news, before their own.
TEST(CollectivesTest, GroupsDoNotWaitForOtherGroups) {
  Mesh m = Mesh::parse("data=2,model=2");
  std::promise<void> done;
  std::shared_future<void> news = done.get_future().share();
  std::vector<char> heard(4, 0); // one byte per device: no two threads share one
  onDevices(m, [&](Collectives& c) {
    int64_t d = c.device();
    if (d >= 2)
      heard[static_cast<size_t>(d)] =
          news.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    Tensor sum = c.allReduce(f32({1}, {1}), {"model"});
    if (d == 0) done.set_value();
    return sum;
  });
  EXPECT_TRUE(heard[2]);
  EXPECT_TRUE(heard[3]);
}

TEST(CollectivesTest, AllReduce) {
  for (const Case& c : kCases)
    for (DType t : {DType::F32, DType::BF16, DType::F64}) {
      Mesh m = Mesh::parse(c.mesh);
      auto got = onDevices(m, [&](Collectives& comm) {
        return comm.allReduce(input(comm.device(), {3, 5}, t), c.axes);
      });
      for (int64_t d = 0; d < m.numDevices(); ++d) {
        std::vector<Tensor> parts;
        for (int64_t e : members(m, d, c.axes))
          parts.push_back(input(e, {3, 5}, t));
        EXPECT_TRUE(same(got[static_cast<size_t>(d)], sumOf(parts)))
            << describe(c) << " device " << d << " " << dtypeName(t);
      }
    }
}

TEST(CollectivesTest, AllReduceOfIntegersSumsInInt64) {
  Mesh m = Mesh::parse("data=3");
  int64_t big = int64_t(1) << 40;
  auto got = onDevices(m, [&](Collectives& c) {
    return c.allReduce(i64({2}, {big * (c.device() + 1), -c.device()}), {"data"});
  });
  EXPECT_TRUE(same(got[2], i64({2}, {6 * big, -3})));
  // i32 sums wrap only when rounded back to 32 bits.
  auto wide = onDevices(m, [&](Collectives& c) {
    return c.allReduce(i32({1}, {c.device() == 1 ? -2 : 2000000000}), {"data"});
  });
  EXPECT_TRUE(same(wide[0], i32({1}, {static_cast<int32_t>(int64_t(3999999998))})));
}

TEST(CollectivesTest, AllGather) {
  for (const Case& c : kCases)
    for (int64_t dim : {0, 1, -1}) {
      Mesh m = Mesh::parse(c.mesh);
      auto got = onDevices(m, [&](Collectives& comm) {
        return comm.allGather(input(comm.device(), {2, 3}), c.axes, dim);
      });
      for (int64_t d = 0; d < m.numDevices(); ++d) {
        std::vector<Tensor> parts;
        for (int64_t e : members(m, d, c.axes))
          parts.push_back(input(e, {2, 3}));
        EXPECT_TRUE(same(got[static_cast<size_t>(d)], concatOf(parts, dim)))
            << describe(c) << " dim " << dim << " device " << d;
      }
    }
}

TEST(CollectivesTest, ReduceScatter) {
  for (const Case& c : kCases) {
    Mesh m = Mesh::parse(c.mesh);
    int64_t n = m.groupSize(c.axes);
    auto got = onDevices(m, [&](Collectives& comm) {
      return comm.reduceScatter(input(comm.device(), {2, 3 * n}), c.axes, -1);
    });
    for (int64_t d = 0; d < m.numDevices(); ++d) {
      std::vector<Tensor> parts;
      for (int64_t e : members(m, d, c.axes))
        parts.push_back(input(e, {2, 3 * n}));
      EXPECT_TRUE(
          same(got[static_cast<size_t>(d)], pieceOf(sumOf(parts), 1, rankOf(m, d, c.axes), n)))
          << describe(c) << " device " << d;
    }
  }
}

TEST(CollectivesTest, AllToAll) {
  for (const Case& c : kCases)
    for (auto axes : {std::pair<int64_t, int64_t>{0, 1}, {1, 0}, {0, 0}, {-1, -1}}) {
      int64_t split = axes.first, cat = axes.second; // captured below, unlike a binding
      Mesh m = Mesh::parse(c.mesh);
      int64_t n = m.groupSize(c.axes);
      Shape shape = {2 * n, 3 * n};
      auto got = onDevices(m, [&](Collectives& comm) {
        return comm.allToAll(input(comm.device(), shape), c.axes, split, cat);
      });
      for (int64_t d = 0; d < m.numDevices(); ++d) {
        // Piece q of the result is piece (my rank) of rank q's input.
        std::vector<Tensor> parts;
        for (int64_t e : members(m, d, c.axes))
          parts.push_back(pieceOf(input(e, shape), (split + 2) % 2, rankOf(m, d, c.axes), n));
        EXPECT_TRUE(same(got[static_cast<size_t>(d)], concatOf(parts, cat)))
            << describe(c) << " split " << split << " concat " << cat << " device " << d;
      }
    }
}

TEST(CollectivesTest, Permute) {
  for (const Case& c : kCases) {
    Mesh m = Mesh::parse(c.mesh);
    int64_t n = m.groupSize(c.axes);
    // A shift by one that leaves the last rank out: rank 0 receives nothing.
    std::vector<int64_t> pairs;
    for (int64_t r = 0; r + 1 < n; ++r)
      pairs.insert(pairs.end(), {r, r + 1});
    auto got = onDevices(m, [&](Collectives& comm) {
      return comm.permute(input(comm.device(), {2, 2}), c.axes, pairs);
    });
    for (int64_t d = 0; d < m.numDevices(); ++d) {
      int64_t r = rankOf(m, d, c.axes);
      Tensor want = r == 0 ? f32({2, 2}, {0, 0, 0, 0})
                           : input(members(m, d, c.axes)[static_cast<size_t>(r - 1)], {2, 2});
      EXPECT_TRUE(same(got[static_cast<size_t>(d)], want)) << describe(c) << " device " << d;
    }
  }
}

TEST(CollectivesTest, ShardSlice) {
  for (const Case& c : kCases) {
    Mesh m = Mesh::parse(c.mesh);
    int64_t n = m.groupSize(c.axes);
    Tensor whole = input(7, {n, 4});
    auto got = onDevices(m, [&](Collectives& comm) { return comm.shardSlice(whole, c.axes, 0); });
    for (int64_t d = 0; d < m.numDevices(); ++d)
      EXPECT_TRUE(same(got[static_cast<size_t>(d)], pieceOf(whole, 0, rankOf(m, d, c.axes), n)))
          << describe(c) << " device " << d;
  }
}

TEST(CollectivesTest, BadArgumentsAreErrorsOnEveryDevice) {
  Mesh m = Mesh::parse("data=2,model=2");
  auto error = [&](const std::function<Tensor(Collectives&)>& fn) {
    try {
      onDevices(m, fn);
    } catch (const Error& e) {
      return std::string(e.what()).substr(std::string("device N: ").size());
    }
    return std::string();
  };
  Tensor x = f32({3}, {1, 2, 3});
  EXPECT_EQ(error([&](Collectives& c) { return c.allReduce(x, {"seq"}); }),
            "axis 'seq' is not in the mesh data=2,model=2");
  EXPECT_EQ(error([&](Collectives& c) {
              return c.allReduce(x, {"data", "data"});
            }),
            "axis 'data' is listed twice");
  EXPECT_EQ(error([&](Collectives& c) { return c.allGather(x, {"data"}, 1); }),
            "dim 1 is out of range for f32[3]");
  EXPECT_EQ(error([&](Collectives& c) { return c.reduceScatter(x, {"data"}, 0); }),
            "dim 0 of f32[3] does not divide into 2 pieces");
  EXPECT_EQ(error([&](Collectives& c) {
              return c.permute(x, {"data"}, {0, 1, 1, 1});
            }),
            "pair (1, 1) reuses a source or a target");
  EXPECT_EQ(error([&](Collectives& c) {
              return c.permute(x, {"data"}, {0, 2});
            }),
            "pair (0, 2) names a rank outside the group of 2");
}

TEST(CollectivesTest, AFailingDeviceAbortsTheOthers) {
  Mesh m = Mesh::parse("data=4");
  for (int step : {0, 1}) {
    try {
      runOnDevices(m, [&](Collectives& c) {
        Tensor x = f32({1}, {1});
        for (int i = 0; i < 3; ++i) {
          if (c.device() == 2 && i == step) throw Error("boom at step " + std::to_string(i));
          x = c.allReduce(x, {"data"});
        }
        return std::vector<Tensor>{x};
      });
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "device 2: boom at step " + std::to_string(step));
    }
  }
}

// Device threads kept across runs pair each run's collectives with the same run's on the
// other devices; a failure stops them for good.
TEST(CollectivesTest, DeviceThreadsServeManyRuns) {
  DeviceThreads devices(Mesh::parse("data=2,model=2"));
  for (int run = 1; run <= 50; ++run) {
    auto results = devices.run([&](Collectives& c) {
      Tensor x = f32({1}, {static_cast<double>(run * (c.device() + 1))});
      x = c.allReduce(x, {"model"});
      return std::vector<Tensor>{c.allReduce(x, {"data", "model"})};
    });
    ASSERT_EQ(results.size(), 4u);
    for (const auto& r : results)
      ASSERT_EQ(r[0].getDouble(0), run * 20.0) << "run " << run; // 2 (1 + 2) + 2 (3 + 4)
  }
  auto failing = [](Collectives& c) {
    if (c.device() == 1) throw Error("boom");
    return std::vector<Tensor>{c.allReduce(f32({1}, {1}), {"data"})};
  };
  EXPECT_THROW(
      try { devices.run(failing); } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "device 1: boom");
        throw;
      },
      Error);
  EXPECT_THROW(
      try { devices.run(failing); } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "device 1: boom (the devices stopped then)");
        throw;
      },
      Error);
}

namespace {
const char* kProgram = R"(
func @step(input %x: f32[2,3], param %w: f32[3,4]) -> (y: f32[2,4], g: f32[4,4], p: f32[2,3]) {
  %h = matmul(%x, %w) : f32[2,4]
  %y = all_reduce(%h) {axes = "data,model", group = 4} : f32[2,4]
  %g = all_gather(%y) {axes = "model", group = 2, dim = 0} : f32[4,4]
  %p = collective_permute(%x) {axes = "data", group = 2, pairs = [0, 1, 1, 0]} : f32[2,3]
  return %y, %g, %p
}
)";

std::unique_ptr<Module> parse(const char* text) {
  DiagEngine diags("<test>");
  auto m = parseModule(text, diags);
  for (const Diagnostic& d : diags.diagnostics())
    ADD_FAILURE() << diags.format(d);
  return m;
}
} // namespace

TEST(CollectivesTest, RunsAPerDeviceProgram) {
  auto module = parse(kProgram);
  ASSERT_TRUE(module);
  const Function& f = *module->functions()[0];
  Mesh m = Mesh::parse("data=2,model=2");
  std::vector<std::vector<Tensor>> args;
  for (int64_t d = 0; d < 4; ++d)
    args.push_back({input(d, {2, 3}), input(10 + d, {3, 4})});
  auto got = runOnDevices(f, m, args);
  std::vector<Tensor> h;
  for (int64_t d = 0; d < 4; ++d)
    h.push_back(run1("matmul", args[static_cast<size_t>(d)]));
  Tensor y = sumOf(h);
  for (size_t d = 0; d < 4; ++d) {
    EXPECT_TRUE(same(got[d][0], y)) << d;
    EXPECT_TRUE(same(got[d][1], concatOf({y, y}, 0))) << d;
    // Devices 0 and 2 (data 0 and 1, model 0) swap their x; so do 1 and 3.
    EXPECT_TRUE(same(got[d][2], args[d ^ 2][0])) << d;
  }
}

TEST(CollectivesTest, CollectiveOpsNeedADeviceMesh) {
  auto module = parse(kProgram);
  ASSERT_TRUE(module);
  try {
    interpret(*module->functions()[0], {input(0, {2, 3}), input(1, {3, 4})});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "'all_reduce' op at line 4: op 'all_reduce' needs a device mesh (run the "
              "partitioned program with shardc run)");
  }
  // A group that does not match the mesh is an error too.
  EXPECT_THROW(
      runOnDevices(*module->functions()[0], Mesh::parse("data=2,model=3"),
                   std::vector<std::vector<Tensor>>(6, {input(0, {2, 3}), input(1, {3, 4})})),
      Error);
}

TEST(CollectivesTest, CanonicalizeNeverFoldsACollective) {
  auto module = parse(R"(
func @f() -> (r: f32[2]) {
  %c = constant() {value = dense<f32[2], [1.0, 2.0]>} : f32[2]
  %r = all_reduce(%c) {axes = "data", group = 2} : f32[2]
  return %r
}
)");
  ASSERT_TRUE(module);
  Function& f = *module->functions()[0];
  canonicalize(f);
  EXPECT_EQ(f.results()[0].value->definingOp()->name(), "all_reduce");
}

TEST(CollectivesTest, ShapeRules) {
  TensorType x{DType::F32, {4, 6}};
  auto attrs = [](AttrDict extra) {
    extra.set("axes", "data,model");
    extra.set("group", 3);
    return extra;
  };
  auto result = [&](const std::string& op, AttrDict a) {
    std::vector<TensorType> res;
    std::string err = checkOp(*OpRegistry::get().lookup(op), {x}, a, res);
    return err.empty() ? res[0].str() : err;
  };
  EXPECT_EQ(result("all_reduce", attrs({})), "f32[4,6]");
  EXPECT_EQ(result("all_gather", attrs({{"dim", -1}})), "f32[4,18]");
  EXPECT_EQ(result("reduce_scatter", attrs({{"dim", 1}})), "f32[4,2]");
  EXPECT_EQ(result("all_to_all", attrs({{"split_dim", 1}, {"concat_dim", 0}})), "f32[12,2]");
  EXPECT_EQ(result("collective_permute", attrs({{"pairs", std::vector<int64_t>{0, 2, 2, 0}}})),
            "f32[4,6]");
  EXPECT_EQ(result("shard_slice", attrs({{"dim", -1}})), "f32[4,2]");

  EXPECT_EQ(result("reduce_scatter", attrs({{"dim", 0}})),
            "dim 0 of f32[4,6] does not divide into 3 pieces");
  EXPECT_EQ(result("all_to_all", attrs({{"split_dim", 0}, {"concat_dim", 1}})),
            "dim 0 of f32[4,6] does not divide into 3 pieces");
  EXPECT_EQ(result("all_gather", attrs({{"dim", 2}})),
            "attribute 'dim' = 2 is out of range for rank 2");
  EXPECT_EQ(result("collective_permute", attrs({{"pairs", std::vector<int64_t>{0, 3}}})),
            "pair (0, 3) names a rank outside the group of 3");
  EXPECT_EQ(result("collective_permute", attrs({{"pairs", std::vector<int64_t>{0, 1, 2, 1}}})),
            "pair (2, 1) reuses a source or a target");
  EXPECT_EQ(result("collective_permute", attrs({{"pairs", std::vector<int64_t>{0}}})),
            "pairs must list (source, target) ranks, got an odd count");
  EXPECT_EQ(result("all_reduce", {{"axes", "data,,model"}, {"group", 3}}),
            "axes 'data,,model' has an empty axis name");
  EXPECT_EQ(result("all_reduce", {{"axes", "data,data"}, {"group", 3}}),
            "axes 'data,data' lists 'data' twice");
  EXPECT_EQ(result("all_reduce", {{"axes", "data"}, {"group", 0}}),
            "group must be at least 1, got 0");
}

TEST(CollectivesTest, BytesSentPerDevice) {
  std::vector<TensorType> x = {TensorType{DType::F32, {4, 6}}}; // 96 bytes
  auto bytes = [&](const std::string& op, AttrDict a) {
    a.set("axes", "data");
    a.set("group", 4);
    const OpDef& def = *OpRegistry::get().lookup(op);
    std::vector<TensorType> res;
    EXPECT_EQ(checkOp(def, x, a, res), "") << op;
    return def.byteCount(OpSig{x, a}, res);
  };
  EXPECT_EQ(bytes("all_reduce", {}), 144);
  EXPECT_EQ(bytes("all_gather", {{"dim", 0}}), 288);
  EXPECT_EQ(bytes("reduce_scatter", {{"dim", 0}}), 72);
  EXPECT_EQ(bytes("all_to_all", {{"split_dim", 0}, {"concat_dim", 1}}), 72);
  EXPECT_EQ(bytes("collective_permute", {{"pairs", std::vector<int64_t>{0, 1}}}), 96);
  EXPECT_EQ(bytes("shard_slice", {{"dim", 0}}), 0);
}
