// ONNX convolutions and pooling over 1-D, 2-D and 3-D windows, all on shardc's 2-D ops:
// a 1-D window is a 2-D one over a unit dim; a 3-D one is a sum (convolution, average) or
// maximum of 2-D windows over depth frames. ConvTranspose is a convolution of the input
// spread out by the stride.
#include "OnnxContext.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace shardc::onnximport {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A window over `rank()` spatial dims.
struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pads; // the begins of all spatial dims, then the ends
  size_t rank() const { return kernel.size(); }
  int64_t extent(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
};

// Attribute `name` with one entry per spatial dim.
std::vector<int64_t> spatialInts(Context& c, const std::string& name, size_t nd,
                                 std::optional<std::vector<int64_t>> dflt) {
  std::vector<int64_t> v = c.attrInts(name, dflt);
  if (v.size() != nd)
    c.fail(name + " needs " + std::to_string(nd) + " entries, got " + std::to_string(v.size()));
  // A window's sizes and steps divide later (a zero stride was a division by zero).
  for (int64_t e : v)
    if (name != "pads" && name != "output_padding" && e < 1)
      c.fail(name + " entries must be positive, got " + std::to_string(e));
  return v;
}

// Pads from `pads` or auto_pad; x is the input shape [N, C, spatial...].
std::vector<int64_t> windowPads(Context& c, const Shape& x, const Window& w) {
  size_t nd = w.rank();
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") return spatialInts(c, "pads", 2 * nd, std::vector<int64_t>(2 * nd, 0));
  if (autoPad == "VALID") return std::vector<int64_t>(2 * nd, 0);
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    c.fail("unknown auto_pad '" + autoPad + "'");
  std::vector<int64_t> pads(2 * nd);
  for (size_t i = 0; i < nd; ++i) {
    int64_t in = x[2 + i], out = (in + w.strides[i] - 1) / w.strides[i];
    int64_t total = std::max<int64_t>((out - 1) * w.strides[i] + w.extent(i) - in, 0);
    int64_t small = total / 2, big = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : big;
    pads[i + nd] = autoPad == "SAME_UPPER" ? big : small;
  }
  return pads;
}

size_t spatialRank(Context& c, const TensorType& x) {
  if (x.rank() < 3 || x.rank() > 5)
    c.fail("only 1-D, 2-D and 3-D windows (inputs of rank 3 to 5) are supported, got " + x.str());
  return static_cast<size_t>(x.rank() - 2);
}

Window readWindow(Context& c, const Shape& x, std::optional<std::vector<int64_t>> kernel) {
  size_t nd = x.size() - 2;
  Window w;
  w.kernel = spatialInts(c, "kernel_shape", nd, kernel);
  w.strides = spatialInts(c, "strides", nd, std::vector<int64_t>(nd, 1));
  w.dilations = spatialInts(c, "dilations", nd, std::vector<int64_t>(nd, 1));
  w.pads = windowPads(c, x, w);
  return w;
}

// The 2-D window over the last two spatial dims; a 1-D window gets a unit first dim.
Window planar(const Window& w) {
  size_t nd = w.rank();
  if (nd == 1)
    return Window{
        {1, w.kernel[0]}, {1, w.strides[0]}, {1, w.dilations[0]}, {0, w.pads[0], 0, w.pads[1]}};
  size_t h = nd - 2, v = nd - 1;
  return Window{{w.kernel[h], w.kernel[v]},
                {w.strides[h], w.strides[v]},
                {w.dilations[h], w.dilations[v]},
                {w.pads[h], w.pads[v], w.pads[nd + h], w.pads[nd + v]}};
}

AttrDict conv2dAttrs(const Window& p, int64_t groups) {
  return {{"strides", p.strides}, {"dilations", p.dilations}, {"pads", p.pads}, {"groups", groups}};
}

Entry reshapeTo(Context& c, Entry x, std::vector<int64_t> shape) {
  return c.emit1("reshape", {x}, {{"shape", shape}});
}

// [N, C, L] <-> [N, C, 1, L] for 1-D windows.
Entry addUnitDim2(Context& c, Entry x) {
  Shape s = c.typeOf(x).shape;
  return reshapeTo(c, x, {s[0], s[1], 1, s[2]});
}
Entry dropUnitDim2(Context& c, Entry y) {
  Shape s = c.typeOf(y).shape;
  return reshapeTo(c, y, {s[0], s[1], s[3]});
}

