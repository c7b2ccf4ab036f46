// ONNX ops that make or reshape tensors; on compile-time constants (shape arithmetic)
// they fold to constants through Context::emit.
#include "OnnxContext.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace shardc::onnximport {
namespace {

Tensor intVector(const std::vector<int64_t>& v) {
  return Tensor::fromInts(TensorType{DType::I64, {static_cast<int64_t>(v.size())}}, v);
}

std::vector<Entry> reshape(Context& c) {
  Entry x = c.in(0);
  Shape in = c.typeOf(x).shape;
  std::vector<int64_t> shape = c.constantInts(1, "the target shape");
  bool allowZero = c.attrInt("allowzero", 0) != 0;
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if (i >= in.size())
        c.fail("shape entry " + std::to_string(i) + " is 0 (copy), but the input has rank " +
               std::to_string(in.size()));
      shape[i] = in[i];
    }
    if (shape[i] == -1) {
      if (inferred >= 0) c.fail("the target shape has more than one -1");
      inferred = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      c.fail("the target shape has a negative entry " + std::to_string(shape[i]));
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      c.fail("the target shape " + shapeStr(shape) + " has more elements than a count can hold");
    }
  }
  if (inferred >= 0) {
    if (known == 0 || numel(in) % known)
      c.fail("cannot infer the -1 entry: " + std::to_string(numel(in)) + " elements into " +
             shapeStr(shape));
    shape[static_cast<size_t>(inferred)] = numel(in) / known;
  }
  return c.emit("reshape", {x}, {{"shape", shape}});
}

std::vector<Entry> flatten(Context& c) {
  Entry x = c.in(0);
  Shape s = c.typeOf(x).shape;
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = c.attrInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) c.fail("axis is out of range for rank " + std::to_string(rank));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= s[static_cast<size_t>(i)];
  return c.emit("reshape", {x}, {{"shape", std::vector<int64_t>{outer, inner}}});
}

std::vector<int64_t> axesOperand(Context& c, int64_t inputSince) {
  if (c.opset() >= inputSince)
    return c.hasInput(1) ? c.constantInts(1, "axes") : std::vector<int64_t>{};
  return c.attrInts("axes", std::vector<int64_t>{});
}

