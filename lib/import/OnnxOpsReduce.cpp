// ONNX reductions: the Reduce* family (composites of reduce_sum, reduce_max and mul),
// ArgMax/ArgMin and CumSum.
#include "OnnxContext.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace shardc::onnximport {
namespace {

// The axes a Reduce* node reduces: from the attribute, or (ReduceSum from opset 13, the
// others from 18) the optional second input; no axes means all of them, or none (nullopt)
// with noop_with_empty_axes.
std::optional<std::vector<int64_t>> reductionAxes(Context& c, int64_t rank,
                                                  int64_t axesInputSince) {
  std::vector<int64_t> axes;
  if (c.opset() >= axesInputSince) {
    if (c.hasInput(1)) axes = c.constantInts(1, "axes");
  } else {
    axes = c.attrInts("axes", std::vector<int64_t>{});
  }
  if (axes.empty()) {
    if (c.attrInt("noop_with_empty_axes", 0)) return std::nullopt;
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  return axes;
}

ImportFn reduce(const char* op, int64_t axesInputSince) {
  return [op, axesInputSince](Context& c) {
    Entry x = c.in(0);
    bool keepdims = c.attrInt("keepdims", 1) != 0; // read even when unused, below
    auto axes = reductionAxes(c, c.typeOf(x).rank(), axesInputSince);
    if (!axes) return std::vector<Entry>{x};
    return c.emit(op, {x}, {{"axes", *axes}, {"keepdims", keepdims}});
  };
}

// A reduction composed of shardc ops; `body` gets the input and the reduce attributes
// (axes, keepdims).
using ReduceBody = std::function<Entry(Context&, Entry, const AttrDict&)>;

ImportFn composedReduce(ReduceBody body) {
  return [body](Context& c) {
    Entry x = c.in(0);
    auto axes = reductionAxes(c, c.typeOf(x).rank(), 18);
    // Whether the elementwise part (x^2, |x|, ...) still applies is ambiguous in ONNX.
    if (!axes) c.fail("noop_with_empty_axes = 1 without axes is not supported yet");
    return std::vector<Entry>{
        body(c, x, AttrDict{{"axes", *axes}, {"keepdims", c.attrInt("keepdims", 1) != 0}})};
  };
}

Entry sumSquare(Context& c, Entry x, const AttrDict& r) {
  return c.emit1("reduce_sum", {c.emit1("mul", {x, x})}, r);
}

// log(sum(exp(x))) shifted by the maximum, so that large inputs do not overflow; an
// infinite (or NaN) maximum is not shifted, which keeps ONNX's results for those.
Entry logSumExp(Context& c, Entry x, const AttrDict& r) {
  DType t = c.typeOf(x).dtype;
  AttrDict keep = r;
  keep.set("keepdims", true);
  Entry m = c.emit1("reduce_max", {x}, keep);
  Entry finite = c.emit1(
      "compare", {c.emit1("abs", {m}), c.scalar(t, std::numeric_limits<double>::infinity())},
      {{"direction", "lt"}});
  m = c.emit1("where", {finite, m, c.scalar(t, 0)});
  Entry s = c.emit1("reduce_sum", {c.emit1("exp", {c.emit1("sub", {x, m})})}, r);
  Entry y = c.emit1("log", {s});
  return c.emit1("add", {y, c.emit1("reshape", {m}, {{"shape", c.typeOf(y).shape}})});
}

// Product over `axis` (kept with size 1) as a tree of pairwise multiplies: shardc has no
// product reduction. An odd length is padded with a 1; an empty axis gives 1.
Entry productAlong(Context& c, Entry x, int64_t axis) {
  TensorType t = c.typeOf(x);
  size_t a = static_cast<size_t>(axis);
  auto ones = [&](Shape s) {
    s[a] = 1;
    return c.emit1("broadcast", {c.scalar(t.dtype, 1)}, {{"shape", s}});
  };
  if (t.shape[a] == 0) return ones(t.shape);
  for (int64_t n = t.shape[a]; n > 1; n /= 2) {
    if (n % 2) x = c.emit1("concat", {x, ones(c.typeOf(x).shape)}, {{"axis", axis}}), ++n;
    std::vector<Entry> halves =
        c.emit("split", {x}, {{"axis", axis}, {"sizes", std::vector<int64_t>{n / 2, n / 2}}});
    x = c.emit1("mul", {halves[0], halves[1]});
  }
  return x;
}

Entry reduceProd(Context& c, Entry x, const AttrDict& r) {
  int64_t rank = c.typeOf(x).rank();
  std::vector<int64_t> axes;
  for (int64_t a : r.getInts("axes"))
    axes.push_back(c.axis(a, rank));
  for (int64_t a : axes)
    x = productAlong(c, x, a);
  if (r.getBool("keepdims")) return x;
  Shape s = c.typeOf(x).shape, out;
  for (int64_t i = 0; i < rank; ++i)
    if (!std::count(axes.begin(), axes.end(), i)) out.push_back(s[static_cast<size_t>(i)]);
  return c.emit1("reshape", {x}, {{"shape", out}});
}

// Reverses `axis` (a gather at constant indices n-1, ..., 0).
Entry reverseAxis(Context& c, Entry x, int64_t axis) {
  int64_t n = c.typeOf(x).shape[static_cast<size_t>(axis)];
  std::vector<int64_t> idx;
  for (int64_t i = n - 1; i >= 0; --i)
    idx.push_back(i);
  Tensor t = Tensor::fromInts(TensorType{DType::I64, {n}}, idx);
  return c.emit1("gather", {x, c.constant(std::move(t))}, {{"axis", axis}});
}

// ArgMax, and ArgMin as the argmax of an order-reversing map of x: -x for floats, -1 - x
// (bitwise not, which cannot overflow) for integers. select_last_index takes the first
// index of the reversed axis.
ImportFn argExtremum(bool isMin) {
  return [isMin](Context& c) {
    Entry x = c.in(0);
    TensorType t = c.typeOf(x);
    int64_t axis = c.axis(c.attrInt("axis", 0), t.rank());
    bool last = c.attrInt("select_last_index", 0) != 0;
    if (isMin)
      x = isFloat(t.dtype) ? c.emit1("neg", {x}) : c.emit1("sub", {c.scalar(t.dtype, -1), x});
    if (last) x = reverseAxis(c, x, axis);
    Entry i = c.emit1("argmax", {x}, {{"axis", axis}, {"keepdims", c.attrInt("keepdims", 1) != 0}});
    if (last)
      i = c.emit1(
          "sub",
          {c.scalar(DType::I64, static_cast<double>(t.shape[static_cast<size_t>(axis)] - 1)), i});
    return std::vector<Entry>{i};
  };
}

// x shifted by `d` along `axis`: zeros in the first d positions, the last d dropped.
Entry shiftForward(Context& c, Entry x, int64_t axis, int64_t d) {
  return padAxis(c, x, axis, d, -d);
}

// CumSum as a log-step prefix sum (Hillis-Steele): ceil(log2 n) shifted adds. Unlike a
// product with a triangular mask, infinities stay where they are.
std::vector<Entry> cumSum(Context& c) {
  Entry x = c.in(0);
  TensorType t = c.typeOf(x);
  TensorType at = c.typeOf(c.in(1));
  if (at.numel() != 1 || !isInteger(at.dtype))
    c.fail("axis must be an integer scalar, got " + at.str());
  // A 1-D input has one valid axis (0, or -1), which need not be known at compile time.
  int64_t axis = t.rank() == 1 && !c.constantInput(1)
                     ? 0
                     : c.axis(c.requireConstant(1, "axis").getInt(0), t.rank());
  int64_t n = t.shape[static_cast<size_t>(axis)];
  bool reverse = c.attrInt("reverse", 0) != 0, exclusive = c.attrInt("exclusive", 0) != 0;
  if (n == 0) return {x};
  if (reverse) x = reverseAxis(c, x, axis);
  if (exclusive) x = shiftForward(c, x, axis, 1);
  for (int64_t d = 1; d < n; d *= 2)
    x = c.emit1("add", {x, shiftForward(c, x, axis, d)});
  if (reverse) x = reverseAxis(c, x, axis);
  return {x};
}

} // namespace

void registerReduceImports(OpTable& t) {
  t["ReduceSum"] = reduce("reduce_sum", 13);
  t["ReduceMean"] = reduce("reduce_mean", 18);
  t["ReduceMax"] = reduce("reduce_max", 18);
  t["ReduceMin"] = reduce("reduce_min", 18);
  t["ReduceSumSquare"] = composedReduce(sumSquare);
  t["ReduceL1"] = composedReduce([](Context& c, Entry x, const AttrDict& r) {
    return c.emit1("reduce_sum", {c.emit1("abs", {x})}, r);
  });
  t["ReduceL2"] = composedReduce(
      [](Context& c, Entry x, const AttrDict& r) { return c.emit1("sqrt", {sumSquare(c, x, r)}); });
  t["ReduceLogSum"] = composedReduce([](Context& c, Entry x, const AttrDict& r) {
    return c.emit1("log", {c.emit1("reduce_sum", {x}, r)});
  });
  t["ReduceLogSumExp"] = composedReduce(logSumExp);
  t["ReduceProd"] = composedReduce(reduceProd);
  t["ArgMax"] = argExtremum(false);
  t["ArgMin"] = argExtremum(true);
  t["CumSum"] = cumSum;
}

} // namespace shardc::onnximport
