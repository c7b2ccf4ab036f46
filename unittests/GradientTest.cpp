// Every gradient rule against central finite differences in float64, through the real
// autodiff pass: loss = sum_k <result_k, R_k> for fixed random R_k, so each rule is checked
// with a non-trivial incoming gradient.
#include "TestUtil.h"

#include "shardc/exec/Interpreter.h"
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/train/Autodiff.h"

#include <cmath>
#include <random>
#include <set>

using namespace shardc;
using namespace shardc::testing;

namespace {

using Ints = std::vector<int64_t>;

enum class Range { Any, Positive, Fraction };

struct Arg {
  TensorType type;
  Range range = Range::Any;
  std::vector<int64_t> ints = {}; // fixed values for integer and bool operands
};

struct GradCase {
  std::string op;
  std::vector<Arg> args;
  AttrDict attrs = {};
  double h = 1e-6, tol = 1e-6;
};

TensorType f64t(Shape s) {
  return TensorType{DType::F64, std::move(s)};
}

Tensor makeArg(const Arg& a, std::mt19937_64& gen) {
  Tensor t(a.type);
  std::uniform_real_distribution<double> any(-1.0, 1.0), pos(0.5, 2.0), frac(0.1, 0.6);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (!isFloat(a.type.dtype))
      t.setInt(i, a.ints[static_cast<size_t>(i)]);
    else
      t.setDouble(i, a.range == Range::Positive   ? pos(gen)
                     : a.range == Range::Fraction ? frac(gen)
                                                  : any(gen));
  }
  return t;
}

// Builds loss(args) = sum_k <op(args)_k, R_k> and its gradients; returns the loss function
// evaluator and the analytic gradients for every floating-point argument.
void checkGradients(const GradCase& c) {
  SCOPED_TRACE("op " + c.op);
  std::mt19937_64 gen(42);
  Function f("grad");
  std::vector<Value*> args, wrt;
  std::vector<Tensor> values;
  for (size_t i = 0; i < c.args.size(); ++i) {
    args.push_back(f.addArgument("a" + std::to_string(i), c.args[i].type, ArgKind::Param));
    values.push_back(makeArg(c.args[i], gen));
    if (isFloat(c.args[i].type.dtype)) wrt.push_back(args.back());
  }
  Builder b(f);
  Op* op = b.create(c.op, args, c.attrs);
  Value* loss = nullptr;
  for (size_t k = 0; k < op->numResults(); ++k) {
    Value* r = op->result(k);
    if (!isFloat(r->type().dtype)) continue;
    Tensor weights(r->type());
    std::uniform_real_distribution<double> w(-1.0, 1.0);
    for (int64_t i = 0; i < weights.numel(); ++i)
      weights.setDouble(i, w(gen));
    Value* R = b.value("constant", {}, {{"value", TensorRef(std::make_shared<Tensor>(weights))}});
    Value* rf = r->type().dtype == DType::F64 ? r : b.value("cast", {r}, {{"to", DType::F64}});
    Value* Rf = r->type().dtype == DType::F64 ? R : b.value("cast", {R}, {{"to", DType::F64}});
    Ints all;
    for (int64_t i = 0; i < r->type().rank(); ++i)
      all.push_back(i);
    Value* term = b.value("reduce_sum", {b.value("mul", {rf, Rf})}, {{"axes", all}});
    loss = loss ? b.value("add", {loss, term}) : term;
  }
  ASSERT_TRUE(loss);
  f.addResult("loss", loss);
  std::vector<Value*> grads = buildGradients(f, loss, wrt);
  // A rule may report "no gradient" (floor): the finite differences must then be zero.
  for (size_t i = 0; i < grads.size(); ++i)
    f.addResult("g" + std::to_string(i),
                grads[i]
                    ? grads[i]
                    : b.value("constant", {},
                              {{"value", TensorRef(std::make_shared<Tensor>(wrt[i]->type()))}}));
  std::vector<Tensor> out = interpret(f, values);
  auto lossAt = [&](const std::vector<Tensor>& v) { return interpret(f, v)[0].getDouble(0); };
  size_t g = 0;
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (!isFloat(c.args[i].type.dtype)) continue;
    const Tensor& analytic = out[1 + g++];
    for (int64_t j = 0; j < values[i].numel(); ++j) {
      std::vector<Tensor> plus = values, minus = values;
      double x = values[i].getDouble(j);
      plus[i].setDouble(j, x + c.h);
      minus[i].setDouble(j, x - c.h);
      double fd = (lossAt(plus) - lossAt(minus)) / (2 * c.h);
      double an = analytic.getDouble(j);
      EXPECT_NEAR(an, fd, c.tol * std::max(1.0, std::fabs(fd)))
          << "operand " << i << " element " << j;
    }
  }
}

