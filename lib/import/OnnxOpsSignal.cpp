// ONNX DFT as matmuls with constant cosine and sine matrices (computed here in double
// precision; the products run in double too). O(n^2) in the signal length, but exact in
// its semantics.
#include "OnnxContext.h"

#include <cmath>
#include <numbers>
#include <optional>

namespace shardc::onnximport {
namespace {

// [n, k] = cos (or sin) of 2 pi k n / n_fft, for n < n_fft and k < bins.
Entry twiddles(Context& c, int64_t nfft, int64_t bins, bool sine) {
  Tensor t(TensorType{DType::F64, {nfft, bins}});
  for (int64_t n = 0; n < nfft; ++n)
    for (int64_t k = 0; k < bins; ++k) {
      // Reduce k * n modulo n_fft first: the angle stays small and accurate.
      double angle =
          2 * std::numbers::pi * static_cast<double>((k * n) % nfft) / static_cast<double>(nfft);
      t.setDouble(n * bins + k, sine ? std::sin(angle) : std::cos(angle));
    }
  return c.constant(std::move(t));
}

// Component `part` (0 real, 1 imaginary) of x [..., 2] as [...].
Entry component(Context& c, Entry x, int64_t part) {
  Shape s = c.typeOf(x).shape;
  std::vector<int64_t> start(s.size(), 0), limit = s, stride(s.size(), 1);
  start.back() = part;
  limit.back() = part + 1;
  Entry v = c.emit1("slice", {x}, {{"start", start}, {"limit", limit}, {"stride", stride}});
  return c.emit1("reshape", {v}, {{"shape", Shape(s.begin(), s.end() - 1)}});
}

// y[k] = sum_n x[n] e^(-+2 pi i k n / N) (divided by N for the inverse) along `axis`;
// complex values are pairs in the last dim.
std::vector<Entry> dft(Context& c) {
  Entry x = c.in(0);
  TensorType t = c.typeOf(x);
  int64_t rank = t.rank();
  if (rank < 3 || (t.shape.back() != 1 && t.shape.back() != 2) || !isFloat(t.dtype))
    c.fail("the input must be floating-point [batch, signal..., 1 or 2], got " + t.str());
  int64_t axis = c.attrInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 1 || axis > rank - 2)
    c.fail("axis must name a signal dim, got " + std::to_string(c.attrInt("axis", 1)));
  bool inverse = c.attrInt("inverse", 0) != 0, onesided = c.attrInt("onesided", 0) != 0,
       complex = t.shape.back() == 2;
  if (onesided && (inverse || complex))
    c.fail("onesided = 1 is only supported for a forward transform of a real signal");
  int64_t nfft = t.shape[static_cast<size_t>(axis)];
  if (c.hasInput(1)) {
    const Tensor& len = c.requireConstant(1, "dft_length");
    if (len.numel() != 1 || !isInteger(len.dtype()) || len.getInt(0) < 1)
      c.fail("dft_length must be a positive integer scalar");
    nfft = len.getInt(0);
  }
  int64_t bins = onesided ? nfft / 2 + 1 : nfft;
  // Move the signal axis last, in double precision.
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank - 1; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  auto prepare = [&](Entry v) {
    v = c.emit1("cast", {c.emit1("transpose", {v}, {{"perm", perm}})}, {{"to", DType::F64}});
    int64_t last = c.typeOf(v).rank() - 1;
    return padAxis(c, v, last, 0, nfft - c.typeOf(v).shape.back()); // truncates or zero-pads
  };
  Entry re = prepare(component(c, x, 0));
  std::optional<Entry> im =
      complex ? std::optional<Entry>(prepare(component(c, x, 1))) : std::nullopt;
  Entry cosT = twiddles(c, nfft, bins, false), sinT = twiddles(c, nfft, bins, true);
  // (re + i im)(cos -+ i sin): minus forward, plus inverse.
  Entry yr = c.emit1("matmul", {re, cosT}), reSin = c.emit1("matmul", {re, sinT});
  Entry yi = inverse ? reSin : c.emit1("neg", {reSin});
  if (im) {
    Entry imSin = c.emit1("matmul", {*im, sinT});
    yr = c.emit1(inverse ? "sub" : "add", {yr, imSin});
    yi = c.emit1("add", {yi, c.emit1("matmul", {*im, cosT})});
  }
  if (inverse) {
    Entry scale = c.scalar(DType::F64, 1.0 / static_cast<double>(nfft));
    yr = c.emit1("mul", {yr, scale});
    yi = c.emit1("mul", {yi, scale});
  }
  // Back to [batch, ..., bins at axis, ...] with (re, im) pairs last.
  std::vector<int64_t> inv(perm.size() + 1);
  for (size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  inv.back() = rank - 1;
  auto finish = [&](Entry v) {
    Shape s = c.typeOf(v).shape;
    s.push_back(1);
    return c.emit1("reshape", {v}, {{"shape", s}});
  };
  Entry y = c.emit1("concat", {finish(yr), finish(yi)}, {{"axis", rank - 1}});
  y = c.emit1("transpose", {y}, {{"perm", inv}});
  return c.emit("cast", {y}, {{"to", t.dtype}});
}

} // namespace

void registerSignalImports(OpTable& t) {
  t["DFT"] = dft;
}

} // namespace shardc::onnximport
