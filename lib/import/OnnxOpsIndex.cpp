// ONNX indexing and data-movement ops composed from gather, iota, compare, concat and
// reshape/transpose: GatherElements, GatherND, ReverseSequence, OneHot, EyeLike, Pad,
// Tile, DepthToSpace, SpaceToDepth.
#include "OnnxContext.h"

#include <algorithm>

namespace shardc::onnximport {
namespace {

int64_t axisOf(Context& c, int64_t axis, int64_t rank) {
  auto n = normalizeAxis(axis, rank);
  if (!n) c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return *n;
}

Entry i64Vector(Context& c, const std::vector<int64_t>& v) {
  return c.constant(Tensor::fromInts(TensorType{DType::I64, {static_cast<int64_t>(v.size())}}, v));
}

// Indices as i64 with negative ones counted from the end of a dimension of size n.
Entry wrapIndices(Context& c, Entry idx, int64_t n) {
  if (!isInteger(c.typeOf(idx).dtype)) c.fail("indices must be integers, got " + c.typeOf(idx).str());
  if (c.typeOf(idx).dtype != DType::I64) idx = c.emit1("cast", {idx}, {{"to", DType::I64}});
  Entry zero = c.scalar(DType::I64, 0);
  Entry negative = c.emit1("compare", {idx, zero}, {{"direction", "lt"}});
  return c.emit1("where", {negative, c.emit1("add", {idx, c.scalar(DType::I64, static_cast<double>(n))}), idx});
}

// Adds coordinate `axis` of `shape` times `stride` to a flat (row-major) index.
Entry addCoordinate(Context& c, Entry flat, const Shape& shape, int64_t axis, int64_t stride) {
  Entry coord = c.emit1("iota", {}, {{"shape", shape}, {"axis", axis}});
  return c.emit1("add", {flat, c.emit1("mul", {coord, c.scalar(DType::I64, static_cast<double>(stride))})});
}

// Gathers elements of `data` at flat row-major indices of its first `dims` dims.
Entry gatherFlat(Context& c, Entry data, int64_t dims, Entry flat) {
  Shape s = c.typeOf(data).shape;
  int64_t outer = 1;
  for (int64_t i = 0; i < dims; ++i) outer *= s[static_cast<size_t>(i)];
  Shape rows{outer};
  rows.insert(rows.end(), s.begin() + dims, s.end());
  return c.emit1("gather", {c.emit1("reshape", {data}, {{"shape", rows}}), flat}, {{"axis", int64_t(0)}});
}

std::vector<int64_t> rowMajorStrides(const Shape& s) {
  std::vector<int64_t> strides(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) strides[i - 1] = strides[i] * s[i];
  return strides;
}

// out[i][j][k] = data[index[i][j][k]][j][k] (axis 0) for non-negative i64 indices: a
// gather at flat indices.
Entry gatherAlongAxis(Context& c, Entry data, Entry idx, int64_t axis) {
  TensorType dt = c.typeOf(data), it = c.typeOf(idx);
  std::vector<int64_t> strides = rowMajorStrides(dt.shape);
  Entry flat = c.emit1("mul", {idx, c.scalar(DType::I64, static_cast<double>(strides[static_cast<size_t>(axis)]))});
  for (int64_t i = 0; i < dt.rank(); ++i)
    if (i != axis) flat = addCoordinate(c, flat, it.shape, i, strides[static_cast<size_t>(i)]);
  return gatherFlat(c, data, dt.rank(), flat);
}

std::vector<Entry> gatherElements(Context& c) {
  Entry data = c.in(0), idx = c.in(1);
  TensorType dt = c.typeOf(data), it = c.typeOf(idx);
  if (dt.rank() != it.rank() || dt.rank() == 0) c.fail("data " + dt.str() + " and indices " + it.str() + " must have the same rank >= 1");
  int64_t axis = axisOf(c, c.attrInt("axis", 0), dt.rank());
  for (int64_t i = 0; i < dt.rank(); ++i)
    if (i != axis && it.shape[static_cast<size_t>(i)] > dt.shape[static_cast<size_t>(i)])
      c.fail("indices " + it.str() + " are larger than data " + dt.str() + " in dimension " + std::to_string(i));
  return {gatherAlongAxis(c, data, wrapIndices(c, idx, dt.shape[static_cast<size_t>(axis)]), axis)};
}

// out[t][b] = x[len[b] - 1 - t][b] for t < len[b], else x[t][b] (time axis t, batch axis b).
std::vector<Entry> reverseSequence(Context& c) {
  Entry x = c.in(0), lens = c.in(1);
  TensorType t = c.typeOf(x), lt = c.typeOf(lens);
  int64_t timeAxis = c.attrInt("time_axis", 0), batchAxis = c.attrInt("batch_axis", 1);
  if (t.rank() < 2 || timeAxis == batchAxis || std::min(timeAxis, batchAxis) < 0 || std::max(timeAxis, batchAxis) > 1)
    c.fail("time_axis and batch_axis must be 0 and 1 (in either order) of an input of rank >= 2");
  Shape perBatch(t.shape.size(), 1);
  perBatch[static_cast<size_t>(batchAxis)] = t.shape[static_cast<size_t>(batchAxis)];
  if (lt.rank() != 1 || lt.numel() != perBatch[static_cast<size_t>(batchAxis)] || !isInteger(lt.dtype))
    c.fail("sequence_lens must hold one integer per batch entry, got " + lt.str());
  if (lt.dtype != DType::I64) lens = c.emit1("cast", {lens}, {{"to", DType::I64}});
  Entry len = c.emit1("reshape", {lens}, {{"shape", perBatch}});
  Entry time = c.emit1("iota", {}, {{"shape", t.shape}, {"axis", timeAxis}});
  Entry reversed = c.emit1("sub", {c.emit1("sub", {len, c.scalar(DType::I64, 1)}), time});
  Entry src = c.emit1("where", {c.emit1("compare", {time, len}, {{"direction", "lt"}}), reversed, time});
  return {gatherAlongAxis(c, x, src, timeAxis)};
}

// indices [..., k] address the k dims of data after batch_dims leading dims, which index
// and data share; a gather at flat indices over data's first batch_dims + k dims.
std::vector<Entry> gatherND(Context& c) {
  Entry data = c.in(0), idx = c.in(1);
  TensorType dt = c.typeOf(data), it = c.typeOf(idx);
  int64_t b = c.attrInt("batch_dims", 0);
  if (it.rank() < 1 || b < 0 || b >= std::min(dt.rank(), it.rank())) c.fail("batch_dims " + std::to_string(b) + " is out of range");
  int64_t k = it.shape.back();
  if (b + k > dt.rank()) c.fail("indices " + it.str() + " address more dims than data " + dt.str() + " has");
  for (int64_t i = 0; i < b; ++i)
    if (it.shape[static_cast<size_t>(i)] != dt.shape[static_cast<size_t>(i)])
      c.fail("data " + dt.str() + " and indices " + it.str() + " differ in batch dimension " + std::to_string(i));
  Shape lead(dt.shape.begin(), dt.shape.begin() + b + k), outer(it.shape.begin(), it.shape.end() - 1);
  std::vector<int64_t> strides = rowMajorStrides(lead);
  Entry flat = c.emit1("broadcast", {c.scalar(DType::I64, 0)}, {{"shape", outer}});
  for (int64_t i = 0; i < b; ++i) flat = addCoordinate(c, flat, outer, i, strides[static_cast<size_t>(i)]);
  std::vector<int64_t> start(it.shape.size(), 0), limit = it.shape, stride(it.shape.size(), 1);
  for (int64_t j = 0; j < k; ++j) {
    start.back() = j;
    limit.back() = j + 1;
    Entry col = c.emit1("slice", {idx}, {{"start", start}, {"limit", limit}, {"stride", stride}});
    col = wrapIndices(c, c.emit1("reshape", {col}, {{"shape", outer}}), lead[static_cast<size_t>(b + j)]);
    flat = c.emit1("add", {flat, c.emit1("mul", {col, c.scalar(DType::I64, static_cast<double>(strides[static_cast<size_t>(b + j)]))})});
  }
  return {gatherFlat(c, data, b + k, flat)};
}

// on_value where the (wrapped) index equals the position along the new axis, else
// off_value; indices outside [-depth, depth) give all off_value.
std::vector<Entry> oneHot(Context& c) {
  Entry idx = c.in(0), values = c.in(2);
  TensorType it = c.typeOf(idx), vt = c.typeOf(values);
  const Tensor& dt = c.requireConstant(1, "depth");
  if (dt.numel() != 1) c.fail("depth must hold one value");
  int64_t depth = isFloat(dt.dtype()) ? static_cast<int64_t>(dt.getDouble(0)) : dt.getInt(0);
  if (depth < 1) c.fail("depth must be positive, got " + std::to_string(depth));
  if (vt.numel() != 2 || vt.rank() != 1) c.fail("values must be [off_value, on_value], got " + vt.str());
  int64_t axis = axisOf(c, c.attrInt("axis", -1), it.rank() + 1);
  // Non-integer indices are cast to int64 first, as the spec says.
  if (it.dtype != DType::I64) idx = c.emit1("cast", {idx}, {{"to", DType::I64}});
  idx = wrapIndices(c, idx, depth);
  Shape out = it.shape, unsqueezed = it.shape;
  out.insert(out.begin() + axis, depth);
  unsqueezed.insert(unsqueezed.begin() + axis, 1);
  Entry pos = c.emit1("iota", {}, {{"shape", out}, {"axis", axis}});
  Entry hot = c.emit1("compare", {pos, c.emit1("reshape", {idx}, {{"shape", unsqueezed}})}, {{"direction", "eq"}});
  auto element = [&](int64_t i) {
    return c.emit1("slice", {values}, {{"start", std::vector<int64_t>{i}}, {"limit", std::vector<int64_t>{i + 1}}, {"stride", std::vector<int64_t>{1}}});
  };
  return c.emit("where", {hot, element(1), element(0)});
}

std::vector<Entry> eyeLike(Context& c) {
  TensorType t = c.typeOf(c.in(0));
  if (t.rank() != 2) c.fail("EyeLike needs a 2-D input, got " + t.str());
  DType to = c.hasAttr("dtype") ? dtypeFromOnnx(static_cast<int32_t>(c.attrInt("dtype")), "EyeLike dtype") : t.dtype;
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

Entry padConstant(Context& c, Entry x, size_t axis, int64_t before, int64_t after, Entry value) {
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

// Pad: negative pads crop first (a slice); then constant mode concatenates blocks of the
// value, and edge, reflect and wrap gather at constant source indices.
std::vector<Entry> pad(Context& c) {
  Entry x = c.in(0);
  TensorType t = c.typeOf(x);
  size_t rank = t.shape.size();
  std::string mode = c.attrString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap") c.fail("unknown mode '" + mode + "'");
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
      for (int64_t a : c.constantInts(3, "axes")) axes.push_back(axisOf(c, a, static_cast<int64_t>(rank)));
  } else {
    pads = c.attrInts("pads");
    value = c.scalar(t.dtype, c.attrFloat("value", 0.0f));
  }
  if (axes.empty())
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  if (pads.size() != 2 * axes.size()) c.fail("pads must have 2 entries per padded axis, got " + std::to_string(pads.size()));
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    before[static_cast<size_t>(axes[i])] = pads[i];
    after[static_cast<size_t>(axes[i])] = pads[i + axes.size()];
  }
  std::vector<int64_t> start(rank, 0), limit = t.shape, stride(rank, 1);
  bool crop = false;
  for (size_t i = 0; i < rank; ++i) {
    if (before[i] < 0) start[i] = -before[i], before[i] = 0, crop = true;
    if (after[i] < 0) limit[i] += after[i], after[i] = 0, crop = true;
    if (limit[i] < start[i]) c.fail("negative pads remove more than dimension " + std::to_string(i) + " holds");
  }
  if (crop) x = c.emit1("slice", {x}, {{"start", start}, {"limit", limit}, {"stride", stride}});
  Shape s = c.typeOf(x).shape;
  for (size_t i = 0; i < rank; ++i) {
    if (before[i] == 0 && after[i] == 0) continue;
    if (mode == "constant") {
      x = padConstant(c, x, i, before[i], after[i], value);
      continue;
    }
    if (s[i] == 0) c.fail(mode + " padding of an empty dimension");
    std::vector<int64_t> src;
    for (int64_t j = -before[i]; j < s[i] + after[i]; ++j) src.push_back(padSource(mode, j, s[i]));
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
  if (repeats.size() != s.size()) c.fail("repeats must have one entry per dimension of " + shapeStr(s));
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
  if (b <= 0 || s[1] % (b * b)) c.fail("blocksize " + std::to_string(b) + " does not divide the channels " + std::to_string(s[1]) + " into blocks");
  int64_t n = s[0], ch = s[1] / (b * b), h = s[2], w = s[3];
  std::vector<int64_t> split, perm;
  if (mode == "DCR") split = {n, b, b, ch, h, w}, perm = {0, 3, 4, 1, 5, 2};
  else if (mode == "CRD") split = {n, ch, b, b, h, w}, perm = {0, 1, 4, 2, 5, 3};
  else c.fail("unknown mode '" + mode + "'");
  x = c.emit1("reshape", {x}, {{"shape", split}});
  x = c.emit1("transpose", {x}, {{"perm", perm}});
  return c.emit("reshape", {x}, {{"shape", std::vector<int64_t>{n, ch, h * b, w * b}}});
}

std::vector<Entry> spaceToDepth(Context& c) {
  Entry x = c.in(0);
  Shape s = requireNCHW(c, x);
  int64_t b = c.attrInt("blocksize");
  if (b <= 0 || s[2] % b || s[3] % b) c.fail("blocksize " + std::to_string(b) + " does not divide the spatial dims of " + shapeStr(s));
  int64_t n = s[0], ch = s[1], h = s[2] / b, w = s[3] / b;
  x = c.emit1("reshape", {x}, {{"shape", std::vector<int64_t>{n, ch, h, b, w, b}}});
  x = c.emit1("transpose", {x}, {{"perm", std::vector<int64_t>{0, 3, 5, 1, 2, 4}}});
  return c.emit("reshape", {x}, {{"shape", std::vector<int64_t>{n, ch * b * b, h, w}}});
}

} // namespace

void registerIndexImports(OpTable& t) {
  t["GatherElements"] = gatherElements;
  t["GatherND"] = gatherND;
  t["ReverseSequence"] = reverseSequence;
  t["OneHot"] = oneHot;
  t["EyeLike"] = eyeLike;
  t["Pad"] = pad;
  t["Tile"] = tile;
  t["DepthToSpace"] = depthToSpace;
  t["SpaceToDepth"] = spaceToDepth;
}

} // namespace shardc::onnximport
