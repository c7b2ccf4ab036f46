// Normalizations along axes: softmax, log_softmax, layer_norm.
#include "GradUtil.h"
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/ir/IR.h"

#include <cmath>

namespace shardc {
namespace {
using namespace ops;

// Splits `shape` around `axis` into outer x n x inner.
void splitAround(const Shape& shape, int64_t axis, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[static_cast<size_t>(i)];
  n = shape[static_cast<size_t>(axis)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i)
    inner *= shape[i];
}

// softmax: dx = y (g - sum(g y)); log_softmax: dx = g - e^y sum(g), along the axis.
std::vector<Value*> softmaxGrad(const GradArgs& a, bool logForm) {
  Builder& b = a.b;
  Value *y = a.op.result(0), *g = gradOrZero(a, 0);
  int64_t axis = *normalizeAxis(a.op.attrs().getInt("axis"), y->type().rank());
  AttrDict sum{{"axes", std::vector<int64_t>{axis}}, {"keepdims", true}};
  auto full = [&](Value* v) { return b.value("broadcast", {v}, {{"shape", y->type().shape}}); };
  if (logForm) {
    Value* s = full(b.value("reduce_sum", {g}, sum));
    return {b.value("sub", {g, b.value("mul", {b.value("exp", {y}), s})})};
  }
  Value* s = full(b.value("reduce_sum", {b.value("mul", {g, y})}, sum));
  return {b.value("mul", {y, b.value("sub", {g, s})})};
}

// Recomputes the statistics: xhat = (x - mean) rstd over dims [axis, rank);
// dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)) with dxhat = g scale;
// dscale = sum(g xhat), dbias = sum(g) over the leading dims.
std::vector<Value*> layerNormGrad(const GradArgs& a) {
  Builder& b = a.b;
  Value *x = a.op.operand(0), *g = gradOrZero(a, 0);
  const TensorType& t = x->type();
  int64_t axis = *normalizeAxis(a.op.attrs().getInt("axis"), t.rank());
  std::vector<int64_t> norm, lead;
  for (int64_t i = 0; i < t.rank(); ++i)
    (i < axis ? lead : norm).push_back(i);
  AttrDict mean{{"axes", norm}, {"keepdims", true}};
  auto full = [&](Value* v) { return b.value("broadcast", {v}, {{"shape", t.shape}}); };
  Value* mu = full(b.value("reduce_mean", {x}, mean));
  Value* xc = b.value("sub", {x, mu});
  Value* var = b.value("reduce_mean", {b.value("mul", {xc, xc})}, mean);
  Value* eps = scalar(b, t.dtype, a.op.attrs().getFloat("epsilon"));
  Value* rstd = full(b.value("rsqrt", {b.value("add", {var, eps})}));
  Value* xhat = b.value("mul", {xc, rstd});
  size_t n = a.op.numOperands();
  Value* dxhat = n > 1 ? b.value("mul", {g, a.op.operand(1)}) : g;
  Value* m1 = full(b.value("reduce_mean", {dxhat}, mean));
  Value* m2 = full(b.value("reduce_mean", {b.value("mul", {dxhat, xhat})}, mean));
  Value* dx = b.value(
      "mul", {rstd, b.value("sub", {b.value("sub", {dxhat, m1}), b.value("mul", {xhat, m2})})});
  std::vector<Value*> out{dx};
  AttrDict overLead{{"axes", lead}, {"keepdims", false}};
  auto sumLead = [&](Value* v) { return lead.empty() ? v : b.value("reduce_sum", {v}, overLead); };
  if (n > 1) out.push_back(sumLead(b.value("mul", {g, xhat})));
  if (n > 2) out.push_back(sumLead(g));
  return out;
}

void registerSoftmax(OpRegistry& r, const char* name, bool logForm) {
  OpDef d;
  d.name = name;
  d.summary = logForm ? "log of softmax along one axis" : "softmax along one axis";
  d.attrs = {{"axis", AttrKind::Int, Attr(-1)}};
  d.inferTypes = [name](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    if (!isFloat(x.dtype))
      return std::string(name) + " needs a floating-point operand, got " + x.str();
    int64_t axis;
    std::string err = axisAttr(sig, "axis", x.rank(), axis);
    if (!err.empty()) return err;
    res = {x};
    return std::string();
  };
  d.flops = flopsPerResultElement(5);
  d.kernel = [logForm](const KernelArgs& a) {
    const Tensor& x = *a.inputs[0];
    int64_t axis = *normalizeAxis(a.attrs.getInt("axis"), x.type().rank());
    int64_t outer, n, inner;
    splitAround(x.shape(), axis, outer, n, inner);
    std::vector<double> v = x.toDoubles();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        auto at = [&](int64_t j) -> double& {
          return v[static_cast<size_t>((o * n + j) * inner + in)];
        };
        double mx = -INFINITY;
        for (int64_t j = 0; j < n; ++j)
          mx = std::max(mx, at(j));
        double sum = 0;
        for (int64_t j = 0; j < n; ++j)
          sum += std::exp(at(j) - mx);
        for (int64_t j = 0; j < n; ++j)
          at(j) = logForm ? at(j) - mx - std::log(sum) : std::exp(at(j) - mx) / sum;
      }
    return std::vector<Tensor>{Tensor::fromDoubles(x.type(), v)};
  };
  d.gradient = [logForm](const GradArgs& a) { return softmaxGrad(a, logForm); };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>&) {
    const TensorType& x = sig.operands[0];
    int64_t axis = *normalizeAxis(sig.attrs.getInt("axis"), x.rank());
    ShardingRule rule;
    ShardingRule::Dims dims;
    for (int64_t d = 0; d < x.rank(); ++d)
      dims.push_back(
          {rule.addFactor(x.shape[static_cast<size_t>(d)],
                          d == axis ? FactorKind::NeedReplication : FactorKind::PassThrough)});
    rule.operands = {dims};
    rule.results = {dims};
    return rule;
  };
  r.add(std::move(d));
}

