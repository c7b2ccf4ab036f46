// ONNX normalization ops: BatchNormalization (inference), LayerNormalization,
// InstanceNormalization, MeanVarianceNormalization and LRN.
#include "OnnxContext.h"

#include <optional>

namespace shardc::onnximport {
namespace {

// A per-channel vector [C] shaped [C, 1, ...] to broadcast against [N, C, ...] of `rank`.
Entry perChannel(Context& c, Entry v, int64_t rank) {
  Shape s{c.typeOf(v).numel()};
  s.resize(static_cast<size_t>(rank - 1), 1);
  return c.emit1("reshape", {v}, {{"shape", s}});
}

// Training-mode batch norm: normalizes with the batch's statistics over all dims but the
// channels (population variance) and returns the running mean and variance blended with
// `momentum` as the ONNX spec computes them (opset 9-13 also the batch's mean and variance).
// Running statistics held in initializers are state the training step carries: those are
// updated as PyTorch updates its buffers, with the unbiased variance.
std::vector<Entry> batchNormTraining(Context& c, Entry x) {
  if (c.opset() < 9) c.fail("training-mode BatchNormalization before opset 9 is not supported yet");
  TensorType xt = c.typeOf(x);
  DType t = xt.dtype;
  std::vector<int64_t> axes{0};
  for (int64_t i = 2; i < xt.rank(); ++i)
    axes.push_back(i);
  int64_t perChannelCount = xt.numel() / std::max<int64_t>(xt.shape[1], 1);
  if (perChannelCount < 2)
    c.fail("training needs more than one value per channel, got input " + xt.str());
  AttrDict r{{"axes", axes}, {"keepdims", false}};
  Entry mean = c.emit1("reduce_mean", {x}, r);
  Entry centered = c.emit1("sub", {x, perChannel(c, mean, xt.rank())});
  Entry var = c.emit1("reduce_mean", {c.emit1("mul", {centered, centered})}, r);
  Entry inv =
      c.emit1("rsqrt", {c.emit1("add", {var, c.scalar(t, c.attrDecimal("epsilon", 1e-5f))})});
  Entry y = c.emit1("mul", {centered, perChannel(c, c.emit1("mul", {c.in(1), inv}), xt.rank())});
  y = c.emit1("add", {y, perChannel(c, c.in(2), xt.rank())});
  double momentum = c.attrDecimal("momentum", 0.9f);
  auto blend = [&](Entry running, Entry batch) {
    return c.emit1("add", {c.emit1("mul", {running, c.scalar(t, momentum)}),
                           c.emit1("mul", {batch, c.scalar(t, 1.0f - momentum)})});
  };
  Entry runningMean = c.in(3), runningVar = c.in(4);
  auto isState = [](const Entry& e) {
    return e.value && e.value->isArgument() && e.value->argKind() == ArgKind::OptState;
  };
  Entry newMean = blend(runningMean, mean);
  if (isState(runningMean)) c.carry(runningMean.value, newMean);
  if (isState(runningVar)) {
    double bessel = static_cast<double>(perChannelCount) / static_cast<double>(perChannelCount - 1);
    c.carry(runningVar.value, blend(runningVar, c.emit1("mul", {var, c.scalar(t, bessel)})));
  }
  std::vector<Entry> out{y, newMean, blend(runningVar, var)};
  if (c.opset() < 14) out.insert(out.end(), {mean, var});
  return out;
}

} // namespace

bool batchNormTrains(const onnx::NodeProto& node, int64_t opset) {
  if (opset >= 14) {
    for (const auto& a : node.attribute())
      if (a.name() == "training_mode") return a.i() != 0;
    return false;
  }
  // Before opset 14 a node in training mode is one that asks for more than Y.
  return node.output_size() > 1 && !node.output(1).empty();
}

namespace {

// Whether a training-mode node's updated statistics are among the graph's outputs: then the
// model itself asks for a training-mode step (ONNX's semantics), whatever the compile is for.
bool returnsStatistics(const Context& c) {
  for (size_t i = 1; i < c.numOutputs(); ++i)
    if (c.isGraphOutput(i)) return true;
  return false;
}

// Inference batch norm: y = (x - mean) * scale / sqrt(var + eps) + bias, per channel. A
// training-mode node in an inference import is this too (PyTorch's eval mode over a
// training export), with its running statistics unchanged, unless the graph returns them.
std::vector<Entry> batchNorm(Context& c) {
  if (c.numInputs() != 5) c.fail("needs X, scale, B, input_mean and input_var");
  Entry x = c.in(0);
  TensorType xt = c.typeOf(x);
  if (xt.rank() < 2) c.fail("needs an input of rank >= 2");
  c.ignoreAttr("training_mode"); // read by batchNormTrains
  if (batchNormTrains(c.node(), c.opset()) && (c.training() || returnsStatistics(c)))
    return batchNormTraining(c, x);
  if (c.opset() < 7 && !c.attrInt("is_test", 0))
    c.fail("training-mode BatchNormalization is not supported yet");
  if (c.opset() < 9 && !c.attrInt("spatial", 1)) c.fail("spatial = 0 is not supported yet");
  c.ignoreAttr("momentum"); // only updates running statistics in training mode
  DType t = xt.dtype;
  auto channel = [&](Entry e) { return perChannel(c, e, xt.rank()); };
  Entry var = c.emit1("add", {c.in(4), c.scalar(t, c.attrDecimal("epsilon", 1e-5f))});
  Entry a = c.emit1("mul", {c.in(1), c.emit1("rsqrt", {var})});
  Entry centered = c.emit1("sub", {x, channel(c.in(3))});
  std::vector<Entry> out =
      c.emit("add", {c.emit1("mul", {centered, channel(a)}), channel(c.in(2))});
  for (size_t i = 1; i < c.numOutputs(); ++i)
    out.push_back(c.in(i % 2 ? 3 : 4));
  return out;
}

// LayerNormalization's optional outputs Mean and InvStdDev, over dims [axis, rank) with
// kept dims, computed in stash_type as ONNX's function body does.
std::vector<Entry> layerNormStatistics(Context& c, Entry x, int64_t axis, float epsilon) {
  TensorType xt = c.typeOf(x);
  DType stash = dtypeFromOnnx(static_cast<int32_t>(c.attrInt("stash_type", 1)),
                              "LayerNormalization stash_type");
  if (!isFloat(stash)) c.fail("stash_type must be a floating-point type");
  if (stash != xt.dtype) x = c.emit1("cast", {x}, {{"to", stash}});
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < xt.rank(); ++i)
    axes.push_back(i);
  AttrDict reduce{{"axes", axes}, {"keepdims", true}};
  Entry mean = c.emit1("reduce_mean", {x}, reduce);
  Entry d = c.emit1("sub", {x, mean});
  Entry var = c.emit1("reduce_mean", {c.emit1("mul", {d, d})}, reduce);
  Entry inv = c.emit1("rsqrt", {c.emit1("add", {var, c.scalar(stash, epsilon)})});
  return {mean, inv};
}

std::vector<Entry> layerNormalization(Context& c) {
  if (c.numInputs() < 2) c.fail("LayerNormalization needs X and Scale");
  Entry x = c.in(0), scale = c.in(1);
  TensorType xt = c.typeOf(x);
  int64_t axis = c.axis(c.attrInt("axis", -1), xt.rank());
  TensorType norm{xt.dtype, Shape(xt.shape.begin() + axis, xt.shape.end())};
  float epsilon = c.attrFloat("epsilon", 1e-5f);
  AttrDict attrs{{"axis", axis}, {"epsilon", static_cast<double>(epsilon)}};
  bool exact = c.typeOf(scale) == norm && (!c.hasInput(2) || c.typeOf(c.in(2)) == norm);
  std::vector<Entry> out;
  if (exact) {
    std::vector<Entry> ops{x, scale};
    if (c.hasInput(2)) ops.push_back(c.in(2));
    out.push_back(c.emit1("layer_norm", ops, attrs));
  } else {
    // Scale and bias that only broadcast to the normalized shape.
    Entry y = c.emit1("layer_norm", {x}, attrs);
    y = c.emit1("mul", {y, scale});
    if (c.hasInput(2)) y = c.emit1("add", {y, c.in(2)});
    out.push_back(y);
  }
  if (c.numOutputs() > 1) {
    std::vector<Entry> stats = layerNormStatistics(c, x, axis, epsilon);
    out.insert(out.end(), stats.begin(), stats.end());
  } else {
    c.ignoreAttr("stash_type"); // layer_norm normalizes in double precision anyway
  }
  return out;
}

// Normalizes each (instance, channel) over the spatial dims, then scales and shifts per
// channel: layer_norm from dim 2 on.
std::vector<Entry> instanceNorm(Context& c) {
  Entry x = c.in(0);
  int64_t rank = c.typeOf(x).rank();
  if (rank < 3) c.fail("needs an input of rank >= 3, got " + c.typeOf(x).str());
  AttrDict attrs{{"axis", int64_t(2)},
                 {"epsilon", static_cast<double>(c.attrFloat("epsilon", 1e-5f))}};
  Entry y = c.emit1("layer_norm", {x}, attrs);
  y = c.emit1("mul", {y, perChannel(c, c.in(1), rank)});
  return c.emit("add", {y, perChannel(c, c.in(2), rank)});
}

// ONNX's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over `axes`.
std::vector<Entry> meanVarianceNorm(Context& c) {
  Entry x = c.in(0);
  DType t = c.typeOf(x).dtype;
  AttrDict r{{"axes", c.attrInts("axes", std::vector<int64_t>{0, 2, 3})}, {"keepdims", true}};
  Entry mean = c.emit1("reduce_mean", {x}, r);
  Entry meanOfSquares = c.emit1("reduce_mean", {c.emit1("mul", {x, x})}, r);
  Entry var = c.emit1("sub", {meanOfSquares, c.emit1("mul", {mean, mean})});
  Entry sd = c.emit1("add", {c.emit1("sqrt", {var}), c.scalar(t, 1e-9)});
  return c.emit("div", {c.emit1("sub", {x, mean}), sd});
}

// Local response normalization across channels: x / (bias + alpha / size * s)^beta, where
// s sums x^2 over channels [c - floor((size-1)/2), c + ceil((size-1)/2)] (zero-padded).
std::vector<Entry> lrn(Context& c) {
  Entry x = c.in(0);
  TensorType t = c.typeOf(x);
  if (t.rank() < 3) c.fail("needs an input of rank >= 3, got " + t.str());
  int64_t size = c.attrInt("size");
  if (size < 1) c.fail("size must be positive");
  float alpha = c.attrFloat("alpha", 1e-4f), beta = c.attrFloat("beta", 0.75f),
        bias = c.attrFloat("bias", 1.0f);
  int64_t before = (size - 1) / 2, after = size - 1 - before, channels = t.shape[1];
  Entry padded = padAxis(c, c.emit1("mul", {x, x}), 1, before, after);
  std::vector<int64_t> start(t.shape.size(), 0), limit = t.shape, stride(t.shape.size(), 1);
  std::optional<Entry> sum;
  for (int64_t k = 0; k < size; ++k) {
    start[1] = k;
    limit[1] = k + channels;
    Entry shifted =
        c.emit1("slice", {padded}, {{"start", start}, {"limit", limit}, {"stride", stride}});
    sum = sum ? c.emit1("add", {*sum, shifted}) : shifted;
  }
  Entry base =
      c.emit1("add", {c.emit1("mul", {*sum, c.scalar(t.dtype, alpha / static_cast<float>(size))}),
                      c.scalar(t.dtype, bias)});
  return c.emit("div", {x, c.emit1("pow", {base, c.scalar(t.dtype, beta)})});
}

} // namespace

void registerNormImports(OpTable& t) {
  t["BatchNormalization"] = batchNorm;
  t["LayerNormalization"] = layerNormalization;
  t["InstanceNormalization"] = instanceNorm;
  t["MeanVarianceNormalization"] = meanVarianceNorm;
  t["LRN"] = lrn;
}

} // namespace shardc::onnximport