// Number of outputs of a window of `extent` with `stride` over `size` (padded) elements.
int64_t windowCount(Context& c, int64_t size, int64_t extent, int64_t stride) {
  if (size < extent)
    c.fail("the window (" + std::to_string(extent) + ") is larger than the padded input (" +
           std::to_string(size) + ")");
  return (size - extent) / stride + 1;
}

// Frames o * stride + k * dilation (o < out) of depth-padded x [N, C, D, H, W], as
// [N, C, out, H, W].
Entry depthFrames(Context& c, Entry x, int64_t k, const Window& w, int64_t out) {
  std::vector<int64_t> idx;
  for (int64_t o = 0; o < out; ++o)
    idx.push_back(o * w.strides[0] + k * w.dilations[0]);
  Tensor t = Tensor::fromInts(TensorType{DType::I64, {out}}, idx);
  return c.emit1("gather", {x, c.constant(std::move(t))}, {{"axis", int64_t(2)}});
}

// 3-D convolution as a sum over kernel depth of 2-D convolutions of depth frames, the
// frames folded into the batch.
Entry conv3d(Context& c, Entry x, Entry w, std::optional<Entry> bias, const Window& win,
             int64_t groups) {
  Shape ws = c.typeOf(w).shape;
  x = padAxis(c, x, 2, win.pads[0], win.pads[3]);
  Shape xs = c.typeOf(x).shape;
  int64_t out = windowCount(c, xs[2], win.extent(0), win.strides[0]);
  Window p = planar(win);
  std::optional<Entry> sum;
  for (int64_t k = 0; k < win.kernel[0]; ++k) {
    Entry f = c.emit1("transpose", {depthFrames(c, x, k, win, out)},
                      {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}});
    f = reshapeTo(c, f, {xs[0] * out, xs[1], xs[3], xs[4]});
    Entry wk = c.emit1("slice", {w},
                       {{"start", std::vector<int64_t>{0, 0, k, 0, 0}},
                        {"limit", std::vector<int64_t>{ws[0], ws[1], k + 1, ws[3], ws[4]}},
                        {"stride", std::vector<int64_t>{1, 1, 1, 1, 1}}});
    std::vector<Entry> ops{f, reshapeTo(c, wk, {ws[0], ws[1], ws[3], ws[4]})};
    if (k == 0 && bias) ops.push_back(*bias);
    Entry y = c.emit1("conv2d", ops, conv2dAttrs(p, groups));
    sum = sum ? c.emit1("add", {*sum, y}) : y;
  }
  Shape ys = c.typeOf(*sum).shape;
  Entry y = reshapeTo(c, *sum, {xs[0], out, ys[1], ys[2], ys[3]});
  return c.emit1("transpose", {y}, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}});
}

// Convolution of x [N, C, spatial...] with w [F, C/groups, kernel...] over a 1-D, 2-D or
// 3-D window.
Entry convolve(Context& c, Entry x, Entry w, std::optional<Entry> bias, const Window& win,
               int64_t groups) {
  size_t nd = win.rank();
  if (nd == 3) return conv3d(c, x, w, bias, win, groups);
  if (nd == 1) x = addUnitDim2(c, x), w = addUnitDim2(c, w);
  std::vector<Entry> ops{x, w};
  if (bias) ops.push_back(*bias);
  Entry y = c.emit1("conv2d", ops, conv2dAttrs(planar(win), groups));
  return nd == 1 ? dropUnitDim2(c, y) : y;
}

std::optional<Entry> optionalInput(Context& c, size_t i) {
  return c.hasInput(i) ? std::optional<Entry>(c.in(i)) : std::nullopt;
}

std::vector<Entry> conv(Context& c) {
  Entry x = c.in(0), w = c.in(1);
  TensorType xt = c.typeOf(x), wt = c.typeOf(w);
  spatialRank(c, xt);
  if (wt.rank() != xt.rank()) c.fail("the weight " + wt.str() + " must have the input's rank");
  std::vector<int64_t> kernel(wt.shape.begin() + 2, wt.shape.end());
  Window win = readWindow(c, xt.shape, kernel);
  if (win.kernel != kernel) c.fail("kernel_shape disagrees with the weight's shape " + wt.str());
  return {convolve(c, x, w, optionalInput(c, 2), win, c.attrInt("group", 1))};
}