std::vector<Entry> squeeze(Context& c) {
  Entry x = c.in(0);
  Shape s = c.typeOf(x).shape;
  int64_t rank = static_cast<int64_t>(s.size());
  std::vector<int64_t> axes = axesOperand(c, 13);
  std::vector<bool> drop(s.size(), false);
  if (axes.empty()) {
    for (size_t i = 0; i < s.size(); ++i)
      drop[i] = s[i] == 1;
  } else {
    for (int64_t a : axes) {
      int64_t n = c.axis(a, rank);
      if (s[static_cast<size_t>(n)] != 1)
        c.fail("cannot squeeze dimension " + std::to_string(n) + " of size " +
               std::to_string(s[static_cast<size_t>(n)]));
      drop[static_cast<size_t>(n)] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < s.size(); ++i)
    if (!drop[i]) out.push_back(s[i]);
  return c.emit("reshape", {x}, {{"shape", out}});
}

std::vector<Entry> unsqueeze(Context& c) {
  Entry x = c.in(0);
  Shape s = c.typeOf(x).shape;
  std::vector<int64_t> axes = axesOperand(c, 13);
  if (axes.empty()) c.fail("Unsqueeze needs axes");
  int64_t outRank = static_cast<int64_t>(s.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(outRank), false);
  for (int64_t a : axes) {
    int64_t n = c.axis(a, outRank);
    if (inserted[static_cast<size_t>(n)]) c.fail("axis " + std::to_string(a) + " is given twice");
    inserted[static_cast<size_t>(n)] = true;
  }
  Shape out;
  size_t k = 0;
  for (int64_t i = 0; i < outRank; ++i)
    out.push_back(inserted[static_cast<size_t>(i)] ? 1 : s[k++]);
  return c.emit("reshape", {x}, {{"shape", out}});
}

std::vector<Entry> transpose(Context& c) {
  Entry x = c.in(0);
  int64_t rank = c.typeOf(x).rank();
  std::vector<int64_t> rev;
  for (int64_t i = rank - 1; i >= 0; --i)
    rev.push_back(i);
  return c.emit("transpose", {x}, {{"perm", c.attrInts("perm", rev)}});
}

std::vector<Entry> slice(Context& c) {
  Entry x = c.in(0);
  Shape s = c.typeOf(x).shape;
  int64_t rank = static_cast<int64_t>(s.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() >= 10) {
    starts = c.constantInts(1, "starts");
    ends = c.constantInts(2, "ends");
    if (c.hasInput(3)) axes = c.constantInts(3, "axes");
    if (c.hasInput(4)) steps = c.constantInts(4, "steps");
  } else {
    starts = c.attrInts("starts");
    ends = c.attrInts("ends");
    axes = c.attrInts("axes", std::vector<int64_t>{});
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps must have the same length");
  std::vector<int64_t> start(s.size(), 0), limit(s.begin(), s.end()), stride(s.size(), 1), reversed;
  std::vector<bool> seen(s.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t a = static_cast<size_t>(c.axis(axes[i], rank));
    if (seen[a]) c.fail("axis " + std::to_string(axes[i]) + " is given twice");
    seen[a] = true;
    int64_t d = s[a];
    if (steps[i] == 0) c.fail("a slice step of 0 is invalid");
    // Negative indices count from the end (saturating: the exporter writes +-(2^63 - 1)).
    auto fromEnd = [d](int64_t v) { return v < 0 ? (v < -d ? -1 : v + d) : v; };
    if (steps[i] > 0) {
      auto clampIndex = [&](int64_t v) { return std::clamp(fromEnd(v), int64_t(0), d); };
      start[a] = clampIndex(starts[i]);
      limit[a] = std::max(start[a], clampIndex(ends[i]));
      stride[a] = steps[i];
      continue;
    }
    // A negative step walks from start down to (not including) end: starts clamp to
    // [0, d-1], ends to [-1, d-1]. On the reversed axis (j -> d-1-j) that is a slice with
    // the positive step.
    int64_t first = std::clamp(fromEnd(starts[i]), int64_t(0), std::max<int64_t>(d - 1, 0)),
            last = std::clamp(fromEnd(ends[i]), int64_t(-1), d - 1);
    start[a] = d == 0 ? 0 : d - 1 - first;
    limit[a] = std::max(start[a], d - 1 - last);
    stride[a] = steps[i] == std::numeric_limits<int64_t>::min()
                    ? std::numeric_limits<int64_t>::max()
                    : -steps[i];
    reversed.push_back(static_cast<int64_t>(a));
  }
  if (!reversed.empty()) {
    std::sort(reversed.begin(), reversed.end());
    x = c.emit("reverse", {x}, {{"axes", reversed}})[0];
  }
  return c.emit("slice", {x}, {{"start", start}, {"limit", limit}, {"stride", stride}});
}

std::vector<Entry> split(Context& c) {
  Entry x = c.in(0);
  Shape s = c.typeOf(x).shape;
  int64_t axis = c.axis(c.attrInt("axis", 0), static_cast<int64_t>(s.size()));
  std::vector<int64_t> sizes;
  if (c.opset() >= 13) {
    if (c.hasInput(1)) sizes = c.constantInts(1, "split");
  } else {
    sizes = c.attrInts("split", std::vector<int64_t>{});
  }
  if (sizes.empty()) {
    // Without sizes: num_outputs (opset 18) or one piece per node output, the last one
    // smaller when the dimension does not divide.
    int64_t n =
        c.hasAttr("num_outputs") ? c.attrInt("num_outputs") : static_cast<int64_t>(c.numOutputs());
    int64_t dim = s[static_cast<size_t>(axis)];
    if (n <= 0 || n > std::max<int64_t>(dim, 1))
      c.fail("cannot split a dimension of " + std::to_string(dim) + " into " + std::to_string(n) +
             " pieces");
    int64_t piece = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(piece, dim - piece * i)));
  }
  return c.emit("split", {x}, {{"axis", axis}, {"sizes", sizes}});
}

std::vector<Entry> concat(Context& c) {
  std::vector<Entry> xs;
  for (size_t i = 0; i < c.numInputs(); ++i)
    xs.push_back(c.in(i));
  if (xs.empty()) c.fail("Concat needs at least one input");
  return c.emit("concat", xs, {{"axis", c.axis(c.attrInt("axis"), c.typeOf(xs[0]).rank())}});
}

std::vector<Entry> gather(Context& c) {
  Entry x = c.in(0);
  return c.emit("gather", {x, c.in(1)},
                {{"axis", c.axis(c.attrInt("axis", 0), c.typeOf(x).rank())}});
}

std::vector<Entry> expand(Context& c) {
  Entry x = c.in(0);
  Shape s = c.typeOf(x).shape;
  std::vector<int64_t> target = c.constantInts(1, "the target shape");
  // Expand broadcasts both ways: a 1 in the target keeps the input's size.
  size_t r = std::max(s.size(), target.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t a = i < r - s.size() ? 1 : s[i - (r - s.size())];
    int64_t b = i < r - target.size() ? 1 : target[i - (r - target.size())];
    if (a != b && a != 1 && b != 1)
      c.fail("cannot expand " + shapeStr(s) + " to " + shapeStr(target));
    out[i] = a == 1 ? b : a;
  }
  return c.emit("broadcast", {x}, {{"shape", out}});
}

