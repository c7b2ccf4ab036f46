// ONNX elementwise ops that shardc composes from its own: activations (LeakyRelu, Elu,
// Selu, ...), rounding (Ceil, Round), Sign, IsNaN, IsInf, Mod, PRelu and Shrink.
#include "OnnxContext.h"

#include <limits>

namespace shardc::onnximport {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Entry cmp(Context& c, Entry a, Entry b, const char* direction) {
  return c.emit1("compare", {a, b}, {{"direction", direction}});
}
Entry scalarLike(Context& c, const Entry& x, double v) {
  return c.scalar(c.typeOf(x).dtype, v);
}

// alpha * x where x < 0, else x (LeakyRelu; PRelu with a tensor slope).
Entry negativeSlope(Context& c, Entry x, Entry slope) {
  return c.emit1("where", {cmp(c, x, scalarLike(c, x, 0), "lt"), c.emit1("mul", {x, slope}), x});
}

std::vector<Entry> leakyRelu(Context& c) {
  Entry x = c.in(0);
  return {negativeSlope(c, x, scalarLike(c, x, c.attrFloat("alpha", 0.01f)))};
}

// Before opset 7 a slope of one element per channel applies along dim 1; from 7 the slope
// broadcasts numpy-style.
std::vector<Entry> prelu(Context& c) {
  Entry x = c.in(0), slope = c.in(1);
  TensorType xt = c.typeOf(x), st = c.typeOf(slope);
  if (c.opset() < 7 && st.numel() != 1) {
    if (st.rank() != 1 || xt.rank() < 2 || st.shape[0] != xt.shape[1])
      c.fail("slope " + st.str() + " must have one element or one per channel of " + xt.str());
    Shape perChannel(static_cast<size_t>(xt.rank() - 1), 1);
    perChannel[0] = st.shape[0];
    slope = c.emit1("reshape", {slope}, {{"shape", perChannel}});
  }
  return {negativeSlope(c, x, slope)};
}

std::vector<Entry> thresholdedRelu(Context& c) {
  Entry x = c.in(0);
  Entry above = cmp(c, x, scalarLike(c, x, c.attrFloat("alpha", 1.0f)), "gt");
  return c.emit("where", {above, x, scalarLike(c, x, 0)});
}

// max(0, min(1, alpha * x + beta)), shared by HardSigmoid and HardSwish.
Entry hardSigmoidOf(Context& c, Entry x, double alpha, double beta) {
  Entry y = c.emit1("add", {c.emit1("mul", {x, scalarLike(c, x, alpha)}), scalarLike(c, x, beta)});
  return c.emit1("max", {c.emit1("min", {y, scalarLike(c, x, 1)}), scalarLike(c, x, 0)});
}

std::vector<Entry> hardSigmoid(Context& c) {
  return {hardSigmoidOf(c, c.in(0), c.attrFloat("alpha", 0.2f), c.attrFloat("beta", 0.5f))};
}

std::vector<Entry> hardSwish(Context& c) {
  Entry x = c.in(0);
  return c.emit("mul", {x, hardSigmoidOf(c, x, 1.0 / 6, 0.5)}); // the spec's 1/6, exactly
}

// alpha * (e^x - 1)
Entry expm1Times(Context& c, Entry x, double alpha) {
  Entry e = c.emit1("sub", {c.emit1("exp", {x}), scalarLike(c, x, 1)});
  return c.emit1("mul", {e, scalarLike(c, x, alpha)});
}

std::vector<Entry> elu(Context& c) {
  Entry x = c.in(0);
  Entry neg = cmp(c, x, scalarLike(c, x, 0), "lt");
  return c.emit("where", {neg, expm1Times(c, x, c.attrFloat("alpha", 1.0f)), x});
}

std::vector<Entry> selu(Context& c) {
  Entry x = c.in(0);
  float alpha = c.attrFloat("alpha", 1.67326319217681884765625f);
  float gamma = c.attrFloat("gamma", 1.05070102214813232421875f);
  Entry pos = cmp(c, x, scalarLike(c, x, 0), "gt");
  Entry y = c.emit1("where", {pos, x, expm1Times(c, x, alpha)});
  return c.emit("mul", {y, scalarLike(c, x, gamma)});
}

// max(0, x) + min(0, alpha * (e^(x / alpha) - 1))
std::vector<Entry> celu(Context& c) {
  Entry x = c.in(0);
  float alpha = c.attrFloat("alpha", 1.0f);
  Entry neg = expm1Times(c, c.emit1("div", {x, scalarLike(c, x, alpha)}), alpha);
  Entry zero = scalarLike(c, x, 0);
  return c.emit("add", {c.emit1("max", {x, zero}), c.emit1("min", {neg, zero})});
}

// log(1 + e^x) = max(x, 0) + log(1 + e^-|x|), which does not overflow for large x.
std::vector<Entry> softplus(Context& c) {
  Entry x = c.in(0);
  Entry e = c.emit1("exp", {c.emit1("neg", {c.emit1("abs", {x})})});
  Entry tail = c.emit1("log", {c.emit1("add", {e, scalarLike(c, x, 1)})});
  return c.emit("add", {c.emit1("relu", {x}), tail});
}

std::vector<Entry> softsign(Context& c) {
  Entry x = c.in(0);
  return c.emit("div", {x, c.emit1("add", {c.emit1("abs", {x}), scalarLike(c, x, 1)})});
}

// 1, -1, or x itself (0 or NaN).
std::vector<Entry> signOf(Context& c) {
  Entry x = c.in(0), zero = scalarLike(c, x, 0);
  Entry y = c.emit1("where", {cmp(c, x, zero, "lt"), scalarLike(c, x, -1), x});
  return c.emit("where", {cmp(c, x, zero, "gt"), scalarLike(c, x, 1), y});
}

std::vector<Entry> roundHalfEven(Context& c) {
  return {roundHalfToEven(c, c.in(0))};
}

std::vector<Entry> isNaN(Context& c) {
  Entry x = c.in(0);
  return {cmp(c, x, x, "ne")};
}

std::vector<Entry> isInf(Context& c) {
  Entry x = c.in(0);
  if (!isFloat(c.typeOf(x).dtype))
    c.fail("IsInf needs a floating-point input, got " + c.typeOf(x).str());
  bool pos = c.attrInt("detect_positive", 1) != 0, neg = c.attrInt("detect_negative", 1) != 0;
  Entry isPos = cmp(c, x, scalarLike(c, x, kInf), "eq"),
        isNeg = cmp(c, x, scalarLike(c, x, -kInf), "eq");
  if (pos && neg) return c.emit("or", {isPos, isNeg});
  if (pos) return {isPos};
  if (neg) return {isNeg};
  return c.emit("and", {isPos, isNeg}); // all false
}

// Integer Mod: the remainder of truncating division (C's %, fmod = 1), moved to the
// divisor's sign when fmod = 0 (Python's %).
Entry integerMod(Context& c, Entry a, Entry b, bool fmod) {
  Entry r = c.emit1("sub", {a, c.emit1("mul", {c.emit1("div", {a, b}), b})});
  if (fmod) return r;
  Entry zero = scalarLike(c, a, 0);
  Entry signsDiffer = cmp(c, cmp(c, r, zero, "lt"), cmp(c, b, zero, "lt"), "ne");
  Entry adjust = c.emit1("and", {cmp(c, r, zero, "ne"), signsDiffer});
  return c.emit1("where", {adjust, c.emit1("add", {r, b}), r});
}

// Floating-point Mod (fmod) is a - trunc(a / b) * b. In double arithmetic that is exact for
// f16 operands (all multiples of 2^-24 below 2^16: the quotient cannot round across an
// integer and the product and difference fit 53 bits), but not for f32 or f64.
Entry halfFmod(Context& c, Entry a, Entry b) {
  DType t = c.typeOf(a).dtype;
  a = c.emit1("cast", {a}, {{"to", DType::F64}});
  b = c.emit1("cast", {b}, {{"to", DType::F64}});
  Entry q = c.emit1("div", {a, b});
  Entry zero = c.scalar(DType::F64, 0), inf = c.scalar(DType::F64, kInf);
  Entry truncQ =
      c.emit1("where", {cmp(c, q, zero, "lt"), c.emit1("ceil", {q}), c.emit1("floor", {q})});
  Entry r = c.emit1("sub", {a, c.emit1("mul", {truncQ, b})});
  // As C's fmod: a zero result has a's sign, and a finite a modulo an infinite b is a.
  r = c.emit1("where", {cmp(c, r, zero, "eq"), c.emit1("mul", {a, zero}), r});
  Entry keepA = c.emit1(
      "and", {cmp(c, c.emit1("abs", {b}), inf, "eq"), cmp(c, c.emit1("abs", {a}), inf, "lt")});
  r = c.emit1("where", {keepA, a, r});
  return c.emit1("cast", {r}, {{"to", t}});
}

std::vector<Entry> modOf(Context& c) {
  Entry a = c.in(0), b = c.in(1);
  DType t = c.typeOf(a).dtype;
  bool fmod = c.attrInt("fmod", 0) != 0;
  if (c.typeOf(b).dtype != t) c.fail("Mod operands must have the same element type");
  if (isInteger(t)) return {integerMod(c, a, b, fmod)};
  if (!fmod) c.fail("floating-point Mod needs fmod = 1");
  if (t != DType::F16)
    c.fail(
        "floating-point Mod on " + std::string(dtypeName(t)) +
        " is not supported yet (shardc has no exact fmod op; only f16 and integers are supported)");
  return {halfFmod(c, a, b)};
}

// x - bias above lambd, x + bias below -lambd, else 0.
std::vector<Entry> shrink(Context& c) {
  Entry x = c.in(0);
  if (!isFloat(c.typeOf(x).dtype)) c.fail("Shrink on integer inputs is not supported yet");
  float lambd = c.attrFloat("lambd", 0.5f), bias = c.attrFloat("bias", 0.0f);
  Entry zero = scalarLike(c, x, 0);
  Entry low = c.emit1("where", {cmp(c, x, scalarLike(c, x, -lambd), "lt"),
                                c.emit1("add", {x, scalarLike(c, x, bias)}), zero});
  return c.emit("where", {cmp(c, x, scalarLike(c, x, lambd), "gt"),
                          c.emit1("sub", {x, scalarLike(c, x, bias)}), low});
}

} // namespace

