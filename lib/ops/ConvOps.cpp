// 2-D convolution over NCHW tensors and its two backward ops. pads = [top, left, bottom, right].
#include "ConvLoops.h"
#include "GradUtil.h"
#include "OpFamilies.h"
#include "OpUtil.h"
#include "WindowUtil.h"

#include "shardc/ir/IR.h"

namespace shardc {
namespace {
using namespace ops;
using Ints = std::vector<int64_t>;

const std::vector<const char*> kConvAttrs = {"strides", "pads", "dilations", "groups"};

std::vector<AttrSpec> convAttrs() {
  auto a = windowAttrs();
  a.push_back({"groups", AttrKind::Int, Attr(1)});
  return a;
}

std::string convOperands(const TensorType& x, const TensorType& w) {
  return "x " + x.str() + " and w " + w.str();
}

// 2 flops per product: output elements (of the forward) times taps per output element.
double convFlops(const Shape& dy, const Shape& w) {
  return 2.0 * static_cast<double>(numel(dy)) * static_cast<double>(w[1] * w[2] * w[3]);
}

enum class ConvRole { Forward, BackwardInput, BackwardFilter };

// The three convolutions over x [N,C,H,W], w [F,C/g,KH,KW], y [N,F,OH,OW] share factors:
// forward (x, w[, b]) -> y sums over C; backward-input (dy, w) -> dx sums over F;
// backward-filter (x, dy) -> dw sums over N. Spatial and kernel dims stay whole (no halo
// exchange); with groups > 1, channels and filters stay whole too.
ShardingRule convRule(const Shape& x, const Shape& w, const Shape& y, int64_t groups, ConvRole role,
                      bool bias) {
  ShardingRule rule;
  auto kindOf = [&](bool summed, bool channel) {
    if (channel && groups != 1) return FactorKind::NeedReplication;
    return summed ? FactorKind::Reduction : FactorKind::PassThrough;
  };
  int n = rule.addFactor(x[0], kindOf(role == ConvRole::BackwardFilter, false));
  // The bias is added once, so with one the channels cannot be summed shard by shard.
  int c = groups == 1 ? rule.addFactor(x[1], bias ? FactorKind::NeedReplication
                                                  : kindOf(role == ConvRole::Forward, true))
                      : -1;
  int f = groups == 1 ? rule.addFactor(w[0], kindOf(role == ConvRole::BackwardInput, true)) : -1;
  auto own = [&](int64_t size) {
    return std::vector<int>{rule.addFactor(size, FactorKind::NeedReplication)};
  };
  auto shared = [&](int id, int64_t size) { return id >= 0 ? std::vector<int>{id} : own(size); };
  ShardingRule::Dims xd{{n}, shared(c, x[1]), own(x[2]), own(x[3])};
  ShardingRule::Dims wd{shared(f, w[0]), groups == 1 ? std::vector<int>{c} : own(w[1]), own(w[2]),
                        own(w[3])};
  ShardingRule::Dims yd{{n}, groups == 1 ? std::vector<int>{f} : own(y[1]), own(y[2]), own(y[3])};
  if (role == ConvRole::Forward) {
    rule.operands = {xd, wd};
    if (bias) rule.operands.push_back({groups == 1 ? std::vector<int>{f} : yd[1]});
    rule.results = {yd};
  } else if (role == ConvRole::BackwardInput) {
    rule.operands = {yd, wd};
    rule.results = {xd};
  } else {
    rule.operands = {xd, yd};
    rule.results = {wd};
  }
  return rule;
}

void registerConv2d(OpRegistry& r) {
  OpDef d;
  d.name = "conv2d";
  d.summary = "2-D convolution: x [N,C,H,W], w [F,C/groups,KH,KW], optional bias [F]";
  d.minOperands = 2;
  d.maxOperands = 3;
  d.attrs = convAttrs();
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType &x = sig.operands[0], &w = sig.operands[1];
    if (!isFloat(x.dtype) || x.dtype != w.dtype || x.rank() != 4 || w.rank() != 4)
      return "conv2d needs floating-point x [N,C,H,W] and w [F,C/groups,KH,KW] of one type, got " +
             typeList(sig.operands);
    TensorType out;
    std::string err = conv2dResult(x, w, sig.attrs, out);
    if (!err.empty()) return err;
    if (sig.operands.size() == 3 && sig.operands[2] != TensorType{x.dtype, {w.shape[0]}})
      return "bias must be " + TensorType{x.dtype, {w.shape[0]}}.str() + ", got " +
             sig.operands[2].str();
    res = {out};
    return std::string();
  };
  d.flops = [](const OpSig& sig, const std::vector<TensorType>& res) {
    return convFlops(res[0].shape, sig.operands[1].shape);
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor &xt = *a.inputs[0], &wt = *a.inputs[1];
    const Shape& os = a.resultTypes[0].shape;
    std::vector<double> x = xt.toDoubles(), w = wt.toDoubles(), bias;
    if (a.inputs.size() > 2) bias = a.inputs[2]->toDoubles();
    std::vector<double> out = convForward(convDims(xt.shape(), wt.shape(), os, a.attrs), x.data(),
                                          w.data(), bias.empty() ? nullptr : bias.data());
    return std::vector<Tensor>{Tensor::fromDoubles(a.resultTypes[0], out)};
  };
  // dx and dw are the two backward ops; the bias gradient sums dy over all but channels.
  d.gradient = [](const GradArgs& a) {
    const Op& op = a.op;
    Value *x = op.operand(0), *w = op.operand(1), *dy = gradOrZero(a, 0);
    AttrDict ai = copyAttrs(op.attrs(), kConvAttrs), af = ai;
    ai.set("input_shape", x->type().shape);
    af.set("filter_shape", w->type().shape);
    std::vector<Value*> g = {a.b.value("conv2d_backward_input", {dy, w}, ai),
                             a.b.value("conv2d_backward_filter", {x, dy}, af)};
    if (op.numOperands() == 3)
      g.push_back(a.b.value("reduce_sum", {dy}, {{"axes", Ints{0, 2, 3}}}));
    return g;
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    return convRule(sig.operands[0].shape, sig.operands[1].shape, res[0].shape,
                    sig.attrs.getInt("groups"), ConvRole::Forward, sig.operands.size() == 3);
  };
  r.add(std::move(d));
}

// conv2d_backward_input(dy, w) = the gradient of sum(dy * conv2d(x, w)) with respect to x:
// linear in dy and in w, so its own gradients are a conv2d and a conv2d_backward_filter.
void registerConv2dBackwardInput(OpRegistry& r) {
  OpDef d;
  d.name = "conv2d_backward_input";
  d.summary = "gradient of conv2d with respect to x [N,C,H,W] = input_shape, from dy "
              "[N,F,OH,OW] and w [F,C/groups,KH,KW]";
  d.minOperands = d.maxOperands = 2;
  d.attrs = convAttrs();
  d.attrs.push_back({"input_shape", AttrKind::Ints, std::nullopt});
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType &dy = sig.operands[0], &w = sig.operands[1];
    if (!isFloat(dy.dtype) || dy.dtype != w.dtype || dy.rank() != 4 || w.rank() != 4)
      return "conv2d_backward_input needs floating-point dy [N,F,OH,OW] and w "
             "[F,C/groups,KH,KW] of one type, got " +
             typeList(sig.operands);
    Shape xs;
    std::string err = shape4Attr(sig.attrs, "input_shape", "[N,C,H,W]", xs);
    TensorType x{dy.dtype, xs}, want;
    if (err.empty()) err = conv2dResult(x, w, sig.attrs, want);
    if (err.empty()) err = checkGradType("conv2d", dy, want, convOperands(x, w));
    if (!err.empty()) return err;
    res = {x};
    return std::string();
  };
  d.flops = [](const OpSig& sig, const std::vector<TensorType>&) {
    return convFlops(sig.operands[0].shape, sig.operands[1].shape);
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor &dyt = *a.inputs[0], &wt = *a.inputs[1];
    const TensorType& rt = a.resultTypes[0];
    std::vector<double> dy = dyt.toDoubles(), w = wt.toDoubles();
    std::vector<double> dx = convBackwardInput(convDims(rt.shape, wt.shape(), dyt.shape(), a.attrs),
                                               dy.data(), w.data());
    return std::vector<Tensor>{Tensor::fromDoubles(rt, dx)};
  };
  d.gradient = [](const GradArgs& a) {
    const Op& op = a.op;
    Value *dy = op.operand(0), *w = op.operand(1), *g = gradOrZero(a, 0);
    AttrDict attrs = copyAttrs(op.attrs(), kConvAttrs), af = attrs;
    af.set("filter_shape", w->type().shape);
    return std::vector<Value*>{a.b.value("conv2d", {g, w}, attrs),
                               a.b.value("conv2d_backward_filter", {g, dy}, af)};
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    return convRule(res[0].shape, sig.operands[1].shape, sig.operands[0].shape,
                    sig.attrs.getInt("groups"), ConvRole::BackwardInput, false);
  };
  r.add(std::move(d));
}

