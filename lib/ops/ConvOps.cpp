// 2-D convolution and pooling over NCHW tensors. pads = [top, left, bottom, right].
#include "OpFamilies.h"
#include "OpUtil.h"

#include <cmath>

namespace shardc {
namespace {
using namespace ops;

// Output size along one dim; <= 0 when the window does not fit. In 128 bits, because pads,
// dilations and kernel sizes are user attributes that may be near the int64 limits.
int64_t windowOut(int64_t in, int64_t padA, int64_t padB, int64_t k, int64_t d, int64_t s) {
  using I = __int128;
  I span = I(in) + padA + padB - I(d) * (I(k) - 1) - 1;
  if (span < 0) return 0;
  I out = span / s + 1;
  return out > INT64_MAX ? INT64_MAX : static_cast<int64_t>(out);
}

struct Window {
  int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  int64_t outH(int64_t h) const { return windowOut(h, pt, pb, kh, dh, sh); }
  int64_t outW(int64_t w) const { return windowOut(w, pl, pr, kw, dw, sw); }
};

std::string readWindow(const OpSig& sig, int64_t kh, int64_t kw, Window& w) {
  const auto &s = sig.attrs.getInts("strides"), &p = sig.attrs.getInts("pads"),
             &dl = sig.attrs.getInts("dilations");
  if (s.size() != 2 || dl.size() != 2 || p.size() != 4)
    return std::string("strides and dilations need 2 entries, pads 4 (top, left, bottom, right)");
  if (s[0] <= 0 || s[1] <= 0 || dl[0] <= 0 || dl[1] <= 0)
    return std::string("strides and dilations must be positive");
  for (int64_t v : p)
    if (v < 0) return std::string("pads must be non-negative");
  w = {kh, kw, s[0], s[1], dl[0], dl[1], p[0], p[1], p[2], p[3]};
  return "";
}

std::string windowOutput(const TensorType& x, const Window& w, Shape& hw) {
  int64_t oh = w.outH(x.shape[2]), ow = w.outW(x.shape[3]);
  if (w.kh <= 0 || w.kw <= 0 || oh <= 0 || ow <= 0)
    return "window " + std::to_string(w.kh) + "x" + std::to_string(w.kw) +
           " does not fit the padded input " + x.str();
  hw = {oh, ow};
  return "";
}

std::vector<AttrSpec> windowAttrs() {
  return {{"strides", AttrKind::Ints, Attr(std::vector<int64_t>{1, 1})},
          {"pads", AttrKind::Ints, Attr(std::vector<int64_t>{0, 0, 0, 0})},
          {"dilations", AttrKind::Ints, Attr(std::vector<int64_t>{1, 1})}};
}

void registerConv2d(OpRegistry& r) {
  OpDef d;
  d.name = "conv2d";
  d.summary = "2-D convolution: x [N,C,H,W], w [F,C/groups,KH,KW], optional bias [F]";
  d.minOperands = 2;
  d.maxOperands = 3;
  d.attrs = windowAttrs();
  d.attrs.push_back({"groups", AttrKind::Int, Attr(1)});
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType &x = sig.operands[0], &w = sig.operands[1];
    if (!isFloat(x.dtype) || x.dtype != w.dtype || x.rank() != 4 || w.rank() != 4)
      return "conv2d needs floating-point x [N,C,H,W] and w [F,C/groups,KH,KW] of one type, got " +
             typeList(sig.operands);
    int64_t g = sig.attrs.getInt("groups");
    if (g <= 0 || x.shape[1] % g || w.shape[0] % g)
      return "groups = " + std::to_string(g) + " must divide the input channels (" +
             std::to_string(x.shape[1]) + ") and the filters (" + std::to_string(w.shape[0]) + ")";
    if (w.shape[1] * g != x.shape[1])
      return "w has " + std::to_string(w.shape[1]) + " input channels per group, x has " +
             std::to_string(x.shape[1]) + " channels in " + std::to_string(g) + " groups";
    if (sig.operands.size() == 3 && sig.operands[2] != TensorType{x.dtype, {w.shape[0]}})
      return "bias must be " + TensorType{x.dtype, {w.shape[0]}}.str() + ", got " +
             sig.operands[2].str();
    Window win;
    std::string err = readWindow(sig, w.shape[2], w.shape[3], win);
    Shape hw;
    if (err.empty()) err = windowOutput(x, win, hw);
    if (!err.empty()) return err;
    res = {TensorType{x.dtype, {x.shape[0], w.shape[0], hw[0], hw[1]}}};
    return std::string();
  };
  d.flops = [](const OpSig& sig, const std::vector<TensorType>& res) {
    const Shape& w = sig.operands[1].shape;
    return 2.0 * numelD(res[0]) * static_cast<double>(w[1] * w[2] * w[3]);
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor &xt = *a.inputs[0], &wt = *a.inputs[1];
    const Shape &xs = xt.shape(), &ws = wt.shape(), &os = a.resultTypes[0].shape;
    Window win;
    readWindow(OpSig{{xt.type(), wt.type()}, a.attrs}, ws[2], ws[3], win);
    int64_t g = a.attrs.getInt("groups"), cpg = ws[1], fpg = ws[0] / g;
    std::vector<double> x = xt.toDoubles(), w = wt.toDoubles(), out(static_cast<size_t>(numel(os)));
    std::vector<double> bias = a.inputs.size() > 2 ? a.inputs[2]->toDoubles() : std::vector<double>();
    size_t o = 0;
    for (int64_t n = 0; n < os[0]; ++n)
      for (int64_t f = 0; f < os[1]; ++f) {
        int64_t c0 = (f / fpg) * cpg;
        for (int64_t oy = 0; oy < os[2]; ++oy)
          for (int64_t ox = 0; ox < os[3]; ++ox, ++o) {
            double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(f)];
            for (int64_t c = 0; c < cpg; ++c)
              for (int64_t ky = 0; ky < ws[2]; ++ky) {
                int64_t iy = oy * win.sh - win.pt + ky * win.dh;
                if (iy < 0 || iy >= xs[2]) continue;
                for (int64_t kx = 0; kx < ws[3]; ++kx) {
                  int64_t ix = ox * win.sw - win.pl + kx * win.dw;
                  if (ix < 0 || ix >= xs[3]) continue;
                  acc += x[static_cast<size_t>(((n * xs[1] + c0 + c) * xs[2] + iy) * xs[3] + ix)] *
                         w[static_cast<size_t>(((f * cpg + c) * ws[2] + ky) * ws[3] + kx)];
                }
              }
            out[o] = acc;
          }
      }
    return std::vector<Tensor>{Tensor::fromDoubles(a.resultTypes[0], out)};
  };
  r.add(std::move(d));
}