// ConvTranspose's pads: from `pads`, or split from the total that output_shape (or, for
// SAME auto_pad, input size * stride) implies, as the spec says. A target beyond the full
// output grows it at the end.
std::vector<int64_t> transposePads(Context& c, const Shape& x, const Window& w,
                                   const std::vector<int64_t>& outPad) {
  size_t nd = w.rank();
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    c.fail("unknown auto_pad '" + autoPad + "'");
  std::vector<int64_t> pads = spatialInts(c, "pads", 2 * nd, std::vector<int64_t>(2 * nd, 0)),
                       target;
  if (c.hasAttr("output_shape")) {
    target = c.attrInts("output_shape");
    if (target.size() == nd + 2) target.erase(target.begin(), target.begin() + 2);
    if (target.size() != nd) c.fail("output_shape needs " + std::to_string(nd) + " entries");
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < nd; ++i)
      target.push_back(x[2 + i] * w.strides[i]);
  } else if (autoPad == "VALID") {
    std::fill(pads.begin(), pads.end(), 0);
  }
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t total = w.strides[i] * (x[2 + i] - 1) + outPad[i] + w.extent(i) - target[i];
    if (total < 0)
      pads[i] = 0, pads[i + nd] = total;
    else if (autoPad == "SAME_UPPER")
      pads[i] = total / 2, pads[i + nd] = total - total / 2;
    else
      pads[i] = total - total / 2, pads[i + nd] = total / 2;
  }
  return pads;
}

// ConvTranspose as a convolution: the input with stride - 1 zeros between elements and
// extent - 1 - pad zeros around (plus output_padding at the end), convolved with the kernel
// flipped spatially and its channel dims swapped per group. Covers what the direct form
// below does not: 3-D windows, negative pads, output_padding >= stride.
Entry convTransposeByConv(Context& c, Entry x, Entry w, std::optional<Entry> bias,
                          const Window& win, const std::vector<int64_t>& outPad, int64_t groups) {
  Shape ws = c.typeOf(w).shape;
  size_t nd = win.rank();
  // One pad spreads the input and pads it; negative amounts crop afterwards.
  Shape xs = c.typeOf(x).shape;
  std::vector<int64_t> low(xs.size(), 0), high(xs.size(), 0), interior(xs.size(), 0);
  std::vector<int64_t> start(xs.size(), 0), limit, stride(xs.size(), 1);
  for (size_t i = 0; i < nd; ++i) {
    int64_t edge = win.extent(i) - 1, lo = edge - win.pads[i],
            hi = edge - win.pads[i + nd] + outPad[i];
    low[2 + i] = std::max<int64_t>(lo, 0);
    high[2 + i] = std::max<int64_t>(hi, 0);
    interior[2 + i] = win.strides[i] - 1;
    start[2 + i] = std::max<int64_t>(-lo, 0);
  }
  x = c.emit1("pad", {x}, {{"low", low}, {"high", high}, {"interior", interior}});
  limit = c.typeOf(x).shape;
  for (size_t i = 0; i < nd; ++i) {
    int64_t hi = win.extent(i) - 1 - win.pads[i + nd] + outPad[i];
    limit[2 + i] -= std::max<int64_t>(-hi, 0);
    if (limit[2 + i] < start[2 + i]) c.fail("the pads crop away the whole output");
  }
  if (start != std::vector<int64_t>(xs.size(), 0) || limit != c.typeOf(x).shape)
    x = c.emit1("slice", {x}, {{"start", start}, {"limit", limit}, {"stride", stride}});
  // [C, F/g, k...] -> [g, C/g, F/g, k...] -> [g, F/g, C/g, k...] -> [F, C/g, k...], flipped.
  int64_t cg = ws[0] / groups, fg = ws[1];
  std::vector<int64_t> grouped{groups, cg, fg}, perm{0, 2, 1}, flat{groups * fg, cg};
  for (size_t i = 0; i < nd; ++i) {
    grouped.push_back(win.kernel[i]);
    perm.push_back(static_cast<int64_t>(3 + i));
    flat.push_back(win.kernel[i]);
  }
  w = reshapeTo(c, c.emit1("transpose", {reshapeTo(c, w, grouped)}, {{"perm", perm}}), flat);
  for (size_t i = 0; i < nd; ++i) {
    std::vector<int64_t> rev;
    for (int64_t j = win.kernel[i] - 1; j >= 0; --j)
      rev.push_back(j);
    Tensor idx = Tensor::fromInts(TensorType{DType::I64, {win.kernel[i]}}, rev);
    w = c.emit1("gather", {w, c.constant(std::move(idx))}, {{"axis", static_cast<int64_t>(2 + i)}});
  }
  Window unit{win.kernel, std::vector<int64_t>(nd, 1), win.dilations,
              std::vector<int64_t>(2 * nd, 0)};
  return convolve(c, x, w, bias, unit, groups);
}

