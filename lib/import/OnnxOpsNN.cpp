// ONNX convolution, pooling, batch normalization and loss ops.
#include "OnnxContext.h"

#include <optional>

namespace shardc::onnximport {
namespace {

// A 2-D window's attributes. A 1-D window ([N, C, L] inputs) is the 2-D window over
// [N, C, 1, L] with a kernel, stride and dilation of 1 and no padding along the new dim.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads; // pads: top, left, bottom, right
};

// Attribute `name` with one entry per spatial dim, lifted to 2-D for 1-D windows.
std::vector<int64_t> spatialInts(Context& c, const std::string& name, bool is1d,
                                 std::optional<std::vector<int64_t>> dflt) {
  if (dflt && is1d) dflt = std::vector<int64_t>{dflt->back()};
  std::vector<int64_t> v = c.attrInts(name, dflt);
  if (v.size() != (is1d ? 1u : 2u)) c.fail(name + " needs " + (is1d ? "1 entry" : "2 entries"));
  if (is1d) v.insert(v.begin(), 1);
  return v;
}

// Resolves pads from `pads` or auto_pad; x is the (lifted) 4-D input shape.
std::vector<int64_t> windowPads(Context& c, const Shape& x, const Window& w, bool is1d) {
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    std::vector<int64_t> pads = c.attrInts("pads", std::vector<int64_t>(is1d ? 2 : 4, 0));
    if (pads.size() != (is1d ? 2u : 4u)) c.fail(std::string("pads must have ") + (is1d ? "2 entries for a 1-D" : "4 entries for a 2-D") + " window");
    if (is1d) pads = {0, pads[0], 0, pads[1]};
    return pads;
  }
  if (autoPad == "VALID") return {0, 0, 0, 0};
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") c.fail("unknown auto_pad '" + autoPad + "'");
  std::vector<int64_t> pads(4);
  for (size_t i = 0; i < 2; ++i) {
    int64_t in = x[2 + i], out = (in + w.strides[i] - 1) / w.strides[i];
    int64_t total = std::max<int64_t>((out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - in, 0);
    int64_t small = total / 2, big = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : big;
    pads[i + 2] = autoPad == "SAME_UPPER" ? big : small;
  }
  return pads;
}

Window readWindow(Context& c, const Shape& x, bool is1d, std::optional<std::vector<int64_t>> kernel) {
  Window w;
  w.kernel = spatialInts(c, "kernel_shape", is1d, kernel);
  w.strides = spatialInts(c, "strides", is1d, std::vector<int64_t>{1, 1});
  w.dilations = spatialInts(c, "dilations", is1d, std::vector<int64_t>{1, 1});
  w.pads = windowPads(c, x, w, is1d);
  return w;
}

// Inputs of rank 3 (1-D windows) get a unit dim 2; rank 4 stays; others fail.
bool liftTo2d(Context& c, Entry& x) {
  Shape s = c.typeOf(x).shape;
  if (s.size() == 4) return false;
  if (s.size() != 3) c.fail("only 1-D and 2-D (NCL and NCHW) inputs are supported yet, got " + c.typeOf(x).str());
  x = c.emit1("reshape", {x}, {{"shape", std::vector<int64_t>{s[0], s[1], 1, s[2]}}});
  return true;
}

Entry dropUnitDim2(Context& c, Entry y) {
  Shape s = c.typeOf(y).shape;
  return c.emit1("reshape", {y}, {{"shape", std::vector<int64_t>{s[0], s[1], s[3]}}});
}

std::vector<Entry> conv(Context& c) {
  Entry x = c.in(0), w = c.in(1);
  bool is1d = liftTo2d(c, x);
  if (c.typeOf(w).rank() != c.typeOf(c.in(0)).rank()) c.fail("the weight " + c.typeOf(w).str() + " must have the input's rank");
  if (is1d) liftTo2d(c, w);
  TensorType xt = c.typeOf(x), wt = c.typeOf(w);
  Window win = readWindow(c, xt.shape, is1d, std::vector<int64_t>{wt.shape[2], wt.shape[3]});
  if (win.kernel[0] != wt.shape[2] || win.kernel[1] != wt.shape[3]) c.fail("kernel_shape disagrees with the weight's shape");
  std::vector<Entry> ops{x, w};
  if (c.hasInput(2)) ops.push_back(c.in(2));
  Entry y = c.emit1("conv2d", ops, {{"strides", win.strides}, {"dilations", win.dilations}, {"pads", win.pads},
                                   {"groups", c.attrInt("group", 1)}});
  return {is1d ? dropUnitDim2(c, y) : y};
}

ImportFn pool(const char* op, bool isMax) {
  return [op, isMax](Context& c) {
    Entry x = c.in(0);
    bool is1d = liftTo2d(c, x);
    if (c.attrInt("ceil_mode", 0)) c.fail("ceil_mode = 1 is not supported yet");
    c.ignoreAttr("storage_order"); // only affects the Indices output, which is not supported
    Window win = readWindow(c, c.typeOf(x).shape, is1d, std::nullopt);
    AttrDict attrs{{"kernel", win.kernel}, {"strides", win.strides}, {"dilations", win.dilations}, {"pads", win.pads}};
    if (!isMax) {
      if (win.dilations != std::vector<int64_t>{1, 1}) c.fail("dilated average pooling is not supported");
      attrs.set("count_include_pad", c.attrInt("count_include_pad", 0) != 0);
    }
    Entry y = c.emit1(op, {x}, std::move(attrs));
    return std::vector<Entry>{is1d ? dropUnitDim2(c, y) : y};
  };
}

ImportFn globalPool(const char* op) {
  return [op](Context& c) {
    Entry x = c.in(0);
    int64_t rank = c.typeOf(x).rank();
    if (rank < 3) c.fail("needs an input of rank >= 3");
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < rank; ++i) axes.push_back(i);
    return c.emit(op, {x}, {{"axes", axes}, {"keepdims", true}});
  };
}

