// ONNX gathers and scatters at computed flat indices: GatherElements, GatherND,
// ScatterElements (and the older Scatter), ScatterND, MaxUnpool and ReverseSequence, all on
// shardc's gather and scatter_add over a tensor viewed as rows.
#include "OnnxContext.h"

#include <algorithm>

namespace shardc::onnximport {
namespace {

// Indices as i64 with negative ones counted from the end of a dimension of size n.
Entry wrapIndices(Context& c, Entry idx, int64_t n) {
  if (!isInteger(c.typeOf(idx).dtype))
    c.fail("indices must be integers, got " + c.typeOf(idx).str());
  if (c.typeOf(idx).dtype != DType::I64) idx = c.emit1("cast", {idx}, {{"to", DType::I64}});
  Entry zero = c.scalar(DType::I64, 0);
  Entry negative = c.emit1("compare", {idx, zero}, {{"direction", "lt"}});
  return c.emit1(
      "where",
      {negative, c.emit1("add", {idx, c.scalar(DType::I64, static_cast<double>(n))}), idx});
}

// Adds coordinate `axis` of `shape` times `stride` to a flat (row-major) index.
Entry addCoordinate(Context& c, Entry flat, const Shape& shape, int64_t axis, int64_t stride) {
  Entry coord = c.emit1("iota", {}, {{"shape", shape}, {"axis", axis}});
  return c.emit1(
      "add", {flat, c.emit1("mul", {coord, c.scalar(DType::I64, static_cast<double>(stride))})});
}

// Whether (non-negative after wrapping) indices lie in [0, n).
Entry inRange(Context& c, Entry idx, int64_t n) {
  Entry lo = c.emit1("compare", {idx, c.scalar(DType::I64, 0)}, {{"direction", "ge"}});
  Entry hi = c.emit1("compare", {idx, c.scalar(DType::I64, static_cast<double>(n))},
                     {{"direction", "lt"}});
  return c.emit1("and", {lo, hi});
}

std::vector<int64_t> rowMajorStrides(const Shape& s) {
  std::vector<int64_t> strides(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;)
    strides[i - 1] = strides[i] * s[i];
  return strides;
}

// Row indices into a tensor viewed as [rows, rest...]. Where an index was out of bounds (an
// error in ONNX) the row is made out of range, so that the gather or scatter fails at run
// time instead of touching another element.
Entry rowIndex(Context& c, Entry flat, Entry valid, int64_t rows) {
  return c.emit1("where", {valid, flat, c.scalar(DType::I64, -static_cast<double>(rows) - 1)});
}

// The row index of element [i][j][k] -> [idx[i][j][k]][j][k] (for axis 0) of data: the
// *Elements ops' addressing. idx holds i64 indices, negative ones already wrapped.
Entry elementRows(Context& c, const Shape& data, Entry idx, int64_t axis) {
  Shape is = c.typeOf(idx).shape;
  std::vector<int64_t> strides = rowMajorStrides(data);
  Entry flat = c.emit1(
      "mul", {idx, c.scalar(DType::I64, static_cast<double>(strides[static_cast<size_t>(axis)]))});
  for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i)
    if (i != axis) flat = addCoordinate(c, flat, is, i, strides[static_cast<size_t>(i)]);
  return rowIndex(c, flat, inRange(c, idx, data[static_cast<size_t>(axis)]), numel(data));
}

// The row index, over `lead` (batch_dims + k dims), of each k-tuple in idx [..., k] (the
// *ND ops' addressing); the first `batch` dims of idx and lead are shared.
Entry tupleRows(Context& c, const Shape& lead, Entry idx, int64_t batch) {
  Shape is = c.typeOf(idx).shape, outer(is.begin(), is.end() - 1);
  int64_t k = is.back();
  std::vector<int64_t> strides = rowMajorStrides(lead);
  Entry flat = c.emit1("broadcast", {c.scalar(DType::I64, 0)}, {{"shape", outer}});
  Entry valid = c.emit1("broadcast", {c.scalar(DType::I1, 1)}, {{"shape", outer}});
  for (int64_t i = 0; i < batch; ++i)
    flat = addCoordinate(c, flat, outer, i, strides[static_cast<size_t>(i)]);
  std::vector<int64_t> start(is.size(), 0), limit = is, stride(is.size(), 1);
  for (int64_t j = 0; j < k; ++j) {
    int64_t n = lead[static_cast<size_t>(batch + j)];
    start.back() = j;
    limit.back() = j + 1;
    Entry col = c.emit1("slice", {idx}, {{"start", start}, {"limit", limit}, {"stride", stride}});
    col = wrapIndices(c, c.emit1("reshape", {col}, {{"shape", outer}}), n);
    valid = c.emit1("and", {valid, inRange(c, col, n)});
    Entry scaled = c.emit1(
        "mul",
        {col, c.scalar(DType::I64, static_cast<double>(strides[static_cast<size_t>(batch + j)]))});
    flat = c.emit1("add", {flat, scaled});
  }
  return rowIndex(c, flat, valid, numel(lead));
}

// x viewed as [product of its first `dims` dims, the rest...].
Entry asRows(Context& c, Entry x, int64_t dims) {
  Shape s = c.typeOf(x).shape;
  Shape rows{1};
  for (int64_t i = 0; i < dims; ++i)
    rows[0] *= s[static_cast<size_t>(i)];
  rows.insert(rows.end(), s.begin() + dims, s.end());
  return c.emit1("reshape", {x}, {{"shape", rows}});
}

Entry gatherRows(Context& c, Entry data, int64_t dims, Entry rows) {
  return c.emit1("gather", {asRows(c, data, dims), rows}, {{"axis", int64_t(0)}});
}

// How scattered updates combine with each other and the data they land on.
enum class Combine {
  Replace, // the update (duplicate indices are invalid: they would sum)
  Add,     // data plus all updates
  Average, // the mean of the updates, for identical duplicates (MaxUnpool)
};

// Scatters updates [U, rest...] into data [R, rest...] at row indices [U].
Entry scatterRows(Context& c, Entry data, Entry rows, Entry updates, Combine how) {
  Shape ds = c.typeOf(data).shape;
  DType t = c.typeOf(data).dtype;
  Entry sum = c.emit1("scatter_add", {rows, updates}, {{"axis", int64_t(0)}, {"shape", ds}});
  if (how == Combine::Add) return c.emit1("add", {data, sum});
  Shape perRow(ds.size(), 1);
  perRow[0] = ds[0];
  Entry ones = c.emit1("broadcast", {c.scalar(DType::I64, 1)}, {{"shape", c.typeOf(rows).shape}});
  Entry count =
      c.emit1("scatter_add", {rows, ones}, {{"axis", int64_t(0)}, {"shape", Shape{ds[0]}}});
  count = c.emit1("reshape", {count}, {{"shape", perRow}});
  Entry hit = c.emit1("compare", {count, c.scalar(DType::I64, 0)}, {{"direction", "gt"}});
  if (how == Combine::Average) sum = c.emit1("div", {sum, c.emit1("cast", {count}, {{"to", t}})});
  return c.emit1("where", {hit, sum, data});
}

// out[i][j][k] = data[index[i][j][k]][j][k] (axis 0).
std::vector<Entry> gatherElements(Context& c) {
  Entry data = c.in(0), idx = c.in(1);
  TensorType dt = c.typeOf(data), it = c.typeOf(idx);
  if (dt.rank() != it.rank() || dt.rank() == 0)
    c.fail("data " + dt.str() + " and indices " + it.str() + " must have the same rank >= 1");
  int64_t axis = c.axis(c.attrInt("axis", 0), dt.rank());
  for (int64_t i = 0; i < dt.rank(); ++i)
    if (i != axis && it.shape[static_cast<size_t>(i)] > dt.shape[static_cast<size_t>(i)])
      c.fail("indices " + it.str() + " are larger than data " + dt.str() + " in dimension " +
             std::to_string(i));
  idx = wrapIndices(c, idx, dt.shape[static_cast<size_t>(axis)]);
  return {gatherRows(c, data, dt.rank(), elementRows(c, dt.shape, idx, axis))};
}

// output = data, then output[index[i][j]][j] = updates[i][j] (axis 0), or += with
// reduction "add".
std::vector<Entry> scatterElements(Context& c) {
  Entry data = c.in(0), idx = c.in(1), upd = c.in(2);
  TensorType dt = c.typeOf(data), it = c.typeOf(idx), ut = c.typeOf(upd);
  if (dt.rank() != it.rank() || it.shape != ut.shape || ut.dtype != dt.dtype)
    c.fail("data " + dt.str() + ", indices " + it.str() + " and updates " + ut.str() +
           " must have the same rank, and indices and updates the same shape");
  int64_t axis = c.axis(c.attrInt("axis", 0), dt.rank());
  std::string reduction = c.opset() >= 16 ? c.attrString("reduction", "none") : "none";
  if (reduction != "none" && reduction != "add")
    c.fail("reduction '" + reduction + "' is not supported yet (supported: none, add)");
  idx = wrapIndices(c, idx, dt.shape[static_cast<size_t>(axis)]);
  Entry rows =
      c.emit1("reshape", {elementRows(c, dt.shape, idx, axis)}, {{"shape", Shape{it.numel()}}});
  Entry y = scatterRows(c, asRows(c, data, dt.rank()), rows, asRows(c, upd, ut.rank()),
                        reduction == "add" ? Combine::Add : Combine::Replace);
  return c.emit("reshape", {y}, {{"shape", dt.shape}});
}

// output = data, then output[indices[q]] = updates[q] for each k-tuple q, or += with
// reduction "add".
std::vector<Entry> scatterND(Context& c) {
  Entry data = c.in(0), idx = c.in(1), upd = c.in(2);
  TensorType dt = c.typeOf(data), it = c.typeOf(idx), ut = c.typeOf(upd);
  if (it.rank() < 1 || it.shape.back() > dt.rank())
    c.fail("indices " + it.str() + " do not fit data " + dt.str());
  int64_t k = it.shape.back();
  Shape outer(it.shape.begin(), it.shape.end() - 1), want = outer;
  want.insert(want.end(), dt.shape.begin() + k, dt.shape.end());
  if (ut.shape != want || ut.dtype != dt.dtype)
    c.fail("updates must be " + shapeStr(want) + " of the data's type, got " + ut.str());
  std::string reduction = c.attrString("reduction", "none");
  if (reduction != "none" && reduction != "add")
    c.fail("reduction '" + reduction + "' is not supported yet (supported: none, add)");
  Entry rows = tupleRows(c, Shape(dt.shape.begin(), dt.shape.begin() + k), idx, 0);
  rows = c.emit1("reshape", {rows}, {{"shape", Shape{numel(outer)}}});
  Entry y =
      scatterRows(c, asRows(c, data, k), rows, asRows(c, upd, static_cast<int64_t>(outer.size())),
                  reduction == "add" ? Combine::Add : Combine::Replace);
  return c.emit("reshape", {y}, {{"shape", dt.shape}});
}

// out[t][b] = x[len[b] - 1 - t][b] for t < len[b], else x[t][b] (time axis t, batch axis b).
std::vector<Entry> reverseSequence(Context& c) {
  Entry x = c.in(0), lens = c.in(1);
  TensorType t = c.typeOf(x), lt = c.typeOf(lens);
  int64_t timeAxis = c.attrInt("time_axis", 0), batchAxis = c.attrInt("batch_axis", 1);
  if (t.rank() < 2 || timeAxis == batchAxis || std::min(timeAxis, batchAxis) < 0 ||
      std::max(timeAxis, batchAxis) > 1)
    c.fail("time_axis and batch_axis must be 0 and 1 (in either order) of an input of rank >= 2");
  Shape perBatch(t.shape.size(), 1);
  perBatch[static_cast<size_t>(batchAxis)] = t.shape[static_cast<size_t>(batchAxis)];
  if (lt.rank() != 1 || lt.numel() != perBatch[static_cast<size_t>(batchAxis)] ||
      !isInteger(lt.dtype))
    c.fail("sequence_lens must hold one integer per batch entry, got " + lt.str());
  if (lt.dtype != DType::I64) lens = c.emit1("cast", {lens}, {{"to", DType::I64}});
  Entry len = c.emit1("reshape", {lens}, {{"shape", perBatch}});
  Entry time = c.emit1("iota", {}, {{"shape", t.shape}, {"axis", timeAxis}});
  Entry reversed = c.emit1("sub", {c.emit1("sub", {len, c.scalar(DType::I64, 1)}), time});
  Entry src =
      c.emit1("where", {c.emit1("compare", {time, len}, {{"direction", "lt"}}), reversed, time});
  return {gatherRows(c, x, t.rank(), elementRows(c, t.shape, src, timeAxis))};
}

// indices [..., k] address the k dims of data after batch_dims leading dims, which index
// and data share; a gather at flat indices over data's first batch_dims + k dims.
std::vector<Entry> gatherND(Context& c) {
  Entry data = c.in(0), idx = c.in(1);
  TensorType dt = c.typeOf(data), it = c.typeOf(idx);
  int64_t b = c.attrInt("batch_dims", 0);
  if (it.rank() < 1 || b < 0 || b >= std::min(dt.rank(), it.rank()))
    c.fail("batch_dims " + std::to_string(b) + " is out of range");
  int64_t k = it.shape.back();
  if (b + k > dt.rank())
    c.fail("indices " + it.str() + " address more dims than data " + dt.str() + " has");
  for (int64_t i = 0; i < b; ++i)
    if (it.shape[static_cast<size_t>(i)] != dt.shape[static_cast<size_t>(i)])
      c.fail("data " + dt.str() + " and indices " + it.str() + " differ in batch dimension " +
             std::to_string(i));
  Shape lead(dt.shape.begin(), dt.shape.begin() + b + k);
  return {gatherRows(c, data, b + k, tupleRows(c, lead, idx, b))};
}

// MaxUnpool: zeros of the unpooled shape with X's values at the flat indices I (as MaxPool
// returns them). Overlapping windows can repeat an index, with the same value: averaged.
std::vector<Entry> maxUnpool(Context& c) {
  Entry x = c.in(0), idx = c.in(1);
  TensorType xt = c.typeOf(x), it = c.typeOf(idx);
  if (xt.rank() < 3 || it.shape != xt.shape || !isInteger(it.dtype))
    c.fail("X " + xt.str() + " and I " + it.str() + " must have the same shape, of rank >= 3");
  size_t nd = static_cast<size_t>(xt.rank() - 2);
  std::vector<int64_t> kernel = c.attrInts("kernel_shape");
  std::vector<int64_t> strides = c.attrInts("strides", std::vector<int64_t>(nd, 1));
  std::vector<int64_t> pads = c.attrInts("pads", std::vector<int64_t>(2 * nd, 0));
  if (kernel.size() != nd || strides.size() != nd || pads.size() != 2 * nd)
    c.fail("kernel_shape, strides and pads need one entry per spatial dim (two for pads)");
  Shape out{xt.shape[0], xt.shape[1]};
  for (size_t i = 0; i < nd; ++i)
    out.push_back((xt.shape[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + nd]);
  if (c.hasInput(2)) {
    std::vector<int64_t> given = c.constantInts(2, "output_shape");
    if (given.size() != out.size() || given[0] != out[0] || given[1] != out[1])
      c.fail("output_shape " + shapeStr(given) + " does not match the input " + xt.str());
    out = given;
  }
  int64_t total = numel(out), n = xt.numel();
  if (it.dtype != DType::I64) idx = c.emit1("cast", {idx}, {{"to", DType::I64}});
  idx = c.emit1("reshape", {idx}, {{"shape", Shape{n}}});
  Entry rows = rowIndex(c, idx, inRange(c, idx, total), total);
  Entry zeros = c.emit1("broadcast", {c.scalar(xt.dtype, 0)}, {{"shape", Shape{total}}});
  Entry y =
      scatterRows(c, zeros, rows, c.emit1("reshape", {x}, {{"shape", Shape{n}}}), Combine::Average);
  return c.emit("reshape", {y}, {{"shape", out}});
}

} // namespace

void registerGatherImports(OpTable& t) {
  t["GatherElements"] = gatherElements;
  t["GatherND"] = gatherND;
  t["ScatterElements"] = scatterElements;
  t["Scatter"] = scatterElements;
  t["ScatterND"] = scatterND;
  t["MaxUnpool"] = maxUnpool;
  t["ReverseSequence"] = reverseSequence;
}

} // namespace shardc::onnximport