// ConvTranspose is the gradient of a convolution with respect to its input: for 1-D and 2-D
// windows with non-negative pads and output_padding < stride, one conv2d_backward_input
// whose input_shape is the transposed convolution's output.
bool directConvTranspose(const Window& win, const std::vector<int64_t>& outPad) {
  for (size_t i = 0; i < win.rank(); ++i)
    if (win.pads[i] < 0 || win.pads[i + win.rank()] < 0 || outPad[i] >= win.strides[i])
      return false;
  return win.rank() <= 2;
}

std::vector<Entry> convTranspose(Context& c) {
  Entry x = c.in(0), w = c.in(1);
  TensorType xt = c.typeOf(x), wt = c.typeOf(w);
  size_t nd = spatialRank(c, xt);
  if (wt.rank() != xt.rank()) c.fail("the weight " + wt.str() + " must have the input's rank");
  int64_t groups = c.attrInt("group", 1);
  if (groups < 1 || xt.shape[1] != wt.shape[0] || wt.shape[0] % groups)
    c.fail("the weight " + wt.str() + " does not match the input " + xt.str() + " and group " +
           std::to_string(groups));
  std::vector<int64_t> kernel(wt.shape.begin() + 2, wt.shape.end());
  Window win;
  win.kernel = spatialInts(c, "kernel_shape", nd, kernel);
  if (win.kernel != kernel) c.fail("kernel_shape disagrees with the weight's shape " + wt.str());
  win.strides = spatialInts(c, "strides", nd, std::vector<int64_t>(nd, 1));
  win.dilations = spatialInts(c, "dilations", nd, std::vector<int64_t>(nd, 1));
  std::vector<int64_t> outPad = spatialInts(c, "output_padding", nd, std::vector<int64_t>(nd, 0));
  win.pads = transposePads(c, xt.shape, win, outPad);
  std::optional<Entry> bias = optionalInput(c, 2);
  if (!directConvTranspose(win, outPad))
    return {convTransposeByConv(c, x, w, bias, win, outPad, groups)};
  Shape out{xt.shape[0], wt.shape[1] * groups};
  for (size_t i = 0; i < nd; ++i)
    out.push_back(win.strides[i] * (xt.shape[2 + i] - 1) + outPad[i] + win.extent(i) - win.pads[i] -
                  win.pads[i + nd]);
  if (nd == 1) x = addUnitDim2(c, x), w = addUnitDim2(c, w), out.insert(out.begin() + 2, 1);
  AttrDict attrs = conv2dAttrs(planar(win), groups);
  attrs.set("input_shape", out);
  Entry y = c.emit1("conv2d_backward_input", {x, w}, std::move(attrs));
  if (bias) y = c.emit1("add", {y, reshapeTo(c, *bias, {out[1], 1, 1})});
  return {nd == 1 ? dropUnitDim2(c, y) : y};
}

// ceil_mode: grows the end pads so that a floor division gives the ceiling's window count.
// The extra padding never counts (max pooling ignores padding, average pooling without
// count_include_pad excludes it); a window starting in the padding is not allowed.
void applyCeilMode(Context& c, const Shape& x, Window& w, bool includePad) {
  size_t nd = w.rank();
  for (size_t i = 0; i < nd; ++i) {
    int64_t size = x[2 + i] + w.pads[i] + w.pads[i + nd];
    int64_t floorCount = windowCount(c, size, w.extent(i), w.strides[i]);
    int64_t ceilCount = (size - w.extent(i) + w.strides[i] - 1) / w.strides[i] + 1;
    if (ceilCount == floorCount) continue;
    if (includePad) c.fail("ceil_mode = 1 with count_include_pad = 1 is not supported yet");
    if ((ceilCount - 1) * w.strides[i] >= x[2 + i] + w.pads[i])
      c.fail("with ceil_mode = 1 the last window starts in the padding; not supported yet");
    w.pads[i + nd] += (ceilCount - 1) * w.strides[i] + w.extent(i) - size;
  }
}