// conv2d_backward_filter(x, dy) = the gradient of sum(dy * conv2d(x, w)) with respect to w.
void registerConv2dBackwardFilter(OpRegistry& r) {
  OpDef d;
  d.name = "conv2d_backward_filter";
  d.summary = "gradient of conv2d with respect to w [F,C/groups,KH,KW] = filter_shape, from x "
              "[N,C,H,W] and dy [N,F,OH,OW]";
  d.minOperands = d.maxOperands = 2;
  d.attrs = convAttrs();
  d.attrs.push_back({"filter_shape", AttrKind::Ints, std::nullopt});
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType &x = sig.operands[0], &dy = sig.operands[1];
    if (!isFloat(x.dtype) || x.dtype != dy.dtype || x.rank() != 4 || dy.rank() != 4)
      return "conv2d_backward_filter needs floating-point x [N,C,H,W] and dy [N,F,OH,OW] of "
             "one type, got " +
             typeList(sig.operands);
    Shape ws;
    std::string err = shape4Attr(sig.attrs, "filter_shape", "[F,C/groups,KH,KW]", ws);
    TensorType w{x.dtype, ws}, want;
    if (err.empty()) err = conv2dResult(x, w, sig.attrs, want);
    if (err.empty()) err = checkGradType("conv2d", dy, want, convOperands(x, w));
    if (!err.empty()) return err;
    res = {w};
    return std::string();
  };
  d.flops = [](const OpSig& sig, const std::vector<TensorType>& res) {
    return convFlops(sig.operands[1].shape, res[0].shape);
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor &xt = *a.inputs[0], &dyt = *a.inputs[1];
    const TensorType& rt = a.resultTypes[0];
    std::vector<double> x = xt.toDoubles(), dy = dyt.toDoubles();
    std::vector<double> dw = convBackwardFilter(
        convDims(xt.shape(), rt.shape, dyt.shape(), a.attrs), x.data(), dy.data());
    return std::vector<Tensor>{Tensor::fromDoubles(rt, dw)};
  };
  d.gradient = [](const GradArgs& a) {
    const Op& op = a.op;
    Value *x = op.operand(0), *dy = op.operand(1), *g = gradOrZero(a, 0);
    AttrDict attrs = copyAttrs(op.attrs(), kConvAttrs), ai = attrs;
    ai.set("input_shape", x->type().shape);
    return std::vector<Value*>{a.b.value("conv2d_backward_input", {dy, g}, ai),
                               a.b.value("conv2d", {x, g}, attrs)};
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    return convRule(sig.operands[0].shape, res[0].shape, sig.operands[1].shape,
                    sig.attrs.getInt("groups"), ConvRole::BackwardFilter, false);
  };
  r.add(std::move(d));
}

} // namespace

void registerConvOps(OpRegistry& r) {
  registerConv2d(r);
  registerConv2dBackwardInput(r);
  registerConv2dBackwardFilter(r);
}

} // namespace shardc
