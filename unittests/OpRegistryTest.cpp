// Registry-wide checks: every op has numeric tests, and every op's flop formula gives the
// expected count for one representative case.
#include "OpTestUtil.h"

#include "shardc/ops/OpNames.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace shardc;
using namespace shardc::testing;

namespace {

using Ints = std::vector<int64_t>;

// Ops with numeric tests in unittests/*OpTest.cpp. A new op must get tests there and an
// entry here (and a flop case below), or this suite fails.
const std::set<std::string> kNumericallyTested = {
    // ElementwiseOpTest.cpp
    "neg", "abs", "relu", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "erf", "sigmoid",
    "floor", "ceil", "not", "gelu", "gelu_grad", "add", "sub", "mul", "div", "pow", "max", "min",
    "and", "or", "compare", "where", "cast",
    // MatmulOpTest.cpp
    "matmul",
    // ReduceOpTest.cpp
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "argmax",
    // NormOpTest.cpp
    "softmax", "log_softmax", "layer_norm",
    // ShapeOpTest.cpp
    "transpose", "reshape", "broadcast", "slice", "reverse", "concat", "split", "pad",
    // IndexOpTest.cpp
    "constant", "iota", "gather", "scatter_add",
    // ConvOpTest.cpp
    "conv2d", "max_pool2d", "avg_pool2d", "conv2d_backward_input", "conv2d_backward_filter",
    "max_pool2d_backward", "avg_pool2d_backward",
    // CollectivesTest.cpp
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "collective_permute", "shard_slice",
    // RandomOpTest.cpp
    "dropout",
    // HypersectionTest.cpp
    "call",
    // ScanTest.cpp
    "scan"};

TEST(OpRegistryTest, EveryOpHasNumericTests) {
  std::set<std::string> registered;
  for (const auto& def : OpRegistry::get().all()) {
    registered.insert(def->name);
    EXPECT_TRUE(kNumericallyTested.count(def->name))
        << "op '" << def->name << "' has no numeric test; add one under unittests/ and list it "
        << "in kNumericallyTested";
  }
  for (const std::string& name : kNumericallyTested)
    EXPECT_TRUE(registered.count(name)) << "kNumericallyTested lists unknown op '" << name << "'";
}

TEST(OpRegistryTest, OpNamesListsEveryOpOnce) {
  std::set<std::string> registered, listed;
  for (const auto& def : OpRegistry::get().all())
    registered.insert(def->name);
  for (std::string_view name : opname::kAll)
    EXPECT_TRUE(listed.insert(std::string(name)).second)
        << "OpNames.h lists '" << name << "' twice";
  EXPECT_EQ(listed, registered) << "OpNames.h and the registry disagree";
}

struct FlopCase {
  std::string op;
  std::vector<TensorType> operands;
  AttrDict attrs;
  double flops;
};

TensorType f32t(Shape s) {
  return TensorType{DType::F32, std::move(s)};
}

std::vector<FlopCase> flopCases() {
  // Elementwise ops count per result element: [2,1] op [3] broadcasts to 6 elements.
  TensorType x = f32t({2, 3}), col = f32t({2, 1}), row = f32t({3});
  TensorType b = TensorType{DType::I1, {2, 3}};
  auto value = std::make_shared<const Tensor>(f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  return {
      {"neg", {x}, {}, 6},
      {"abs", {x}, {}, 6},
      {"relu", {x}, {}, 6},
      {"exp", {x}, {}, 6},
      {"log", {x}, {}, 6},
      {"sqrt", {x}, {}, 6},
      {"rsqrt", {x}, {}, 12}, // sqrt and divide
      {"reciprocal", {x}, {}, 6},
      {"tanh", {x}, {}, 6},
      {"erf", {x}, {}, 6},
      {"sigmoid", {x}, {}, 18}, // exp, add, divide
      {"floor", {x}, {}, 6},
      {"ceil", {x}, {}, 6},
      {"not", {b}, {}, 6},
      {"gelu", {x}, {}, 48},
      {"gelu_grad", {x, x}, {}, 120},
      {"add", {col, row}, {}, 6},
      {"sub", {col, row}, {}, 6},
      {"mul", {col, row}, {}, 6},
      {"div", {col, row}, {}, 6},
      {"pow", {col, row}, {}, 6},
      {"max", {col, row}, {}, 6},
      {"min", {col, row}, {}, 6},
      {"and", {b, b}, {}, 6},
      {"or", {b, b}, {}, 6},
      {"compare", {col, row}, {{"direction", "lt"}}, 6},
      {"where", {b, x, x}, {}, 0}, // a select moves data, no arithmetic
      {"cast", {x}, {{"to", DType::F16}}, 0},
      // 2*M*N*K: [2,3] x [3,4] = 2*2*4*3, and 5 batches of it.
      {"matmul", {f32t({2, 3}), f32t({3, 4})}, {}, 48},
      {"matmul", {f32t({5, 2, 3}), f32t({3, 4})}, {}, 240},
      // Reductions: one op per input element.
      {"reduce_sum", {f32t({2, 3, 4})}, {{"axes", Ints{0, 2}}}, 24},
      {"reduce_mean", {f32t({2, 3, 4})}, {{"axes", Ints{1}}}, 24},
      {"reduce_max", {f32t({2, 3, 4})}, {{"axes", Ints{2}}}, 24},
      {"reduce_min", {f32t({2, 3, 4})}, {{"axes", Ints{0, 1, 2}}}, 24},
      {"argmax", {f32t({2, 3, 4})}, {{"axis", 1}}, 24}, // one comparison per element
      {"softmax", {x}, {}, 30},
      {"log_softmax", {x}, {}, 30},
      {"layer_norm", {x, row, row}, {}, 48},
      // Data movement and constants: no arithmetic.
      {"transpose", {x}, {{"perm", Ints{1, 0}}}, 0},
      {"reshape", {x}, {{"shape", Ints{6}}}, 0},
      {"broadcast", {row}, {{"shape", Ints{2, 3}}}, 0},
      {"slice", {x}, {{"start", Ints{0, 0}}, {"limit", Ints{2, 2}}, {"stride", Ints{1, 1}}}, 0},
      {"reverse", {x}, {{"axes", Ints{1}}}, 0},
      // dropout: one multiply per element.
      {"dropout",
       {x, TensorType{DType::F64, {}}, TensorType{DType::I64, {2}}, TensorType{DType::I64, {2, 1}},
        TensorType{DType::I64, {1, 3}}},
       {{"strides", Ints{3, 1}}},
       6},
      {"concat", {x, x}, {{"axis", 0}}, 0},
      {"split", {x}, {{"axis", 1}, {"sizes", Ints{1, 2}}}, 0},
      {"constant", {}, {{"value", value}}, 0},
      {"iota", {}, {{"shape", Ints{2, 3}}}, 0},
      {"gather", {x, TensorType{DType::I64, {4}}}, {}, 0},
      {"pad", {x}, {{"low", Ints{1, 0}}, {"high", Ints{0, 1}}, {"interior", Ints{0, 0}}}, 0},
      // scatter_add: one addition per update element.
      {"scatter_add", {TensorType{DType::I64, {4}}, f32t({4, 3})}, {{"shape", Ints{2, 3}}}, 12},
      // conv2d: 2 * output elements * (C/groups * KH * KW). [1,2,5,5] * [4,2,3,3] -> [1,4,3,3]:
      // 2 * 36 * 18. With groups 2 over 4 channels each filter still sees 2 channels; stride 2
      // and pad 1 keep the 3x3 output.
      {"conv2d", {f32t({1, 2, 5, 5}), f32t({4, 2, 3, 3})}, {}, 1296},
      {"conv2d",
       {f32t({1, 4, 5, 5}), f32t({4, 2, 3, 3}), f32t({4})},
       {{"groups", 2}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}},
       1296},
      // Pooling: kernel area per output element; [1,1,4,4] with 2x2 stride 2 -> 4 outputs.
      {"max_pool2d", {f32t({1, 1, 4, 4})}, {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}}, 16},
      {"avg_pool2d", {f32t({1, 1, 4, 4})}, {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}}, 16},
      // The backward ops count as their forward op: the same products and the same taps.
      {"conv2d_backward_input",
       {f32t({1, 4, 3, 3}), f32t({4, 2, 3, 3})},
       {{"input_shape", Ints{1, 2, 5, 5}}},
       1296},
      {"conv2d_backward_filter",
       {f32t({1, 4, 5, 5}), f32t({1, 4, 3, 3})},
       {{"groups", 2},
        {"strides", Ints{2, 2}},
        {"pads", Ints{1, 1, 1, 1}},
        {"filter_shape", Ints{4, 2, 3, 3}}},
       1296},
      {"max_pool2d_backward",
       {f32t({1, 1, 4, 4}), f32t({1, 1, 2, 2})},
       {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}},
       16},
      {"avg_pool2d_backward",
       {f32t({1, 1, 2, 2})},
       {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"input_shape", Ints{1, 1, 4, 4}}},
       16},
      // Collectives communicate; the additions of a reduction are not counted.
      {"all_reduce", {x}, {{"axes", "data"}, {"group", 2}}, 0},
      // A call's work is priced in its callee's ops, where the program was priced.
      {"call", {x}, {{"callee", "body"}}, 0},
      {"scan", {x}, {{"callee", "body"}, {"length", 2}, {"carried", 1}}, 0},
      {"all_gather", {x}, {{"axes", "data"}, {"group", 2}, {"dim", 1}}, 0},
      {"reduce_scatter", {x}, {{"axes", "data"}, {"group", 2}, {"dim", 0}}, 0},
      {"all_to_all", {x}, {{"axes", "data"}, {"group", 2}, {"split_dim", 0}, {"concat_dim", 1}}, 0},
      {"collective_permute", {x}, {{"axes", "data"}, {"group", 2}, {"pairs", Ints{0, 1, 1, 0}}}, 0},
      {"shard_slice", {x}, {{"axes", "model"}, {"group", 2}, {"dim", 0}}, 0},
  };
}

