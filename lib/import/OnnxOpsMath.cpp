// ONNX arithmetic, comparison and cast ops, Pow, matrix products and the softmax family.
#include "OnnxContext.h"

#include "shardc/support/Error.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace shardc::onnximport {
namespace {

ImportFn unary(const char* op) {
  return [op](Context& c) { return c.emit(op, {c.in(0)}); };
}

// Before opset 7, binary ops broadcast only with broadcast = 1, and then b's dims line up
// with a's from `axis` on (by default, a's trailing dims).
Entry legacyBroadcast(Context& c, Entry a, Entry b) {
  if (c.opset() >= 7) return b;
  Shape as = c.typeOf(a).shape, bs = c.typeOf(b).shape;
  int64_t ra = static_cast<int64_t>(as.size()), rb = static_cast<int64_t>(bs.size());
  if (!c.attrInt("broadcast", 0)) {
    c.ignoreAttr("axis"); // only meaningful with broadcast = 1
    if (as != bs)
      c.fail("operands " + shapeStr(as) + " and " + shapeStr(bs) + " differ, and broadcast = 0");
    return b;
  }
  int64_t axis = c.attrInt("axis", ra - rb);
  if (axis < 0) axis += ra;
  if (axis < 0 || axis + rb > ra)
    c.fail("cannot broadcast " + shapeStr(bs) + " to " + shapeStr(as) + " at axis " +
           std::to_string(axis));
  Shape aligned(static_cast<size_t>(axis), 1);
  aligned.insert(aligned.end(), bs.begin(), bs.end());
  aligned.resize(as.size(), 1);
  return c.emit1("reshape", {b}, {{"shape", aligned}});
}

ImportFn binary(const char* op) {
  return [op](Context& c) {
    Entry a = c.in(0);
    return c.emit(op, {a, legacyBroadcast(c, a, c.in(1))});
  };
}

ImportFn comparison(const char* direction) {
  return [direction](Context& c) {
    Entry a = c.in(0);
    return c.emit("compare", {a, legacyBroadcast(c, a, c.in(1))}, {{"direction", direction}});
  };
}

// Max, Min, Sum and Mean take any number of inputs.
ImportFn variadic(const char* op, bool mean = false) {
  return [op, mean](Context& c) {
    Entry acc = c.in(0);
    for (size_t i = 1; i < c.numInputs(); ++i)
      acc = c.emit1(op, {acc, c.in(i)});
    if (mean && c.numInputs() > 1)
      acc =
          c.emit1("div", {acc, c.scalar(c.typeOf(acc).dtype, static_cast<double>(c.numInputs()))});
    return std::vector<Entry>{acc};
  };
}

// Integer base ^ integer exponent, exactly (wrapping on overflow, as numpy): square and
// multiply over the exponent's bits, all of them unless the exponent is a known constant.
Entry integerPow(Context& c, Entry base, Entry exp) {
  DType t = c.typeOf(base).dtype;
  if (c.typeOf(exp).dtype != t) exp = c.emit1("cast", {exp}, {{"to", t}});
  int bits = t == DType::I32 ? 31 : 63;
  if (exp.constant) {
    int64_t most = 0;
    for (int64_t e : exp.constant->toInts())
      most = std::max(most, e < 0 ? std::numeric_limits<int64_t>::max() : e);
    for (bits = 0; bits < 63 && (most >> bits) != 0; ++bits) {
    }
  }
  Entry result = c.scalar(t, 1), two = c.scalar(t, 2);
  // At least one step, whose select broadcasts the result to the operands' shape.
  for (int k = 0; k < std::max(bits, 1); ++k) {
    Entry half = c.emit1("div", {exp, two});
    Entry bit =
        c.emit1("compare", {c.emit1("sub", {exp, c.emit1("mul", {half, two})}), c.scalar(t, 0)},
                {{"direction", "ne"}});
    result = c.emit1("where", {bit, c.emit1("mul", {result, base}), result});
    base = c.emit1("mul", {base, base});
    exp = half;
  }
  return result;
}

// Pow's result has the base's type; mixed types compute in double, as numpy promotes them
// (an integer result truncates).
std::vector<Entry> pow(Context& c) {
  Entry base = c.in(0), exp = legacyBroadcast(c, base, c.in(1));
  DType t = c.typeOf(base).dtype, et = c.typeOf(exp).dtype;
  if (isInteger(t) && isInteger(et)) return {integerPow(c, base, exp)};
  if (et == t) return c.emit("pow", {base, exp});
  base = c.emit1("cast", {base}, {{"to", DType::F64}});
  exp = c.emit1("cast", {exp}, {{"to", DType::F64}});
  return c.emit("cast", {c.emit1("pow", {base, exp})}, {{"to", t}});
}

std::vector<Entry> cast(Context& c) {
  DType to = dtypeFromOnnx(static_cast<int32_t>(c.attrInt("to")), "Cast 'to'");
  return c.emit("cast", {c.in(0)}, {{"to", to}});
}

std::vector<Entry> castLike(Context& c) {
  return c.emit("cast", {c.in(0)}, {{"to", c.typeOf(c.in(1)).dtype}});
}

std::vector<Entry> logicalXor(Context& c) {
  Entry a = c.in(0);
  if (!isBool(c.typeOf(a).dtype)) c.fail("Xor needs i1 operands, got " + c.typeOf(a).str());
  return c.emit("compare", {a, legacyBroadcast(c, a, c.in(1))}, {{"direction", "ne"}});
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

std::vector<Entry> identity(Context& c) {
  return {c.in(0)};
}

// Dropout: the identity in an inference import, and where training_mode is false or the
// ratio 0 (its optional mask output all true). Otherwise the mask is drawn per element (the
// dropout op: the ratio, the training step's random state, the element's global index per
// dim as an iota, a stream of its own); a training_mode known only at run time selects
// between the draw and x; the mask output is the same draw applied to ones.
std::vector<Entry> dropout(Context& c) {
  c.ignoreAttr("seed"); // masks come from the run's seed (shardc run --seed)
  Entry x = c.in(0);
  TensorType t = c.typeOf(x);
  bool off = !c.training();
  std::optional<Entry> ratio, mode;
  if (c.opset() >= 12) {
    if (!c.hasInput(2))
      off = true;
    else if (const Tensor* m = c.constantInput(2))
      off |= m->getInt(0) == 0;
    else
      mode = c.in(2);
    if (!c.hasInput(1))
      ratio = c.scalar(DType::F64, 0.5);
    else if (const Tensor* r = c.constantInput(1)) {
      off |= r->getDouble(0) == 0;
      if (!(r->getDouble(0) >= 0 && r->getDouble(0) <= 1))
        c.fail("ratio must be in [0, 1], got " + std::to_string(r->getDouble(0)));
    }
    if (!ratio && c.hasInput(1)) ratio = c.emit1("cast", {c.in(1)}, {{"to", DType::F64}});
  } else {
    // Before opset 7 the node says (is_test); from 7 to 11 Dropout has no training mode
    // (ONNX's own tests expect the identity; PyTorch exports training at opset 12 and later).
    off |= c.opset() >= 7 || c.attrInt("is_test", 0) != 0;
    double r = c.attrFloat("ratio", 0.5);
    if (!(r >= 0 && r <= 1)) c.fail("ratio must be in [0, 1], got " + std::to_string(r));
    off |= r == 0;
    ratio = c.scalar(DType::F64, r);
  }
  bool wantMask = c.numOutputs() > 1 && !c.outputName(1).empty();
  if (off) {
    Tensor mask(TensorType{DType::I1, t.shape});
    for (int64_t i = 0; i < mask.numel(); ++i)
      mask.setInt(i, 1);
    return {x, c.constant(std::move(mask))};
  }
  if (!isFloat(t.dtype))
    c.fail("training-mode Dropout needs a floating-point input, got " + t.str());
  std::vector<Entry> operands{x, *ratio, Entry{c.rngState(), nullptr, nullptr}};
  std::vector<int64_t> strides(t.shape.size(), 1);
  for (size_t d = t.shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * t.shape[d];
  for (size_t d = 0; d < t.shape.size(); ++d) {
    std::vector<int64_t> shape(t.shape.size(), 1);
    shape[d] = t.shape[d];
    operands.push_back(c.emit1(
        "iota", {}, {{"shape", shape}, {"axis", static_cast<int64_t>(d)}, {"dtype", DType::I64}}));
  }
  AttrDict attrs{{"strides", strides}, {"stream", c.nextRandomStream()}};
  Entry y = c.emit1("dropout", operands, attrs);
  auto select = [&](Entry drawn, Entry plain) {
    return mode ? c.emit1("where", {*mode, drawn, plain}) : drawn;
  };
  if (!wantMask) return {select(y, x)};
  Entry ones = c.emit1("broadcast", {c.scalar(t.dtype, 1)}, {{"shape", t.shape}});
  operands[0] = ones;
  Entry kept = c.emit1("dropout", operands, attrs);
  Entry mask =
      c.emit1("compare", {select(kept, ones), c.scalar(t.dtype, 0)}, {{"direction", "ne"}});
  return {select(y, x), mask};
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
  // Before opset 7: broadcast = 0 requires C's exact shape, which numpy broadcasting accepts.
  c.ignoreAttr("broadcast");
  if (alpha != 1.0f) y = c.emit1("mul", {y, c.scalar(t, alpha)});
  if (c.hasInput(2) && beta != 0.0f) {
    Entry bias = c.in(2);
    if (beta != 1.0f) bias = c.emit1("mul", {bias, c.scalar(t, beta)});
    y = c.emit1("add", {y, bias});
  }
  return {y};
}

using AxisFn = std::function<Entry(Context&, Entry, int64_t)>;

// Softmax family: from opset 13 one axis; before, the input is flattened to 2-D at `axis`.
ImportFn softmaxLike(AxisFn fn) {
  return [fn](Context& c) {
    Entry x = c.in(0);
    Shape s = c.typeOf(x).shape;
    int64_t rank = static_cast<int64_t>(s.size());
    int64_t axis = c.axis(c.attrInt("axis", c.opset() >= 13 ? -1 : 1), rank);
    if (c.opset() >= 13 || axis == rank - 1) return std::vector<Entry>{fn(c, x, axis)};
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? outer : inner) *= s[static_cast<size_t>(i)];
    Entry flat = c.emit1("reshape", {x}, {{"shape", std::vector<int64_t>{outer, inner}}});
    return c.emit("reshape", {fn(c, flat, 1)}, {{"shape", s}});
  };
}

ImportFn softmax(const char* op) {
  return softmaxLike([op](Context& c, Entry x, int64_t axis) {
    return c.emit1(op, {x}, {{"axis", axis}});
  });
}

// 1 at the first maximum along the axis, 0 elsewhere.
Entry hardmax(Context& c, Entry x, int64_t axis) {
  TensorType t = c.typeOf(x);
  Entry best = c.emit1("argmax", {x}, {{"axis", axis}, {"keepdims", true}});
  Entry pos = c.emit1("iota", {}, {{"shape", t.shape}, {"axis", axis}});
  return c.emit1("cast", {c.emit1("compare", {pos, best}, {{"direction", "eq"}})},
                 {{"to", t.dtype}});
}

} // namespace

void registerMathImports(OpTable& t) {
  for (auto [onnx, ours] : {std::pair{"Sqrt", "sqrt"},
                            {"Erf", "erf"},
                            {"Tanh", "tanh"},
                            {"Relu", "relu"},
                            {"Sigmoid", "sigmoid"},
                            {"Exp", "exp"},
                            {"Log", "log"},
                            {"Neg", "neg"},
                            {"Abs", "abs"},
                            {"Reciprocal", "reciprocal"},
                            {"Floor", "floor"},
                            {"Ceil", "ceil"},
                            {"Not", "not"}})
    t[onnx] = unary(ours);
  for (auto [onnx, ours] : {std::pair{"Add", "add"},
                            {"Sub", "sub"},
                            {"Mul", "mul"},
                            {"Div", "div"},
                            {"And", "and"},
                            {"Or", "or"}})
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
  t["Hardmax"] = softmaxLike(hardmax);
  t["CastLike"] = castLike;
  t["Xor"] = logicalXor;
}

} // namespace shardc::onnximport