AttrDict poolAttrs(const Window& p, bool isMax, bool includePad) {
  AttrDict attrs{
      {"kernel", p.kernel}, {"strides", p.strides}, {"dilations", p.dilations}, {"pads", p.pads}};
  if (!isMax) attrs.set("count_include_pad", includePad);
  return attrs;
}

// 3-D pooling: the 2-D pooling of each depth frame (frames folded into the channels),
// then the maximum, or the average, over the kernel's depth. Depth padding is -inf for
// max pooling; for average pooling it is 0 and the divisor counts it only with
// count_include_pad.
Entry pool3d(Context& c, const char* op, bool isMax, bool includePad, Entry x, const Window& win) {
  TensorType t = c.typeOf(x);
  if (isMax && !isFloat(t.dtype))
    c.fail("3-D max pooling needs a floating-point input, got " + t.str());
  x = padAxis(c, x, 2, win.pads[0], win.pads[3], isMax ? -kInf : 0.0);
  Shape xs = c.typeOf(x).shape;
  int64_t out = windowCount(c, xs[2], win.extent(0), win.strides[0]);
  AttrDict attrs = poolAttrs(planar(win), isMax, includePad);
  std::optional<Entry> acc;
  for (int64_t k = 0; k < win.kernel[0]; ++k) {
    Entry f = reshapeTo(c, depthFrames(c, x, k, win, out), {xs[0], xs[1] * out, xs[3], xs[4]});
    Entry y = c.emit1(op, {f}, attrs);
    acc = !acc ? y : c.emit1(isMax ? "max" : "add", {*acc, y});
  }
  Shape ys = c.typeOf(*acc).shape;
  Entry y = reshapeTo(c, *acc, {xs[0], xs[1], out, ys[2], ys[3]});
  if (isMax) return y;
  // The divisor per output depth: the whole kernel depth, or its frames inside the input.
  Tensor scale(TensorType{t.dtype, {1, 1, out, 1, 1}});
  for (int64_t o = 0; o < out; ++o) {
    int64_t real = 0;
    for (int64_t k = 0; k < win.kernel[0]; ++k) {
      int64_t d = o * win.strides[0] + k - win.pads[0];
      real += d >= 0 && d < t.shape[2];
    }
    scale.setDouble(o, 1.0 / static_cast<double>(includePad ? win.kernel[0] : real));
  }
  return c.emit1("mul", {y, c.constant(std::move(scale))});
}