// Round half to even: floor(x), plus one when the fraction is above 1/2, or exactly 1/2
// and floor(x) is odd. x - floor(x) is exact except for tiny negative x, where it can only
// round to 1/2 from above, with floor(x) = -1 odd: the result is 0 either way.
Entry roundHalfToEven(Context& c, Entry x) {
  DType t = c.typeOf(x).dtype;
  auto cmp = [&](Entry a, Entry b, const char* d) {
    return c.emit1("compare", {a, b}, {{"direction", d}});
  };
  Entry r = c.emit1("floor", {x});
  Entry frac = c.emit1("sub", {x, r});
  Entry half = c.scalar(t, 0.5), two = c.scalar(t, 2);
  Entry odd = cmp(r, c.emit1("mul", {c.emit1("floor", {c.emit1("div", {r, two})}), two}), "ne");
  Entry up = c.emit1("or", {cmp(frac, half, "gt"), c.emit1("and", {cmp(frac, half, "eq"), odd})});
  return c.emit1("where", {up, c.emit1("add", {r, c.scalar(t, 1)}), r});
}

void registerElementwiseImports(OpTable& t) {
  t["LeakyRelu"] = leakyRelu;
  t["PRelu"] = prelu;
  t["ThresholdedRelu"] = thresholdedRelu;
  t["HardSigmoid"] = hardSigmoid;
  t["HardSwish"] = hardSwish;
  t["Elu"] = elu;
  t["Selu"] = selu;
  t["Celu"] = celu;
  t["Softplus"] = softplus;
  t["Softsign"] = softsign;
  t["Sign"] = signOf;
  t["Round"] = roundHalfEven;
  t["IsNaN"] = isNaN;
  t["IsInf"] = isInf;
  t["Mod"] = modOf;
  t["Shrink"] = shrink;
}

} // namespace shardc::onnximport