std::vector<GradCase> cases() {
  Arg x{f64t({2, 3})}, pos{f64t({2, 3}), Range::Positive}, row{f64t({3})}, col{f64t({2, 1})};
  Arg x3{f64t({2, 3, 4})};
  std::vector<GradCase> cs;
  for (const char* u : {"neg", "abs", "relu", "exp", "tanh", "erf", "sigmoid", "floor", "ceil"})
    cs.push_back({u, {x}});
  for (const char* u : {"log", "sqrt", "rsqrt", "reciprocal"})
    cs.push_back({u, {pos}});
  cs.push_back({"gelu", {x}, {{"approximate", "none"}}});
  cs.push_back({"gelu", {x}, {{"approximate", "tanh"}}});
  for (const char* bop : {"add", "sub", "mul", "max", "min"}) {
    cs.push_back({bop, {x, x}});
    cs.push_back({bop, {x, row}});   // broadcast over rows
    cs.push_back({bop, {col, row}}); // both broadcast
  }
  cs.push_back({"div", {x, pos}});
  cs.push_back({"div", {row, Arg{f64t({2, 1}), Range::Positive}}});
  cs.push_back({"pow", {pos, x}});
  cs.push_back({"pow", {pos, Arg{f64t({}), Range::Positive}}});
  cs.push_back(
      {"where", {Arg{TensorType{DType::I1, {2, 3}}, Range::Any, {1, 0, 0, 1, 1, 0}}, x, row}});
  cs.push_back({"cast", {x}, {{"to", DType::F32}}, 1e-3, 1e-3}); // result rounds to float32
  cs.push_back({"matmul", {x, Arg{f64t({3, 4})}}});
  cs.push_back({"matmul", {x3, Arg{f64t({4, 2})}}}); // batch dims broadcast against none
  cs.push_back({"matmul", {Arg{f64t({2, 1, 2, 3})}, Arg{f64t({3, 3, 2})}}});
  cs.push_back({"reduce_sum", {x3}, {{"axes", Ints{0, 2}}}});
  cs.push_back({"reduce_mean", {x3}, {{"axes", Ints{1}}, {"keepdims", true}}});
  cs.push_back({"reduce_max", {x3}, {{"axes", Ints{2}}}});
  cs.push_back({"reduce_min", {x3}, {{"axes", Ints{0, 1}}, {"keepdims", true}}});
  cs.push_back({"softmax", {x3}, {{"axis", 1}}});
  cs.push_back({"softmax", {x3}, {{"axis", -1}}});
  cs.push_back({"log_softmax", {x3}, {{"axis", 0}}});
  cs.push_back({"layer_norm", {x3, Arg{f64t({4})}, Arg{f64t({4})}}});
  cs.push_back({"layer_norm", {x3, Arg{f64t({3, 4})}}, {{"axis", 1}}});
  cs.push_back({"layer_norm", {x3}, {{"axis", -1}, {"epsilon", 0.1}}});
  cs.push_back({"transpose", {x3}, {{"perm", Ints{2, 0, 1}}}});
  cs.push_back({"reshape", {x3}, {{"shape", Ints{4, 6}}}});
  cs.push_back({"broadcast", {col}, {{"shape", Ints{4, 2, 3}}}});
  cs.push_back({"slice",
                {x3},
                {{"start", Ints{0, 1, 1}}, {"limit", Ints{2, 3, 4}}, {"stride", Ints{1, 1, 2}}}});
  cs.push_back({"reverse", {x3}, {{"axes", Ints{0, 2}}}});
  // Dropout at 0.3 of [2,3,4] with its index operands: x and the ratio (the mask holds
  // still under the finite differences).
  cs.push_back(
      {"dropout",
       {x3, Arg{f64t({}), Range::Fraction}, Arg{TensorType{DType::I64, {2}}, Range::Any, {5, 2}},
        Arg{TensorType{DType::I64, {2, 1, 1}}, Range::Any, {0, 1}},
        Arg{TensorType{DType::I64, {1, 3, 1}}, Range::Any, {0, 1, 2}},
        Arg{TensorType{DType::I64, {1, 1, 4}}, Range::Any, {0, 1, 2, 3}}},
       {{"strides", Ints{12, 4, 1}}}});
  cs.push_back({"concat", {x, Arg{f64t({1, 3})}, x}, {{"axis", 0}}});
  cs.push_back({"split", {x3}, {{"axis", 2}, {"sizes", Ints{1, 3}}}});
  cs.push_back({"pad", {x}, {{"low", Ints{1, 0}}, {"high", Ints{0, 2}}, {"interior", Ints{1, 1}}}});
  cs.push_back(
      {"gather",
       {Arg{f64t({4, 3})}, Arg{TensorType{DType::I64, {2, 2}}, Range::Any, {3, 0, 3, -1}}}});
  cs.push_back(
      {"gather", {x3, Arg{TensorType{DType::I32, {3}}, Range::Any, {1, 1, 0}}}, {{"axis", 1}}});
  cs.push_back({"scatter_add",
                {Arg{TensorType{DType::I64, {3}}, Range::Any, {2, 0, 2}}, Arg{f64t({3, 2})}},
                {{"shape", Ints{4, 2}}}});
  // Convolution: plain; with bias, stride, asymmetric pads, dilation and 2 groups of 2
  // filters; depthwise with stride and pads; bias with same-size padding.
  cs.push_back({"conv2d", {Arg{f64t({2, 2, 4, 5})}, Arg{f64t({3, 2, 3, 2})}}});
  cs.push_back({"conv2d",
                {Arg{f64t({2, 4, 5, 6})}, Arg{f64t({4, 2, 2, 3})}, Arg{f64t({4})}},
                {{"strides", Ints{2, 1}},
                 {"pads", Ints{1, 0, 2, 1}},
                 {"dilations", Ints{1, 2}},
                 {"groups", 2}}});
  cs.push_back({"conv2d",
                {Arg{f64t({1, 3, 5, 4})}, Arg{f64t({3, 1, 2, 2})}},
                {{"strides", Ints{2, 2}}, {"pads", Ints{0, 1, 1, 0}}, {"groups", 3}}});
  cs.push_back({"conv2d",
                {Arg{f64t({1, 2, 4, 4})}, Arg{f64t({2, 2, 3, 3})}, Arg{f64t({2})}},
                {{"pads", Ints{1, 1, 1, 1}}}});
  // The conv2d backward ops are linear in each operand; their rules are each other and conv2d.
  cs.push_back({"conv2d_backward_input",
                {Arg{f64t({2, 4, 4, 3})}, Arg{f64t({4, 2, 2, 3})}},
                {{"strides", Ints{2, 1}},
                 {"pads", Ints{1, 0, 2, 1}},
                 {"dilations", Ints{1, 2}},
                 {"groups", 2},
                 {"input_shape", Ints{2, 4, 5, 6}}}});
  cs.push_back({"conv2d_backward_filter",
                {Arg{f64t({2, 4, 5, 6})}, Arg{f64t({2, 4, 4, 3})}},
                {{"strides", Ints{2, 1}},
                 {"pads", Ints{1, 0, 2, 1}},
                 {"dilations", Ints{1, 2}},
                 {"groups", 2},
                 {"filter_shape", Ints{4, 2, 2, 3}}}});
  // Pooling: uniform random inputs have no ties, so max pooling is smooth at them.
  Arg img{f64t({2, 2, 5, 6})};
  cs.push_back({"max_pool2d",
                {img},
                {{"kernel", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 0}}}});
  cs.push_back({"max_pool2d",
                {img},
                {{"kernel", Ints{2, 2}}, {"dilations", Ints{2, 1}}, {"pads", Ints{1, 1, 1, 1}}}});
  for (bool include : {false, true}) {
    cs.push_back({"avg_pool2d",
                  {img},
                  {{"kernel", Ints{3, 2}},
                   {"strides", Ints{2, 2}},
                   {"pads", Ints{1, 1, 1, 0}},
                   {"count_include_pad", include}}});
    cs.push_back({"avg_pool2d",
                  {img},
                  {{"kernel", Ints{2, 2}},
                   {"dilations", Ints{2, 1}},
                   {"pads", Ints{1, 0, 0, 1}},
                   {"count_include_pad", include}}});
    cs.push_back({"avg_pool2d_backward",
                  {Arg{f64t({2, 2, 3, 3})}},
                  {{"kernel", Ints{3, 2}},
                   {"strides", Ints{2, 2}},
                   {"pads", Ints{1, 1, 1, 0}},
                   {"count_include_pad", include},
                   {"input_shape", Ints{2, 2, 5, 6}}}});
  }
  return cs;
}