// Inference batch norm: y = (x - mean) * scale / sqrt(var + eps) + bias, per channel.
std::vector<Entry> batchNorm(Context& c) {
  if (c.attrInt("training_mode", 0) || (c.opset() < 7 && !c.attrInt("is_test", 0)))
    c.fail("training-mode BatchNormalization is not supported yet");
  if (c.opset() < 9 && !c.attrInt("spatial", 1)) c.fail("spatial = 0 is not supported yet");
  if (c.numInputs() != 5) c.fail("needs X, scale, B, input_mean and input_var");
  c.ignoreAttr("momentum"); // only updates running statistics in training mode
  Entry x = c.in(0);
  TensorType xt = c.typeOf(x);
  if (xt.rank() < 2) c.fail("needs an input of rank >= 2");
  DType t = xt.dtype;
  Shape perChannel{xt.shape[1]};
  for (int64_t i = 2; i < xt.rank(); ++i) perChannel.push_back(1);
  auto channel = [&](Entry e) { return c.emit1("reshape", {e}, {{"shape", perChannel}}); };
  Entry var = c.emit1("add", {c.in(4), c.scalar(t, c.attrFloat("epsilon", 1e-5f))});
  Entry a = c.emit1("mul", {c.in(1), c.emit1("rsqrt", {var})});
  Entry centered = c.emit1("sub", {x, channel(c.in(3))});
  return c.emit("add", {c.emit1("mul", {centered, channel(a)}), channel(c.in(2))});
}

