// ONNX elementwise, matrix, reduction and normalization ops.
#include "OnnxContext.h"

#include "shardc/support/Error.h"

namespace shardc::onnximport {
namespace {

ImportFn unary(const char* op) {
  return [op](Context& c) { return c.emit(op, {c.in(0)}); };
}

ImportFn binary(const char* op) {
  return [op](Context& c) { return c.emit(op, {c.in(0), c.in(1)}); };
}

ImportFn comparison(const char* direction) {
  return [direction](Context& c) {
    return c.emit("compare", {c.in(0), c.in(1)}, {{"direction", direction}});
  };
}

// Max, Min, Sum and Mean take any number of inputs.
ImportFn variadic(const char* op, bool mean = false) {
  return [op, mean](Context& c) {
    Entry acc = c.in(0);
    for (size_t i = 1; i < c.numInputs(); ++i) acc = c.emit1(op, {acc, c.in(i)});
    if (mean && c.numInputs() > 1)
      acc = c.emit1("div", {acc, c.scalar(c.typeOf(acc).dtype, static_cast<double>(c.numInputs()))});
    return std::vector<Entry>{acc};
  };
}

std::vector<Entry> pow(Context& c) {
  Entry base = c.in(0), exp = c.in(1);
  DType t = c.typeOf(base).dtype;
  if (c.typeOf(exp).dtype != t) exp = c.emit1("cast", {exp}, {{"to", t}});
  return c.emit("pow", {base, exp});
}

std::vector<Entry> cast(Context& c) {
  DType to = dtypeFromOnnx(static_cast<int32_t>(c.attrInt("to")), "Cast 'to'");
  return c.emit("cast", {c.in(0)}, {{"to", to}});
}

std::vector<Entry> clip(Context& c) {
  Entry x = c.in(0);
  DType t = c.typeOf(x).dtype;
  if (c.opset() < 11) {
    x = c.emit1("max", {x, c.scalar(t, c.attrFloat("min", -3.4028234663852886e38f))});
    return c.emit("min", {x, c.scalar(t, c.attrFloat("max", 3.4028234663852886e38f))});
  }
  if (c.hasInput(1)) x = c.emit1("max", {x, c.in(1)});
  if (c.hasInput(2)) x = c.emit1("min", {x, c.in(2)});
  return {x};
}

std::vector<Entry> identity(Context& c) { return {c.in(0)}; }

// Dropout at inference is the identity; its optional mask output is all true.
std::vector<Entry> dropout(Context& c) {
  bool training = c.opset() >= 12 ? c.hasInput(2) && (!c.constantInput(2) || c.constantInput(2)->getInt(0) != 0)
                                  : c.opset() < 7 && c.attrInt("is_test", 0) == 0;
  if (training) c.fail("training-mode Dropout is not supported yet");
  c.ignoreAttr("seed");
  c.ignoreAttr("ratio");
  Entry x = c.in(0);
  TensorType t = c.typeOf(x);
  Tensor mask(TensorType{DType::I1, t.shape});
  for (int64_t i = 0; i < mask.numel(); ++i) mask.setInt(i, 1);
  return {x, c.constant(std::move(mask))};
}

// numpy matmul semantics, including 1-D operands.
std::vector<Entry> matmul(Context& c) {
  Entry a = c.in(0), b = c.in(1);
  Shape as = c.typeOf(a).shape, bs = c.typeOf(b).shape;
  if (as.empty() || bs.empty()) c.fail("MatMul operands must have rank >= 1");
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec) a = c.emit1("reshape", {a}, {{"shape", std::vector<int64_t>{1, as[0]}}});
  if (bVec) b = c.emit1("reshape", {b}, {{"shape", std::vector<int64_t>{bs[0], 1}}});
  Entry r = c.emit1("matmul", {a, b});
  if (aVec || bVec) {
    Shape rs = c.typeOf(r).shape;
    Shape out(rs.begin(), rs.end() - 2);
    if (!aVec) out.push_back(rs[rs.size() - 2]);
    if (!bVec) out.push_back(rs.back());
    r = c.emit1("reshape", {r}, {{"shape", out}});
  }
  return {r};
}

Entry transpose2d(Context& c, Entry x) {
  if (c.typeOf(x).rank() != 2) c.fail("Gemm operands must be 2-D");
  return c.emit1("transpose", {x}, {{"perm", std::vector<int64_t>{1, 0}}});
}

std::vector<Entry> gemm(Context& c) {
  Entry a = c.in(0), b = c.in(1);
  if (c.attrInt("transA", 0)) a = transpose2d(c, a);
  if (c.attrInt("transB", 0)) b = transpose2d(c, b);
  Entry y = c.emit1("matmul", {a, b});
  DType t = c.typeOf(y).dtype;
  float alpha = c.attrFloat("alpha", 1.0f), beta = c.attrFloat("beta", 1.0f);
  if (alpha != 1.0f) y = c.emit1("mul", {y, c.scalar(t, alpha)});
  if (c.hasInput(2) && beta != 0.0f) {
    Entry bias = c.in(2);
    if (beta != 1.0f) bias = c.emit1("mul", {bias, c.scalar(t, beta)});
    y = c.emit1("add", {y, bias});
  }
  return {y};
}

// Softmax family: from opset 13 one axis; before, the input is flattened to 2-D at `axis`.
ImportFn softmax(const char* op) {
  return [op](Context& c) {
    Entry x = c.in(0);
    Shape s = c.typeOf(x).shape;
    int64_t rank = static_cast<int64_t>(s.size());
    int64_t axis = c.attrInt("axis", c.opset() >= 13 ? -1 : 1);
    auto n = normalizeAxis(axis, rank);
    if (!n) c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (c.opset() >= 13 || *n == rank - 1)
      return c.emit(op, {x}, {{"axis", *n}});
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < *n ? outer : inner) *= s[static_cast<size_t>(i)];
    Entry flat = c.emit1("reshape", {x}, {{"shape", std::vector<int64_t>{outer, inner}}});
    Entry y = c.emit1(op, {flat}, {{"axis", int64_t(1)}});
    return c.emit("reshape", {y}, {{"shape", s}});
  };
}