void registerPool(OpRegistry& r, const char* name, bool isMax) {
  OpDef d;
  d.name = name;
  d.summary = isMax ? "2-D max pooling over x [N,C,H,W]; padding never wins"
                    : "2-D average pooling over x [N,C,H,W]; count_include_pad chooses whether "
                      "padding counts in the divisor";
  d.attrs = windowAttrs();
  d.attrs.push_back({"kernel", AttrKind::Ints, std::nullopt});
  if (!isMax) d.attrs.push_back({"count_include_pad", AttrKind::Bool, Attr(false)});
  d.inferTypes = [name](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    if (!isFloat(x.dtype) || x.rank() != 4)
      return std::string(name) + " needs a floating-point [N,C,H,W] operand, got " + x.str();
    const auto& k = sig.attrs.getInts("kernel");
    if (k.size() != 2) return std::string("kernel needs 2 entries");
    Window win;
    std::string err = readWindow(sig, k[0], k[1], win);
    Shape hw;
    if (err.empty()) err = windowOutput(x, win, hw);
    if (!err.empty()) return err;
    if (win.pt >= k[0] || win.pb >= k[0] || win.pl >= k[1] || win.pr >= k[1])
      return std::string("pads must be smaller than the kernel");
    res = {TensorType{x.dtype, {x.shape[0], x.shape[1], hw[0], hw[1]}}};
    return std::string();
  };
  d.flops = [](const OpSig& sig, const std::vector<TensorType>& res) {
    const auto& k = sig.attrs.getInts("kernel");
    return numelD(res[0]) * static_cast<double>(k[0] * k[1]);
  };
  d.kernel = [isMax](const KernelArgs& a) {
    const Tensor& xt = *a.inputs[0];
    const Shape &xs = xt.shape(), &os = a.resultTypes[0].shape;
    const auto& k = a.attrs.getInts("kernel");
    Window win;
    readWindow(OpSig{{xt.type()}, a.attrs}, k[0], k[1], win);
    bool includePad = !isMax && a.attrs.getBool("count_include_pad");
    std::vector<double> x = xt.toDoubles(), out(static_cast<size_t>(numel(os)));
    size_t o = 0;
    for (int64_t nc = 0; nc < os[0] * os[1]; ++nc)
      for (int64_t oy = 0; oy < os[2]; ++oy)
        for (int64_t ox = 0; ox < os[3]; ++ox, ++o) {
          double acc = isMax ? -INFINITY : 0.0;
          int64_t count = 0, padded = 0;
          for (int64_t ky = 0; ky < k[0]; ++ky)
            for (int64_t kx = 0; kx < k[1]; ++kx) {
              int64_t iy = oy * win.sh - win.pt + ky * win.dh, ix = ox * win.sw - win.pl + kx * win.dw;
              bool inside = iy >= 0 && iy < xs[2] && ix >= 0 && ix < xs[3];
              // The padded extent for the divisor stops at the padded border.
              if (iy < xs[2] + win.pb && ix < xs[3] + win.pr) ++padded;
              if (!inside) continue;
              double v = x[static_cast<size_t>((nc * xs[2] + iy) * xs[3] + ix)];
              ++count;
              if (isMax) acc = std::isnan(v) || std::isnan(acc) ? NAN : std::max(acc, v);
              else acc += v;
            }
          out[o] = isMax ? acc : acc / static_cast<double>(includePad ? padded : count);
        }
    return std::vector<Tensor>{Tensor::fromDoubles(a.resultTypes[0], out)};
  };
  r.add(std::move(d));
}

} // namespace

void registerConvOps(OpRegistry& r) {
  registerConv2d(r);
  registerPool(r, "max_pool2d", true);
  registerPool(r, "avg_pool2d", false);
}

} // namespace shardc