// Shared by the two loss ops: picks -logp[n, label[n], ...] and reduces as asked.
std::vector<Entry> nllFromLogProbs(Context& c, Entry logp, Entry labels, bool returnLogProb) {
  TensorType lt = c.typeOf(logp), yt = c.typeOf(labels);
  if (!isInteger(yt.dtype)) c.fail("labels must be integers, got " + yt.str());
  if (lt.rank() < 2 || yt.rank() != lt.rank() - 1 || yt.shape[0] != lt.shape[0])
    c.fail("scores " + lt.str() + " and labels " + yt.str() + " do not match ([N,C,...] and [N,...])");
  for (int64_t i = 1; i < yt.rank(); ++i)
    if (yt.shape[static_cast<size_t>(i)] != lt.shape[static_cast<size_t>(i) + 1])
      c.fail("scores " + lt.str() + " and labels " + yt.str() + " do not match ([N,C,...] and [N,...])");
  std::string reduction = c.attrString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    c.fail("unknown reduction '" + reduction + "'");
  // One-hot of the labels along the class axis selects each sample's log-probability.
  Shape labelShape = yt.shape;
  labelShape.insert(labelShape.begin() + 1, 1);
  Entry y1 = c.emit1("reshape", {labels}, {{"shape", labelShape}});
  Entry classes = c.emit1("iota", {}, {{"shape", lt.shape}, {"axis", int64_t(1)}, {"dtype", yt.dtype}});
  // A select, not a multiply: a log-probability of -inf elsewhere must not give NaN.
  Entry onehot = c.emit1("compare", {classes, y1}, {{"direction", "eq"}});
  Entry zero = c.scalar(lt.dtype, 0);
  Entry picked = c.emit1("reduce_sum", {c.emit1("where", {onehot, logp, zero})}, {{"axes", std::vector<int64_t>{1}}});
  Entry loss = c.emit1("neg", {picked});
  std::vector<int64_t> all;
  for (int64_t i = 0; i < yt.rank(); ++i) all.push_back(i);
  // Each sample's weight: its class's weight (or 1), 0 when its label is ignore_index. The
  // mean divides by the sum of these weights.
  std::optional<Entry> keep, weight;
  if (c.hasAttr("ignore_index")) {
    // An ignored label may still pick a real class (when it lies in [0, C)): mask its loss.
    Entry ignore = c.scalar(yt.dtype, static_cast<double>(c.attrInt("ignore_index")));
    keep = c.emit1("compare", {labels, ignore}, {{"direction", "ne"}});
    // The class-weight gather must stay in range: ignored labels read class 0 instead.
    labels = c.emit1("where", {*keep, labels, c.scalar(yt.dtype, 0)});
  }
  if (c.hasInput(2)) {
    Entry w = c.in(2);
    TensorType wt = c.typeOf(w);
    if (wt.rank() != 1 || wt.shape[0] != lt.shape[1] || wt.dtype != lt.dtype)
      c.fail("class weights " + wt.str() + " must be a vector of one " + std::string(dtypeName(lt.dtype)) + " per class (" + std::to_string(lt.shape[1]) + ")");
    weight = c.emit1("gather", {w, labels}, {{"axis", int64_t(0)}});
  }
  if (weight) loss = c.emit1("mul", {loss, *weight});
  if (keep) {
    weight = c.emit1("where", {*keep, weight ? *weight : c.scalar(lt.dtype, 1), zero});
    loss = c.emit1("where", {*keep, loss, zero});
  }
  if (reduction != "none") {
    loss = c.emit1("reduce_sum", {loss}, {{"axes", all}});
    Entry count = weight ? c.emit1("reduce_sum", {*weight}, {{"axes", all}})
                         : c.scalar(lt.dtype, static_cast<double>(yt.numel()));
    if (reduction == "mean") loss = c.emit1("div", {loss, count});
  }
  std::vector<Entry> out{loss};
  if (returnLogProb) out.push_back(logp);
  return out;
}

std::vector<Entry> softmaxCrossEntropy(Context& c) {
  Entry scores = c.in(0);
  Entry logp = c.emit1("log_softmax", {scores}, {{"axis", int64_t(1)}});
  return nllFromLogProbs(c, logp, c.in(1), true);
}

std::vector<Entry> negativeLogLikelihood(Context& c) { return nllFromLogProbs(c, c.in(0), c.in(1), false); }

} // namespace

void registerNNImports(OpTable& t) {
  t["Conv"] = conv;
  t["MaxPool"] = pool("max_pool2d", true);
  t["AveragePool"] = pool("avg_pool2d", false);
  t["GlobalAveragePool"] = globalPool("reduce_mean");
  t["GlobalMaxPool"] = globalPool("reduce_max");
  t["BatchNormalization"] = batchNorm;
  t["SoftmaxCrossEntropyLoss"] = softmaxCrossEntropy;
  t["NegativeLogLikelihoodLoss"] = negativeLogLikelihood;
}

} // namespace shardc::onnximport