TEST(OpRegistryTest, FlopFormulas) {
  std::set<std::string> seen;
  for (const FlopCase& c : flopCases()) {
    const OpDef* def = OpRegistry::get().lookup(c.op);
    ASSERT_TRUE(def) << c.op;
    seen.insert(c.op);
    AttrDict attrs = c.attrs;
    std::vector<TensorType> results;
    std::string err = checkOp(*def, c.operands, attrs, results);
    ASSERT_EQ(err, "") << c.op;
    double f = def->flopCount(OpSig{c.operands, attrs}, results);
    EXPECT_TRUE(std::isfinite(f) && f >= 0) << c.op << ": " << f;
    EXPECT_EQ(f, c.flops) << c.op << " on " << c.operands.size() << " operands";
  }
  // Every registered op has a representative case.
  for (const auto& def : OpRegistry::get().all())
    EXPECT_TRUE(seen.count(def->name)) << "no flop case for op '" << def->name << "'";
}

} // namespace

TEST(OpRegistryTest, EveryOpHasAShardingRuleThatFitsItsFlopCase) {
  // The rule must name one factor list per operand and result dimension, with factor sizes
  // that multiply to the dimension's size (size-1 dims may have no factor).
  for (const FlopCase& c : flopCases()) {
    const OpDef* def = OpRegistry::get().lookup(c.op);
    ASSERT_TRUE(def->shardingRule) << c.op << " has no sharding rule";
    AttrDict attrs = c.attrs;
    std::vector<TensorType> results;
    ASSERT_EQ(checkOp(*def, c.operands, attrs, results), "") << c.op;
    ShardingRule rule = def->shardingRule(OpSig{c.operands, attrs}, results);
    auto check = [&](const std::vector<TensorType>& types,
                     const std::vector<ShardingRule::Dims>& dims, const char* what) {
      ASSERT_EQ(types.size(), dims.size()) << c.op << " " << what;
      for (size_t t = 0; t < types.size(); ++t) {
        ASSERT_EQ(static_cast<size_t>(types[t].rank()), dims[t].size())
            << c.op << " " << what << " " << t;
        for (size_t d = 0; d < dims[t].size(); ++d) {
          int64_t product = 1;
          for (int f : dims[t][d])
            product *= rule.factorSizes[static_cast<size_t>(f)];
          EXPECT_EQ(product, types[t].shape[d])
              << c.op << " " << what << " " << t << " dim " << d << ": " << rule.str();
        }
      }
    };
    check(c.operands, rule.operands, "operand");
    check(results, rule.results, "result");
  }
}
