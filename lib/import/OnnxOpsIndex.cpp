// ONNX ops that make or move data with iota, compare, pad, gather at constant indices and
// reshape/transpose: OneHot, EyeLike, Pad, Tile, DepthToSpace, SpaceToDepth.
#include "OnnxContext.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace shardc::onnximport {
namespace {

Entry i64Vector(Context& c, const std::vector<int64_t>& v) {
  return c.constant(Tensor::fromInts(TensorType{DType::I64, {static_cast<int64_t>(v.size())}}, v));
}

// on_value where the (wrapped) index equals the position along the new axis, else
// off_value; indices outside [-depth, depth) give all off_value.
std::vector<Entry> oneHot(Context& c) {
  Entry idx = c.in(0), values = c.in(2);
  TensorType it = c.typeOf(idx), vt = c.typeOf(values);
  const Tensor& dt = c.requireConstant(1, "depth");
  if (dt.numel() != 1) c.fail("depth must hold one value");
  // A float depth is truncated, as the spec says; NaN and values beyond int64 are refused
  // before the conversion.
  if (isFloat(dt.dtype()) && !(std::fabs(dt.getDouble(0)) < 9.2e18))
    c.fail("depth must be a finite integer, got " + std::to_string(dt.getDouble(0)));
  int64_t depth = isFloat(dt.dtype()) ? static_cast<int64_t>(dt.getDouble(0)) : dt.getInt(0);
  if (depth < 1) c.fail("depth must be positive, got " + std::to_string(depth));
  if (vt.numel() != 2 || vt.rank() != 1)
    c.fail("values must be [off_value, on_value], got " + vt.str());
  int64_t axis = c.axis(c.attrInt("axis", -1), it.rank() + 1);
  // Non-integer indices are cast to int64 first, as the spec says.
  if (it.dtype != DType::I64) idx = c.emit1("cast", {idx}, {{"to", DType::I64}});
  Entry negative = c.emit1("compare", {idx, c.scalar(DType::I64, 0)}, {{"direction", "lt"}});
  Entry wrapped = c.emit1("add", {idx, c.scalar(DType::I64, static_cast<double>(depth))});
  idx = c.emit1("where", {negative, wrapped, idx});
  Shape out = it.shape, unsqueezed = it.shape;
  out.insert(out.begin() + axis, depth);
  unsqueezed.insert(unsqueezed.begin() + axis, 1);
  Entry pos = c.emit1("iota", {}, {{"shape", out}, {"axis", axis}});
  Entry hot = c.emit1("compare", {pos, c.emit1("reshape", {idx}, {{"shape", unsqueezed}})},
                      {{"direction", "eq"}});
  auto element = [&](int64_t i) {
    return c.emit1("slice", {values},
                   {{"start", std::vector<int64_t>{i}},
                    {"limit", std::vector<int64_t>{i + 1}},
                    {"stride", std::vector<int64_t>{1}}});
  };
  return c.emit("where", {hot, element(1), element(0)});
}

std::vector<Entry> eyeLike(Context& c) {
  TensorType t = c.typeOf(c.in(0));
  if (t.rank() != 2) c.fail("EyeLike needs a 2-D input, got " + t.str());
  DType to = c.hasAttr("dtype")
                 ? dtypeFromOnnx(static_cast<int32_t>(c.attrInt("dtype")), "EyeLike dtype")
                 : t.dtype;
  Entry row = c.emit1("iota", {}, {{"shape", t.shape}, {"axis", int64_t(0)}});
  Entry col = c.emit1("iota", {}, {{"shape", t.shape}, {"axis", int64_t(1)}});
  Entry k = c.scalar(DType::I64, static_cast<double>(c.attrInt("k", 0)));
  Entry diag = c.emit1("compare", {c.emit1("sub", {col, row}), k}, {{"direction", "eq"}});
  return c.emit("cast", {diag}, {{"to", to}});
}

// Source index along a dimension of size n for output position i (which may lie outside
// [0, n)) in edge, reflect and wrap padding, as numpy.pad.
int64_t padSource(const std::string& mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  if (mode == "edge") return std::clamp<int64_t>(i, 0, n - 1);
  if (mode == "wrap") return ((i % n) + n) % n;
  if (n == 1) return 0; // reflect
  int64_t period = 2 * (n - 1), m = ((i % period) + period) % period;
  return m < n ? m : period - m;
}

// Concatenates blocks of the run-time scalar `value` before and after dim `axis`.
Entry padWithValue(Context& c, Entry x, size_t axis, int64_t before, int64_t after, Entry value) {
  std::vector<Entry> parts;
  Shape s = c.typeOf(x).shape;
  auto block = [&](int64_t n) {
    s[axis] = n;
    return c.emit1("broadcast", {value}, {{"shape", s}});
  };
  if (before > 0) parts.push_back(block(before));
  parts.push_back(x);
  if (after > 0) parts.push_back(block(after));
  return parts.size() == 1 ? x : c.emit1("concat", parts, {{"axis", static_cast<int64_t>(axis)}});
}

// The value of a constant scalar when a `pad` op's double attribute holds it exactly.
std::optional<double> exactPadValue(const Entry& v) {
  if (!v.constant) return std::nullopt;
  const Tensor& t = *v.constant;
  if (isFloat(t.dtype()) || isBool(t.dtype())) return t.getDouble(0);
  double d = static_cast<double>(t.getInt(0));
  return static_cast<int64_t>(d) == t.getInt(0) ? std::optional<double>(d) : std::nullopt;
}

// Pad: negative pads crop first (a slice); then constant mode pads with the value (a `pad`
// op, or blocks of a run-time value), and edge, reflect and wrap gather at constant source
// indices.
std::vector<Entry> pad(Context& c) {
  Entry x = c.in(0);
  TensorType t = c.typeOf(x);
  size_t rank = t.shape.size();
  std::string mode = c.attrString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    c.fail("unknown mode '" + mode + "'");
  std::vector<int64_t> pads;
  Entry value = c.scalar(t.dtype, 0);
  std::vector<int64_t> axes;
  if (c.opset() >= 11) {
    pads = c.constantInts(1, "pads");
    if (c.hasInput(2)) {
      value = c.in(2);
      if (c.typeOf(value).numel() != 1) c.fail("constant_value must hold one value");
      value = c.emit1("reshape", {value}, {{"shape", std::vector<int64_t>{}}});
    }
    if (c.hasInput(3))
      for (int64_t a : c.constantInts(3, "axes"))
        axes.push_back(c.axis(a, static_cast<int64_t>(rank)));
  } else {
    pads = c.attrInts("pads");
    value = c.scalar(t.dtype, c.attrFloat("value", 0.0f));
  }
  if (axes.empty())
    for (size_t i = 0; i < rank; ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (pads.size() != 2 * axes.size())
    c.fail("pads must have 2 entries per padded axis, got " + std::to_string(pads.size()));
  std::vector<int64_t> before(rank, 0), after(rank, 0), none(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    before[static_cast<size_t>(axes[i])] = pads[i];
    after[static_cast<size_t>(axes[i])] = pads[i + axes.size()];
  }
  for (size_t i = 0; i < rank; ++i) {
    x = padAxis(c, x, static_cast<int64_t>(i), std::min<int64_t>(before[i], 0),
                std::min<int64_t>(after[i], 0));
    before[i] = std::max<int64_t>(before[i], 0);
    after[i] = std::max<int64_t>(after[i], 0);
  }
  if (mode == "constant") {
    if (std::optional<double> v = exactPadValue(value))
      return c.emit("pad", {x},
                    {{"low", before}, {"high", after}, {"interior", none}, {"value", *v}});
    for (size_t i = 0; i < rank; ++i)
      x = padWithValue(c, x, i, before[i], after[i], value);
    return {x};
  }
  Shape s = c.typeOf(x).shape;
  for (size_t i = 0; i < rank; ++i) {
    if (before[i] == 0 && after[i] == 0) continue;
    if (s[i] == 0) c.fail(mode + " padding of an empty dimension");
    std::vector<int64_t> src;
    for (int64_t j = -before[i]; j < s[i] + after[i]; ++j)
      src.push_back(padSource(mode, j, s[i]));
    x = c.emit1("gather", {x, i64Vector(c, src)}, {{"axis", static_cast<int64_t>(i)}});
  }
  return {x};
}

// Tile: [d0, d1] -> reshape [1, d0, 1, d1] -> broadcast [r0, d0, r1, d1] -> [r0*d0, r1*d1].
std::vector<Entry> tile(Context& c) {
  if (c.opset() < 6) c.fail("Tile before opset 6 is not supported");
  Entry x = c.in(0);
  Shape s = c.typeOf(x).shape;
  std::vector<int64_t> repeats = c.constantInts(1, "repeats");
  if (repeats.size() != s.size())
    c.fail("repeats must have one entry per dimension of " + shapeStr(s));
  Shape interleaved, expanded, out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (repeats[i] < 0) c.fail("repeats must not be negative");
    interleaved.insert(interleaved.end(), {1, s[i]});
    expanded.insert(expanded.end(), {repeats[i], s[i]});
    out.push_back(repeats[i] * s[i]);
  }
  x = c.emit1("reshape", {x}, {{"shape", interleaved}});
  x = c.emit1("broadcast", {x}, {{"shape", expanded}});
  return c.emit("reshape", {x}, {{"shape", out}});
}

Shape requireNCHW(Context& c, Entry x) {
  Shape s = c.typeOf(x).shape;
  if (s.size() != 4) c.fail("needs a 4-D (NCHW) input, got " + shapeStr(s));
  return s;
}

std::vector<Entry> depthToSpace(Context& c) {
  Entry x = c.in(0);
  Shape s = requireNCHW(c, x);
  int64_t b = c.attrInt("blocksize");
  std::string mode = c.attrString("mode", "DCR");
  if (b <= 0 || s[1] % (b * b))
    c.fail("blocksize " + std::to_string(b) + " does not divide the channels " +
           std::to_string(s[1]) + " into blocks");
  int64_t n = s[0], ch = s[1] / (b * b), h = s[2], w = s[3];
  std::vector<int64_t> split, perm;
  if (mode == "DCR")
    split = {n, b, b, ch, h, w}, perm = {0, 3, 4, 1, 5, 2};
  else if (mode == "CRD")
    split = {n, ch, b, b, h, w}, perm = {0, 1, 4, 2, 5, 3};
  else
    c.fail("unknown mode '" + mode + "'");
  x = c.emit1("reshape", {x}, {{"shape", split}});
  x = c.emit1("transpose", {x}, {{"perm", perm}});
  return c.emit("reshape", {x}, {{"shape", std::vector<int64_t>{n, ch, h * b, w * b}}});
}

std::vector<Entry> spaceToDepth(Context& c) {
  Entry x = c.in(0);
  Shape s = requireNCHW(c, x);
  int64_t b = c.attrInt("blocksize");
  if (b <= 0 || s[2] % b || s[3] % b)
    c.fail("blocksize " + std::to_string(b) + " does not divide the spatial dims of " +
           shapeStr(s));
  int64_t n = s[0], ch = s[1], h = s[2] / b, w = s[3] / b;
  x = c.emit1("reshape", {x}, {{"shape", std::vector<int64_t>{n, ch, h, b, w, b}}});
  x = c.emit1("transpose", {x}, {{"perm", std::vector<int64_t>{0, 3, 5, 1, 2, 4}}});
  return c.emit("reshape", {x}, {{"shape", std::vector<int64_t>{n, ch * b * b, h, w}}});
}

} // namespace

