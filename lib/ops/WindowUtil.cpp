#include "WindowUtil.h"

namespace shardc::ops {

// In 128 bits, because pads, dilations and kernel sizes are user attributes that may be near
// the int64 limits.
int64_t windowOut(int64_t in, int64_t padA, int64_t padB, int64_t k, int64_t d, int64_t s) {
  using I = __int128;
  I span = I(in) + padA + padB - I(d) * (I(k) - 1) - 1;
  if (span < 0) return 0;
  I out = span / s + 1;
  return out > INT64_MAX ? INT64_MAX : static_cast<int64_t>(out);
}

std::string readWindow(const AttrDict& attrs, int64_t kh, int64_t kw, Window& w) {
  const auto &s = attrs.getInts("strides"), &p = attrs.getInts("pads"),
             &dl = attrs.getInts("dilations");
  if (s.size() != 2 || dl.size() != 2 || p.size() != 4)
    return "strides and dilations need 2 entries, pads 4 (top, left, bottom, right)";
  if (s[0] <= 0 || s[1] <= 0 || dl[0] <= 0 || dl[1] <= 0)
    return "strides and dilations must be positive";
  for (int64_t v : p)
    if (v < 0) return "pads must be non-negative";
  // Bounded like dims, so that the kernels' tap index arithmetic cannot overflow.
  for (int64_t v : {s[0], s[1], dl[0], dl[1], p[0], p[1], p[2], p[3]})
    if (v > kMaxElements) return "strides, dilations and pads must be at most 2^48";
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

AttrDict copyAttrs(const AttrDict& from, const std::vector<const char*>& names) {
  AttrDict d;
  for (const char* n : names)
    d.set(n, from.get(n));
  return d;
}

std::string conv2dResult(const TensorType& x, const TensorType& w, const AttrDict& attrs,
                         TensorType& out) {
  int64_t g = attrs.getInt("groups");
  if (g <= 0 || x.shape[1] % g || w.shape[0] % g)
    return "groups = " + std::to_string(g) + " must divide the input channels (" +
           std::to_string(x.shape[1]) + ") and the filters (" + std::to_string(w.shape[0]) + ")";
  if (w.shape[1] * g != x.shape[1])
    return "w has " + std::to_string(w.shape[1]) + " input channels per group, x has " +
           std::to_string(x.shape[1]) + " channels in " + std::to_string(g) + " groups";
  Window win;
  std::string err = readWindow(attrs, w.shape[2], w.shape[3], win);
  Shape hw;
  if (err.empty()) err = windowOutput(x, win, hw);
  if (!err.empty()) return err;
  out = TensorType{x.dtype, {x.shape[0], w.shape[0], hw[0], hw[1]}};
  return "";
}

std::string pool2dResult(const TensorType& x, const AttrDict& attrs, TensorType& out) {
  const auto& k = attrs.getInts("kernel");
  if (k.size() != 2) return "kernel needs 2 entries";
  Window win;
  std::string err = readWindow(attrs, k[0], k[1], win);
  Shape hw;
  if (err.empty()) err = windowOutput(x, win, hw);
  if (!err.empty()) return err;
  if (win.pt >= k[0] || win.pb >= k[0] || win.pl >= k[1] || win.pr >= k[1])
    return "pads must be smaller than the kernel";
  out = TensorType{x.dtype, {x.shape[0], x.shape[1], hw[0], hw[1]}};
  return "";
}

std::string shape4Attr(const AttrDict& attrs, const char* name, const char* layout, Shape& out) {
  const auto& s = attrs.getInts(name);
  bool ok = s.size() == 4;
  for (int64_t v : s)
    ok &= v >= 0;
  if (!ok || !checkedNumel(s))
    return std::string(name) + " must be 4 non-negative dims " + layout + ", got " + shapeStr(s);
  out = s;
  return "";
}

std::string checkGradType(const char* forward, const TensorType& dy, const TensorType& want,
                          const std::string& forwardOperands) {
  if (dy == want) return "";
  return "dy must be " + want.str() + ", the " + forward + " result for " + forwardOperands +
         ", got " + dy.str();
}

} // namespace shardc::ops