// Ops without a gradient rule, and why.
const std::set<std::string> kNotDifferentiable = {
    "not", "and", "or", "compare", "argmax", // boolean or integer results
    "constant", "iota",                      // no operands
    // No second order through max pooling: piecewise constant in x; in dy it would be a
    // gather of the incoming gradient at each window's maximum, an op of its own.
    "max_pool2d_backward",
    // gelu's gradient: training steps differentiate once.
    "gelu_grad",
    // Collectives: per-device programs are made after autodiff, never differentiated.
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "collective_permute", "shard_slice",
    // Calls: hypersections are outlined after autodiff and partitioning; calls and scans of
    // a model are differentiated through their callees (lib/train/CallGradients.cpp).
    "call", "scan"};

} // namespace

TEST(GradientTest, RulesMatchFiniteDifferences) {
  for (const GradCase& c : cases())
    checkGradients(c);
}

TEST(GradientTest, EveryOpHasARuleOrIsListed) {
  std::set<std::string> tested;
  for (const GradCase& c : cases())
    tested.insert(c.op);
  for (const auto& def : OpRegistry::get().all()) {
    bool listed = kNotDifferentiable.count(def->name) > 0;
    EXPECT_EQ(static_cast<bool>(def->gradient), !listed) << def->name;
    if (def->gradient) {
      EXPECT_TRUE(tested.count(def->name)) << "no finite-difference case for " << def->name;
    }
  }
}