void registerLayerNorm(OpRegistry& r) {
  OpDef d;
  d.name = "layer_norm";
  d.summary = "normalize over dims [axis, rank), then * scale + bias (scale and bias optional)";
  d.minOperands = 1;
  d.maxOperands = 3;
  d.attrs = {{"axis", AttrKind::Int, Attr(-1)}, {"epsilon", AttrKind::Float, Attr(1e-5)}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    if (!isFloat(x.dtype)) return "layer_norm needs a floating-point operand, got " + x.str();
    int64_t axis;
    std::string err = axisAttr(sig, "axis", x.rank(), axis);
    if (!err.empty()) return err;
    TensorType norm{x.dtype, Shape(x.shape.begin() + axis, x.shape.end())};
    for (size_t i = 1; i < sig.operands.size(); ++i)
      if (sig.operands[i] != norm)
        return std::string(i == 1 ? "scale" : "bias") + " must be " + norm.str() +
               " (the normalized dims of " + x.str() + "), got " + sig.operands[i].str();
    if (sig.attrs.getFloat("epsilon") < 0) return std::string("epsilon must be >= 0");
    res = {x};
    return std::string();
  };
  d.flops = flopsPerResultElement(8);
  d.kernel = [](const KernelArgs& a) {
    const Tensor& x = *a.inputs[0];
    int64_t axis = *normalizeAxis(a.attrs.getInt("axis"), x.type().rank());
    int64_t inner = 1;
    for (size_t i = static_cast<size_t>(axis); i < x.shape().size(); ++i)
      inner *= x.shape()[i];
    int64_t outer = inner ? x.numel() / inner : 0;
    double eps = a.attrs.getFloat("epsilon");
    std::vector<double> v = x.toDoubles();
    std::vector<double> scale, bias;
    if (a.inputs.size() > 1) scale = a.inputs[1]->toDoubles();
    if (a.inputs.size() > 2) bias = a.inputs[2]->toDoubles();
    for (int64_t o = 0; o < outer; ++o) {
      double* row = v.data() + o * inner;
      double mean = 0, var = 0;
      for (int64_t j = 0; j < inner; ++j)
        mean += row[j];
      mean /= static_cast<double>(inner);
      for (int64_t j = 0; j < inner; ++j)
        var += (row[j] - mean) * (row[j] - mean);
      var /= static_cast<double>(inner);
      double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t j = 0; j < inner; ++j) {
        double y = (row[j] - mean) * inv;
        if (!scale.empty()) y *= scale[static_cast<size_t>(j)];
        if (!bias.empty()) y += bias[static_cast<size_t>(j)];
        row[j] = y;
      }
    }
    return std::vector<Tensor>{Tensor::fromDoubles(x.type(), v)};
  };
  d.gradient = layerNormGrad;
  // Leading dims pass through; the normalized dims (shared with scale and bias) need
  // replication, since the statistics span them.
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>&) {
    const TensorType& x = sig.operands[0];
    int64_t axis = *normalizeAxis(sig.attrs.getInt("axis"), x.rank());
    ShardingRule rule;
    ShardingRule::Dims dims, norm;
    for (int64_t d = 0; d < x.rank(); ++d) {
      int f = rule.addFactor(x.shape[static_cast<size_t>(d)],
                             d < axis ? FactorKind::PassThrough : FactorKind::NeedReplication);
      dims.push_back({f});
      if (d >= axis) norm.push_back({f});
    }
    rule.operands = {dims};
    for (size_t i = 1; i < sig.operands.size(); ++i)
      rule.operands.push_back(norm);
    rule.results = {dims};
    return rule;
  };
  r.add(std::move(d));
}

} // namespace

void registerNormOps(OpRegistry& r) {
  registerSoftmax(r, "softmax", false);
  registerSoftmax(r, "log_softmax", true);
  registerLayerNorm(r);
}

} // namespace shardc