// MaxPool's Indices output for a 2-D window over x [N, C, H, W] with result y: the flat
// index (row- or column-major over H and W) of the first element, in window scan order,
// that equals the maximum. Scans the kernel offsets backwards, each overriding the last.
Entry maxPoolIndices(Context& c, Entry x, Entry y, const Window& p, bool columnMajor) {
  TensorType xt = c.typeOf(x);
  Shape ys = c.typeOf(y).shape;
  int64_t nC = xt.shape[1], h = xt.shape[2], w = xt.shape[3];
  if (!isFloat(xt.dtype))
    c.fail("the Indices output needs a floating-point input, got " + xt.str());
  Entry xp =
      padAxis(c, padAxis(c, x, 2, p.pads[0], p.pads[2], -kInf), 3, p.pads[1], p.pads[3], -kInf);
  auto iota = [&](int64_t axis) { return c.emit1("iota", {}, {{"shape", ys}, {"axis", axis}}); };
  auto i64 = [&](int64_t v) { return c.scalar(DType::I64, static_cast<double>(v)); };
  // (n * C + c) * H * W, then each offset's row and column.
  Entry plane =
      c.emit1("mul", {c.emit1("add", {c.emit1("mul", {iota(0), i64(nC)}), iota(1)}), i64(h * w)});
  std::optional<Entry> idx;
  for (int64_t kh = p.kernel[0] - 1; kh >= 0; --kh)
    for (int64_t kw = p.kernel[1] - 1; kw >= 0; --kw) {
      int64_t dh = kh * p.dilations[0], dw = kw * p.dilations[1];
      Entry cand =
          c.emit1("slice", {xp},
                  {{"start", std::vector<int64_t>{0, 0, dh, dw}},
                   {"limit", std::vector<int64_t>{ys[0], nC, dh + (ys[2] - 1) * p.strides[0] + 1,
                                                  dw + (ys[3] - 1) * p.strides[1] + 1}},
                   {"stride", std::vector<int64_t>{1, 1, p.strides[0], p.strides[1]}}});
      Entry row =
          c.emit1("add", {c.emit1("mul", {iota(2), i64(p.strides[0])}), i64(dh - p.pads[0])});
      Entry col =
          c.emit1("add", {c.emit1("mul", {iota(3), i64(p.strides[1])}), i64(dw - p.pads[1])});
      Entry inside = c.emit1(
          "and", {c.emit1("and", {c.emit1("compare", {row, i64(0)}, {{"direction", "ge"}}),
                                  c.emit1("compare", {row, i64(h)}, {{"direction", "lt"}})}),
                  c.emit1("and", {c.emit1("compare", {col, i64(0)}, {{"direction", "ge"}}),
                                  c.emit1("compare", {col, i64(w)}, {{"direction", "lt"}})})});
      Entry flat = columnMajor ? c.emit1("add", {row, c.emit1("mul", {col, i64(h)})})
                               : c.emit1("add", {c.emit1("mul", {row, i64(w)}), col});
      flat = c.emit1("add", {plane, flat});
      Entry hit = c.emit1("and", {inside, c.emit1("compare", {cand, y}, {{"direction", "eq"}})});
      idx = c.emit1("where", {hit, flat, idx ? *idx : i64(0)});
    }
  return *idx;
}

ImportFn pool(const char* op, bool isMax) {
  return [op, isMax](Context& c) {
    Entry x = c.in(0);
    TensorType xt = c.typeOf(x);
    size_t nd = spatialRank(c, xt);
    bool indices = isMax && c.numOutputs() > 1;
    bool columnMajor = c.attrInt("storage_order", 0) != 0; // only affects the Indices output
    if (indices && nd == 3) c.fail("the Indices output of 3-D max pooling is not supported yet");
    Window win = readWindow(c, xt.shape, std::nullopt);
    bool includePad = !isMax && c.attrInt("count_include_pad", 0) != 0;
    if (!isMax &&
        std::any_of(win.dilations.begin(), win.dilations.end(), [](int64_t d) { return d != 1; }))
      c.fail("dilated average pooling is not supported");
    if (c.attrInt("ceil_mode", 0)) applyCeilMode(c, xt.shape, win, includePad);
    if (nd == 3) return std::vector<Entry>{pool3d(c, op, isMax, includePad, x, win)};
    if (nd == 1) x = addUnitDim2(c, x);
    Entry y = c.emit1(op, {x}, poolAttrs(planar(win), isMax, includePad));
    std::vector<Entry> out{y};
    if (indices) out.push_back(maxPoolIndices(c, x, y, planar(win), columnMajor));
    if (nd == 1)
      for (Entry& e : out)
        e = dropUnitDim2(c, e);
    return out;
  };
}

ImportFn globalPool(const char* op) {
  return [op](Context& c) {
    Entry x = c.in(0);
    int64_t rank = c.typeOf(x).rank();
    if (rank < 3) c.fail("needs an input of rank >= 3");
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < rank; ++i)
      axes.push_back(i);
    return c.emit(op, {x}, {{"axes", axes}, {"keepdims", true}});
  };
}

} // namespace

void registerConvImports(OpTable& t) {
  t["Conv"] = conv;
  t["ConvTranspose"] = convTranspose;
  t["MaxPool"] = pool("max_pool2d", true);
  t["AveragePool"] = pool("avg_pool2d", false);
  t["GlobalAveragePool"] = globalPool("reduce_mean");
  t["GlobalMaxPool"] = globalPool("reduce_max");
}

} // namespace shardc::onnximport