Entry padAxis(Context& c, Entry x, int64_t axis, int64_t before, int64_t after, double value) {
  Shape s = c.typeOf(x).shape;
  size_t a = static_cast<size_t>(axis), rank = s.size();
  if (before < 0 || after < 0) {
    std::vector<int64_t> start(rank, 0), limit = s, stride(rank, 1);
    start[a] = std::max<int64_t>(-before, 0);
    limit[a] -= std::max<int64_t>(-after, 0);
    if (limit[a] < start[a])
      c.fail("negative padding removes more than dimension " + std::to_string(axis) + " holds");
    x = c.emit1("slice", {x}, {{"start", start}, {"limit", limit}, {"stride", stride}});
  }
  if (before <= 0 && after <= 0) return x;
  std::vector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  low[a] = std::max<int64_t>(before, 0);
  high[a] = std::max<int64_t>(after, 0);
  return c.emit1("pad", {x},
                 {{"low", low}, {"high", high}, {"interior", interior}, {"value", value}});
}

void registerIndexImports(OpTable& t) {
  t["OneHot"] = oneHot;
  t["EyeLike"] = eyeLike;
  t["Pad"] = pad;
  t["Tile"] = tile;
  t["DepthToSpace"] = depthToSpace;
  t["SpaceToDepth"] = spaceToDepth;
}

} // namespace shardc::onnximport
