// 2-D max and average pooling over NCHW tensors and their backward ops.
// pads = [top, left, bottom, right]; padding never wins a max.
#include "GradUtil.h"
#include "OpFamilies.h"
#include "OpUtil.h"
#include "WindowUtil.h"

#include "shardc/ir/IR.h"

#include <cmath>

namespace shardc {
namespace {
using namespace ops;

const std::vector<const char*> kMaxAttrs = {"kernel", "strides", "pads", "dilations"};
const std::vector<const char*> kAvgAttrs = {"kernel", "strides", "pads", "dilations",
                                            "count_include_pad"};

std::vector<AttrSpec> poolAttrs(bool isMax) {
  auto a = windowAttrs();
  a.push_back({"kernel", AttrKind::Ints, std::nullopt});
  if (!isMax) a.push_back({"count_include_pad", AttrKind::Bool, Attr(false)});
  return a;
}

// The taps of one window that fall inside the input, as offsets into an H x W plane in
// window order (row by row), and how many taps lie inside the padded extent: the divisor
// under count_include_pad, which stops at the padded border.
struct Taps {
  std::vector<int64_t> at;
  int64_t padded = 0;
};

// Calls f(o, plane, taps) for every output element o (flat row-major over [N,C,OH,OW]) of a
// pooling of x [N,C,H,W]; `plane` is the offset of o's H x W input plane.
template <typename Fn>
void forEachWindow(const Shape& xs, const Shape& os, const AttrDict& attrs, Fn&& f) {
  const auto& k = attrs.getInts("kernel");
  Window win;
  readWindow(attrs, k[0], k[1], win);
  Taps t;
  size_t o = 0;
  for (int64_t nc = 0; nc < os[0] * os[1]; ++nc)
    for (int64_t oy = 0; oy < os[2]; ++oy)
      for (int64_t ox = 0; ox < os[3]; ++ox, ++o) {
        t.at.clear();
        t.padded = 0;
        for (int64_t ky = 0; ky < k[0]; ++ky)
          for (int64_t kx = 0; kx < k[1]; ++kx) {
            int64_t iy = win.row(oy, ky), ix = win.col(ox, kx);
            if (iy < xs[2] + win.pb && ix < xs[3] + win.pr) ++t.padded;
            if (iy >= 0 && iy < xs[2] && ix >= 0 && ix < xs[3]) t.at.push_back(iy * xs[3] + ix);
          }
        f(o, static_cast<size_t>(nc * xs[2] * xs[3]), t);
      }
}

double avgDivisor(const Taps& t, bool includePad) {
  return static_cast<double>(includePad ? t.padded : static_cast<int64_t>(t.at.size()));
}

// One flop (a compare or an add) per tap of every window; `windows` has one element per
// window: the forward's result, the backward ops' dy.
double poolFlops(const OpSig& sig, const TensorType& windows) {
  const auto& k = sig.attrs.getInts("kernel");
  return numelD(windows) * static_cast<double>(k[0] * k[1]);
}

// Pooling and its backward ops: batch and channel pass through every operand and result;
// each tensor's spatial dims stay whole (windows cross any split).
ShardingRule poolRule(const OpSig& sig, const std::vector<TensorType>& res) {
  ShardingRule rule;
  const Shape& ref = res[0].shape;
  int n = rule.addFactor(ref[0]), c = rule.addFactor(ref[1]);
  auto dims = [&](const TensorType& t) {
    return ShardingRule::Dims{{n},
                              {c},
                              {rule.addFactor(t.shape[2], FactorKind::NeedReplication)},
                              {rule.addFactor(t.shape[3], FactorKind::NeedReplication)}};
  };
  for (const TensorType& t : sig.operands)
    rule.operands.push_back(dims(t));
  rule.results = {dims(res[0])};
  return rule;
}

void registerPool(OpRegistry& r, const char* name, bool isMax) {
  OpDef d;
  d.name = name;
  d.summary = isMax ? "2-D max pooling over x [N,C,H,W]; padding never wins"
                    : "2-D average pooling over x [N,C,H,W]; count_include_pad chooses whether "
                      "padding counts in the divisor";
  d.attrs = poolAttrs(isMax);
  d.inferTypes = [name](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    if (!isFloat(x.dtype) || x.rank() != 4)
      return std::string(name) + " needs a floating-point [N,C,H,W] operand, got " + x.str();
    TensorType out;
    std::string err = pool2dResult(x, sig.attrs, out);
    if (!err.empty()) return err;
    res = {out};
    return std::string();
  };
  d.flops = [](const OpSig& sig, const std::vector<TensorType>& res) {
    return poolFlops(sig, res[0]);
  };
  d.kernel = [isMax](const KernelArgs& a) {
    const Tensor& xt = *a.inputs[0];
    bool includePad = !isMax && a.attrs.getBool("count_include_pad");
    std::vector<double> x = xt.toDoubles(), out(static_cast<size_t>(a.resultTypes[0].numel()));
    forEachWindow(xt.shape(), a.resultTypes[0].shape, a.attrs,
                  [&](size_t o, size_t plane, const Taps& t) {
                    double acc = isMax ? -INFINITY : 0.0;
                    for (int64_t p : t.at) {
                      double v = x[plane + static_cast<size_t>(p)];
                      if (isMax)
                        acc = std::isnan(v) || std::isnan(acc) ? NAN : std::max(acc, v);
                      else
                        acc += v;
                    }
                    out[o] = isMax ? acc : acc / avgDivisor(t, includePad);
                  });
    return std::vector<Tensor>{Tensor::fromDoubles(a.resultTypes[0], out)};
  };
  if (isMax) {
    d.gradient = [](const GradArgs& a) {
      return std::vector<Value*>{a.b.value("max_pool2d_backward",
                                           {a.op.operand(0), gradOrZero(a, 0)},
                                           copyAttrs(a.op.attrs(), kMaxAttrs))};
    };
  } else {
    d.gradient = [](const GradArgs& a) {
      AttrDict attrs = copyAttrs(a.op.attrs(), kAvgAttrs);
      attrs.set("input_shape", a.op.operand(0)->type().shape);
      return std::vector<Value*>{a.b.value("avg_pool2d_backward", {gradOrZero(a, 0)}, attrs)};
    };
  }
  d.shardingRule = poolRule;
  r.add(std::move(d));
}

// Each window's gradient goes to the tap that gave the forward's result: the first NaN if
// the window has one (the forward's result is then NaN), else the first maximum, as PyTorch
// does for ties. A window entirely in the padding passes nothing on.
void registerMaxPoolBackward(OpRegistry& r) {
  OpDef d;
  d.name = "max_pool2d_backward";
  d.summary = "gradient of max_pool2d with respect to x [N,C,H,W], from x and dy "
              "[N,C,OH,OW]: each window's dy goes to its first maximum";
  d.minOperands = d.maxOperands = 2;
  d.attrs = poolAttrs(true);
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType &x = sig.operands[0], &dy = sig.operands[1];
    if (!isFloat(x.dtype) || x.dtype != dy.dtype || x.rank() != 4 || dy.rank() != 4)
      return "max_pool2d_backward needs floating-point x [N,C,H,W] and dy [N,C,OH,OW] of one "
             "type, got " +
             typeList(sig.operands);
    TensorType want;
    std::string err = pool2dResult(x, sig.attrs, want);
    if (err.empty()) err = checkGradType("max_pool2d", dy, want, "x " + x.str());
    if (!err.empty()) return err;
    res = {x};
    return std::string();
  };
  d.flops = [](const OpSig& sig, const std::vector<TensorType>&) {
    return poolFlops(sig, sig.operands[1]);
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor &xt = *a.inputs[0], &dyt = *a.inputs[1];
    std::vector<double> x = xt.toDoubles(), dy = dyt.toDoubles(), dx(x.size());
    forEachWindow(xt.shape(), dyt.shape(), a.attrs, [&](size_t o, size_t plane, const Taps& t) {
      size_t best = SIZE_MAX;
      for (int64_t p : t.at) {
        size_t i = plane + static_cast<size_t>(p);
        double v = x[i];
        if (best == SIZE_MAX || (std::isnan(v) && !std::isnan(x[best])) || v > x[best]) best = i;
      }
      if (best != SIZE_MAX) dx[best] += dy[o];
    });
    return std::vector<Tensor>{Tensor::fromDoubles(a.resultTypes[0], dx)};
  };
  // No gradient rule (no second-order training through max pooling): in x it is piecewise
  // constant, in dy it would be a gather of the incoming gradient at each window's maximum.
  d.shardingRule = poolRule;
  r.add(std::move(d));
}

// avg_pool2d is linear in x, with this op its transpose; so this op's own gradient is
// avg_pool2d again.
void registerAvgPoolBackward(OpRegistry& r) {
  OpDef d;
  d.name = "avg_pool2d_backward";
  d.summary = "gradient of avg_pool2d with respect to x [N,C,H,W] = input_shape, from dy "
              "[N,C,OH,OW]: each window's dy / divisor goes to every tap inside the input";
  d.attrs = poolAttrs(false);
  d.attrs.push_back({"input_shape", AttrKind::Ints, std::nullopt});
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& dy = sig.operands[0];
    if (!isFloat(dy.dtype) || dy.rank() != 4)
      return "avg_pool2d_backward needs a floating-point dy [N,C,OH,OW], got " + dy.str();
    Shape xs;
    std::string err = shape4Attr(sig.attrs, "input_shape", "[N,C,H,W]", xs);
    TensorType x{dy.dtype, xs}, want;
    if (err.empty()) err = pool2dResult(x, sig.attrs, want);
    if (err.empty()) err = checkGradType("avg_pool2d", dy, want, "x " + x.str());
    if (!err.empty()) return err;
    res = {x};
    return std::string();
  };
  d.flops = [](const OpSig& sig, const std::vector<TensorType>&) {
    return poolFlops(sig, sig.operands[0]);
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor& dyt = *a.inputs[0];
    const TensorType& rt = a.resultTypes[0];
    bool includePad = a.attrs.getBool("count_include_pad");
    std::vector<double> dy = dyt.toDoubles(), dx(static_cast<size_t>(rt.numel()));
    forEachWindow(rt.shape, dyt.shape(), a.attrs, [&](size_t o, size_t plane, const Taps& t) {
      double share = dy[o] / avgDivisor(t, includePad);
      for (int64_t p : t.at)
        dx[plane + static_cast<size_t>(p)] += share;
    });
    return std::vector<Tensor>{Tensor::fromDoubles(rt, dx)};
  };
  d.gradient = [](const GradArgs& a) {
    return std::vector<Value*>{
        a.b.value("avg_pool2d", {gradOrZero(a, 0)}, copyAttrs(a.op.attrs(), kAvgAttrs))};
  };
  d.shardingRule = poolRule;
  r.add(std::move(d));
}

} // namespace

void registerPoolOps(OpRegistry& r) {
  registerPool(r, "max_pool2d", true);
  registerPool(r, "avg_pool2d", false);
  registerMaxPoolBackward(r);
  registerAvgPoolBackward(r);
}

} // namespace shardc