TEST(GradientTest, MissingRuleOnTheGradientPathIsAnError) {
  // max_pool2d_backward has no rule; here the parameter is its dy.
  Function f("f");
  Value* x = f.addArgument("x", TensorType{DType::F32, {1, 1, 4, 4}}, ArgKind::Input);
  Value* w = f.addArgument("w", TensorType{DType::F32, {1, 1, 2, 2}}, ArgKind::Param);
  Builder b(f);
  b.setLoc(Loc{7, 3});
  Value* y =
      b.value("max_pool2d_backward", {x, w}, {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  Value* loss = b.value("reduce_sum", {y}, {{"axes", Ints{0, 1, 2, 3}}});
  try {
    buildGradients(f, loss, {w});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "op 'max_pool2d_backward' at line 7 has no gradient rule, but a "
                           "gradient must flow through it to a parameter");
  }
}

TEST(GradientTest, NoPathGivesNoGradient) {
  // w only feeds a comparison: no gradient reaches it, and that is not an error.
  Function f("f");
  Value* x = f.addArgument("x", TensorType{DType::F32, {3}}, ArgKind::Input);
  Value* w = f.addArgument("w", TensorType{DType::F32, {3}}, ArgKind::Param);
  Builder b(f);
  Value* mask = b.value("compare", {w, x}, {{"direction", "gt"}});
  Value* y = b.value("where", {mask, x, b.value("neg", {x})});
  Value* loss = b.value("reduce_sum", {y}, {{"axes", Ints{0}}});
  EXPECT_EQ(buildGradients(f, loss, {w})[0], nullptr);
}