std::vector<Entry> shape(Context& c) {
  Shape s = c.typeOf(c.in(0)).shape;
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t start = c.attrInt("start", 0), end = c.attrInt("end", rank);
  auto clampIndex = [rank](int64_t v) {
    return std::clamp(v < 0 ? v + rank : v, int64_t(0), rank);
  };
  start = clampIndex(start);
  end = std::max(start, clampIndex(end));
  return {c.constant(intVector(std::vector<int64_t>(s.begin() + start, s.begin() + end)))};
}

std::vector<Entry> size(Context& c) {
  Tensor t(TensorType{DType::I64, {}});
  t.setInt(0, c.typeOf(c.in(0)).numel());
  return {c.constant(std::move(t))};
}

std::vector<Entry> constant(Context& c) {
  if (c.hasAttr("value"))
    return {c.constant(tensorFromProto(c.attrTensor("value"), "Constant value"))};
  if (c.hasAttr("value_float")) return {c.scalar(DType::F32, c.attrFloat("value_float"))};
  if (c.hasAttr("value_int"))
    return {c.scalar(DType::I64, static_cast<double>(c.attrInt("value_int")))};
  if (c.hasAttr("value_ints")) return {c.constant(intVector(c.attrInts("value_ints")))};
  c.fail("only value, value_float, value_int and value_ints constants are supported");
}

std::vector<Entry> constantOfShape(Context& c) {
  std::vector<int64_t> shape = c.constantInts(0, "the shape");
  if (!checkedNumel(shape)) c.fail("invalid shape " + shapeStr(shape));
  Tensor fill = c.hasAttr("value") ? tensorFromProto(c.attrTensor("value"), "ConstantOfShape value")
                                   : Tensor(TensorType{DType::F32, {1}});
  if (fill.numel() != 1) c.fail("value must hold exactly one element");
  Tensor out(TensorType{fill.dtype(), shape});
  size_t es = dtypeSize(fill.dtype());
  for (int64_t i = 0; i < out.numel(); ++i)
    std::memcpy(out.data() + static_cast<size_t>(i) * es, fill.data(), es);
  return {c.constant(std::move(out))};
}

std::vector<Entry> range(Context& c) {
  const Tensor &start = c.requireConstant(0, "start"), &limit = c.requireConstant(1, "limit"),
               &delta = c.requireConstant(2, "delta");
  if (start.numel() != 1 || limit.numel() != 1 || delta.numel() != 1)
    c.fail("start, limit and delta must be scalars");
  double s = start.getDouble(0), l = limit.getDouble(0), d = delta.getDouble(0);
  if (d == 0) c.fail("delta is 0");
  if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
    c.fail("start, limit and delta must be finite");
  double count = std::max(std::ceil((l - s) / d), 0.0);
  if (!(count <= static_cast<double>(kMaxElements))) c.fail("the range is too long");
  Tensor out(TensorType{start.dtype(), {static_cast<int64_t>(count)}});
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (isFloat(out.dtype()))
      out.setDouble(i, s + static_cast<double>(i) * d);
    else
      out.setInt(i, start.getInt(0) + i * delta.getInt(0));
  }
  return {c.constant(std::move(out))};
}

// Trilu keeps the elements on and above (upper) or below (lower) diagonal k; k may be
// known only at run time, as it only enters a comparison.
std::vector<Entry> trilu(Context& c) {
  Entry x = c.in(0);
  TensorType t = c.typeOf(x);
  if (t.rank() < 2) c.fail("Trilu needs rank >= 2");
  Entry k = c.scalar(DType::I64, 0);
  if (c.hasInput(1)) {
    k = c.in(1);
    TensorType kt = c.typeOf(k);
    if (kt.numel() != 1 || kt.rank() > 1 || kt.dtype != DType::I64)
      c.fail("k must be an int64 scalar, got " + kt.str());
  }
  int64_t n = t.shape[t.shape.size() - 2], m = t.shape.back();
  std::vector<int64_t> hw{n, m};
  Entry row = c.emit1("iota", {}, {{"shape", hw}, {"axis", int64_t(0)}});
  Entry col = c.emit1("iota", {}, {{"shape", hw}, {"axis", int64_t(1)}});
  Entry diff = c.emit1("sub", {col, row});
  bool upper = c.attrInt("upper", 1) != 0;
  Entry keep = c.emit1("compare", {diff, k}, {{"direction", upper ? "ge" : "le"}});
  return c.emit("where", {keep, x, c.scalar(t.dtype, 0)});
}

} // namespace

void registerShapeImports(OpTable& t) {
  t["Reshape"] = reshape;
  t["Flatten"] = flatten;
  t["Squeeze"] = squeeze;
  t["Unsqueeze"] = unsqueeze;
  t["Transpose"] = transpose;
  t["Slice"] = slice;
  t["Split"] = split;
  t["Concat"] = concat;
  t["Gather"] = gather;
  t["Expand"] = expand;
  t["Shape"] = shape;
  t["Size"] = size;
  t["Constant"] = constant;
  t["ConstantOfShape"] = constantOfShape;
  t["Range"] = range;
  t["Trilu"] = trilu;
}

} // namespace shardc::onnximport
