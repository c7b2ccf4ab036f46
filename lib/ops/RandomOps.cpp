// Dropout in training mode: dropout(x, ratio, rng, i_0, ..., i_{r-1}) {strides, stream}
// keeps element e of x, scaled by 1/(1-ratio), unless the Philox word of (its global linear
// index, the step, the stream) under the seed falls below ratio 2^32. ratio: f64[] (a
// run-time value in ONNX); rng = [seed, step] (the training step's state); i_d: the
// element's global index along dim d, an iota of shape [1, .., n_d, .., 1]; strides: x's
// row-major strides before partitioning. The index
// operands carry the global position through SPMD lowering (a device's iotas are its slice
// of the whole ones), so every partitioning and replica count draws the same mask.
#include "GradUtil.h"
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Philox.h"

namespace shardc {
namespace {
using namespace ops;

std::string dropoutTypes(const OpSig& sig, std::vector<TensorType>& res) {
  const auto& in = sig.operands;
  const TensorType& x = in[0];
  size_t rank = x.shape.size();
  if (!isFloat(x.dtype)) return "dropout needs a floating-point operand, got " + x.str();
  if (in.size() != rank + 3)
    return "dropout of a rank-" + std::to_string(rank) + " operand takes " +
           std::to_string(rank + 3) + " operands (x, ratio, rng and one index per dim), got " +
           std::to_string(in.size());
  if (in[1] != TensorType{DType::F64, {}})
    return "dropout's ratio must be f64[], got " + in[1].str();
  if (in[2] != TensorType{DType::I64, {2}})
    return "dropout's rng must be i64[2] ([seed, step]), got " + in[2].str();
  for (size_t d = 0; d < rank; ++d) {
    Shape want(rank, 1);
    want[d] = x.shape[d];
    if (in[d + 3] != TensorType{DType::I64, want})
      return "dropout's index of dim " + std::to_string(d) + " must be " +
             TensorType{DType::I64, want}.str() + ", got " + in[d + 3].str();
  }
  const auto& strides = sig.attrs.getInts("strides");
  if (strides.size() != rank)
    return "dropout needs one stride per dim of " + x.str() + ", got " +
           std::to_string(strides.size());
  for (int64_t s : strides)
    if (s < 0) return std::string("dropout strides must not be negative");
  int64_t stream = sig.attrs.getInt("stream");
  if (stream < 0 || stream > 0xffffffff)
    return "dropout stream must be in [0, 2^32), got " + std::to_string(stream);
  res = {x};
  return "";
}

std::vector<Tensor> dropoutKernel(const KernelArgs& a) {
  const Tensor& x = *a.inputs[0];
  double p = philox::checkedDropoutRatio(a.inputs[1]->getDouble(0));
  const Tensor& rng = *a.inputs[2];
  const auto& strides = a.attrs.getInts("strides");
  uint64_t threshold = philox::dropThreshold(p);
  double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  auto seed = static_cast<uint64_t>(rng.getInt(0));
  auto step = static_cast<uint32_t>(rng.getInt(1));
  auto stream = static_cast<uint32_t>(a.attrs.getInt("stream"));
  const Shape& shape = x.shape();
  std::vector<int64_t> localStrides = rowMajorStrides(shape);
  Tensor out(x.type());
  for (int64_t e = 0; e < x.numel(); ++e) {
    uint64_t index = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t i = (e / localStrides[d]) % shape[d];
      index +=
          static_cast<uint64_t>(a.inputs[d + 3]->getInt(i)) * static_cast<uint64_t>(strides[d]);
    }
    bool keep = philox::firstWord(index, step, stream, seed) >= threshold;
    out.setDouble(e, keep ? x.getDouble(e) * scale : 0.0);
  }
  return {std::move(out)};
}

void registerDropout(OpRegistry& r) {
  OpDef d;
  d.name = "dropout";
  d.summary = "training-mode dropout: x scaled by 1/(1-ratio) where the Philox word of "
              "(global index, step, stream) under the seed keeps it, else 0";
  d.minOperands = 3;
  d.maxOperands = -1;
  d.attrs = {{"strides", AttrKind::Ints, std::nullopt}, {"stream", AttrKind::Int, Attr(0)}};
  d.inferTypes = dropoutTypes;
  d.flops = flopsPerResultElement(1);
  d.kernel = dropoutKernel;
  // The same mask applies to the gradient: the same operands draw the same words. Where
  // the mask holds still, y = x / (1 - ratio) on kept elements, so dy/dratio = y / (1 - ratio).
  d.gradient = [](const GradArgs& a) {
    Builder& b = a.b;
    Value* g = gradOrZero(a, 0);
    std::vector<Value*> ops{g};
    for (size_t i = 1; i < a.op.numOperands(); ++i)
      ops.push_back(a.op.operand(i));
    std::vector<Value*> grads(a.op.numOperands(), nullptr);
    grads[0] = b.value("dropout", ops, a.op.attrs());
    Value* gy = b.value("mul", {g, a.op.result(0)});
    if (gy->type().dtype != DType::F64) gy = b.value("cast", {gy}, {{"to", DType::F64}});
    std::vector<int64_t> all;
    for (int64_t i = 0; i < gy->type().rank(); ++i)
      all.push_back(i);
    Value* ratio = a.op.operand(1);
    Value* keep = b.value("sub", {scalar(b, DType::F64, 1), ratio});
    grads[1] = b.value("div", {b.value("reduce_sum", {gy}, {{"axes", all}}), keep});
    return grads;
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>&) {
    const Shape& shape = sig.operands[0].shape;
    ShardingRule rule;
    ShardingRule::Dims x = newDims(rule, shape);
    rule.operands = {x, {}, {{rule.addFactor(2, FactorKind::NeedReplication)}}};
    for (size_t k = 0; k < shape.size(); ++k) {
      ShardingRule::Dims idx(shape.size());
      idx[k] = x[k];
      rule.operands.push_back(idx);
    }
    rule.results = {x};
    return rule;
  };
  r.add(std::move(d));
}

} // namespace

void registerRandomOps(OpRegistry& r) {
  registerDropout(r);
}

} // namespace shardc
