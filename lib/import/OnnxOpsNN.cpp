// ONNX convolution, pooling, batch normalization and loss ops.
#include "OnnxContext.h"

namespace shardc::onnximport {
namespace {

// Resolves pads (top, left, bottom, right) from `pads` or auto_pad for a 2-D window.
std::vector<int64_t> windowPads(Context& c, const Shape& x, const std::vector<int64_t>& kernel,
                                const std::vector<int64_t>& strides,
                                const std::vector<int64_t>& dilations) {
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    std::vector<int64_t> pads = c.attrInts("pads", std::vector<int64_t>{0, 0, 0, 0});
    if (pads.size() != 4) c.fail("pads must have 4 entries for a 2-D window");
    return pads;
  }
  if (autoPad == "VALID") return {0, 0, 0, 0};
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") c.fail("unknown auto_pad '" + autoPad + "'");
  std::vector<int64_t> pads(4);
  for (size_t i = 0; i < 2; ++i) {
    int64_t in = x[2 + i], out = (in + strides[i] - 1) / strides[i];
    int64_t total = std::max<int64_t>((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in, 0);
    int64_t small = total / 2, big = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : big;
    pads[i + 2] = autoPad == "SAME_UPPER" ? big : small;
  }
  return pads;
}

void require2d(Context& c, const TensorType& x) {
  if (x.rank() != 4) c.fail("only 2-D (NCHW) inputs are supported yet, got " + x.str());
}

std::vector<Entry> conv(Context& c) {
  Entry x = c.in(0), w = c.in(1);
  TensorType xt = c.typeOf(x), wt = c.typeOf(w);
  require2d(c, xt);
  if (wt.rank() != 4) c.fail("the weight must be 4-D, got " + wt.str());
  std::vector<int64_t> kernel = c.attrInts("kernel_shape", std::vector<int64_t>{wt.shape[2], wt.shape[3]});
  std::vector<int64_t> strides = c.attrInts("strides", std::vector<int64_t>{1, 1});
  std::vector<int64_t> dilations = c.attrInts("dilations", std::vector<int64_t>{1, 1});
  if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2)
    c.fail("kernel_shape, strides and dilations need 2 entries");
  if (kernel[0] != wt.shape[2] || kernel[1] != wt.shape[3]) c.fail("kernel_shape disagrees with the weight's shape");
  std::vector<Entry> ops{x, w};
  if (c.hasInput(2)) ops.push_back(c.in(2));
  return c.emit("conv2d", ops, {{"strides", strides}, {"dilations", dilations},
                                {"pads", windowPads(c, xt.shape, kernel, strides, dilations)},
                                {"groups", c.attrInt("group", 1)}});
}

ImportFn pool(const char* op, bool isMax) {
  return [op, isMax](Context& c) {
    Entry x = c.in(0);
    TensorType xt = c.typeOf(x);
    require2d(c, xt);
    if (c.attrInt("ceil_mode", 0)) c.fail("ceil_mode = 1 is not supported yet");
    c.ignoreAttr("storage_order"); // only affects the Indices output, which is not supported
    std::vector<int64_t> kernel = c.attrInts("kernel_shape");
    std::vector<int64_t> strides = c.attrInts("strides", std::vector<int64_t>{1, 1});
    std::vector<int64_t> dilations = c.attrInts("dilations", std::vector<int64_t>{1, 1});
    if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2)
      c.fail("kernel_shape, strides and dilations need 2 entries");
    AttrDict attrs{{"kernel", kernel}, {"strides", strides}, {"dilations", dilations},
                   {"pads", windowPads(c, xt.shape, kernel, strides, dilations)}};
    if (!isMax) {
      if (dilations != std::vector<int64_t>{1, 1}) c.fail("dilated average pooling is not supported");
      attrs.set("count_include_pad", c.attrInt("count_include_pad", 0) != 0);
    }
    return c.emit(op, {x}, std::move(attrs));
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
  if (c.attrInt("training_mode", 0)) c.fail("training-mode BatchNormalization is not supported yet");
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
  if (c.hasInput(2)) c.fail("class weights are not supported yet");
  std::string reduction = c.attrString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    c.fail("unknown reduction '" + reduction + "'");
  // One-hot of the labels along the class axis selects each sample's log-probability.
  Shape labelShape = yt.shape;
  labelShape.insert(labelShape.begin() + 1, 1);
  Entry y1 = c.emit1("reshape", {labels}, {{"shape", labelShape}});
  Entry classes = c.emit1("iota", {}, {{"shape", lt.shape}, {"axis", int64_t(1)}, {"dtype", yt.dtype}});
  Entry onehot = c.emit1("cast", {c.emit1("compare", {classes, y1}, {{"direction", "eq"}})}, {{"to", lt.dtype}});
  Entry picked = c.emit1("reduce_sum", {c.emit1("mul", {logp, onehot})}, {{"axes", std::vector<int64_t>{1}}});
  Entry loss = c.emit1("neg", {picked});
  std::vector<int64_t> all;
  for (int64_t i = 0; i < yt.rank(); ++i) all.push_back(i);
  Entry count = c.scalar(lt.dtype, static_cast<double>(yt.numel()));
  if (c.hasAttr("ignore_index")) {
    // Ignored samples select no class (their one-hot row is zero if the index is outside
    // [0, C)); mask them anyway and leave them out of the mean's count.
    Entry keep = c.emit1("cast", {c.emit1("compare", {labels, c.scalar(yt.dtype, static_cast<double>(c.attrInt("ignore_index")))}, {{"direction", "ne"}})}, {{"to", lt.dtype}});
    loss = c.emit1("mul", {loss, keep});
    count = c.emit1("reduce_sum", {keep}, {{"axes", all}});
  }
  if (reduction != "none") {
    loss = c.emit1("reduce_sum", {loss}, {{"axes", all}});
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