// Reductions: axes from the attribute (or, for ReduceSum from opset 13 and the others from
// 18, the optional second input); no axes means all of them unless noop_with_empty_axes.
ImportFn reduce(const char* op, int64_t axesInputSince) {
  return [op, axesInputSince](Context& c) {
    Entry x = c.in(0);
    int64_t rank = c.typeOf(x).rank();
    std::vector<int64_t> axes;
    if (c.opset() >= axesInputSince) {
      if (c.hasInput(1)) axes = c.constantInts(1, "axes");
    } else {
      axes = c.attrInts("axes", std::vector<int64_t>{});
    }
    if (axes.empty()) {
      if (c.attrInt("noop_with_empty_axes", 0)) return std::vector<Entry>{x};
      for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    }
    return c.emit(op, {x}, {{"axes", axes}, {"keepdims", c.attrInt("keepdims", 1) != 0}});
  };
}

std::vector<Entry> layerNormalization(Context& c) {
  if (c.numInputs() < 2) c.fail("LayerNormalization needs X and Scale");
  Entry x = c.in(0), scale = c.in(1);
  TensorType xt = c.typeOf(x);
  int64_t axis = c.attrInt("axis", -1);
  auto n = normalizeAxis(axis, xt.rank());
  if (!n) c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(xt.rank()));
  TensorType norm{xt.dtype, Shape(xt.shape.begin() + *n, xt.shape.end())};
  AttrDict attrs{{"axis", *n}, {"epsilon", static_cast<double>(c.attrFloat("epsilon", 1e-5f))}};
  c.ignoreAttr("stash_type"); // shardc normalizes in double precision anyway
  bool exact = c.typeOf(scale) == norm && (!c.hasInput(2) || c.typeOf(c.in(2)) == norm);
  if (exact) {
    std::vector<Entry> ops{x, scale};
    if (c.hasInput(2)) ops.push_back(c.in(2));
    return {c.emit1("layer_norm", ops, attrs)};
  }
  // Scale and bias that only broadcast to the normalized shape.
  Entry y = c.emit1("layer_norm", {x}, attrs);
  y = c.emit1("mul", {y, scale});
  if (c.hasInput(2)) y = c.emit1("add", {y, c.in(2)});
  return {y};
}

} // namespace

void registerMathImports(OpTable& t) {
  for (auto [onnx, ours] : {std::pair{"Sqrt", "sqrt"}, {"Erf", "erf"}, {"Tanh", "tanh"},
                            {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Exp", "exp"},
                            {"Log", "log"}, {"Neg", "neg"}, {"Abs", "abs"},
                            {"Reciprocal", "reciprocal"}, {"Floor", "floor"}, {"Not", "not"}})
    t[onnx] = unary(ours);
  for (auto [onnx, ours] : {std::pair{"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"},
                            {"Div", "div"}, {"And", "and"}, {"Or", "or"}})
    t[onnx] = binary(ours);
  t["Pow"] = pow;
  t["Max"] = variadic("max");
  t["Min"] = variadic("min");
  t["Sum"] = variadic("add");
  t["Mean"] = variadic("add", true);
  t["Equal"] = comparison("eq");
  t["Less"] = comparison("lt");
  t["LessOrEqual"] = comparison("le");
  t["Greater"] = comparison("gt");
  t["GreaterOrEqual"] = comparison("ge");
  t["Where"] = [](Context& c) { return c.emit("where", {c.in(0), c.in(1), c.in(2)}); };
  t["Cast"] = cast;
  t["Clip"] = clip;
  t["Identity"] = identity;
  t["Dropout"] = dropout;
  t["MatMul"] = matmul;
  t["Gemm"] = gemm;
  t["Softmax"] = softmax("softmax");
  t["LogSoftmax"] = softmax("log_softmax");
  t["ReduceSum"] = reduce("reduce_sum", 13);
  t["ReduceMean"] = reduce("reduce_mean", 18);
  t["ReduceMax"] = reduce("reduce_max", 18);
  t["ReduceMin"] = reduce("reduce_min", 18);
  t["LayerNormalization"] = layerNormalization;
}

} // namespace shardc::onnximport
