// Elementwise ops: unary math, binary arithmetic with numpy broadcasting, compare, where,
// cast. Reference kernels compute in double (floats) or int64 (integers, bools) and round
// the result to the result's dtype.
#include "GradUtil.h"
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/ir/IR.h"

#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"

#include <cmath>
#include <numbers>

namespace shardc {
namespace {
using namespace ops;

enum class Domain { Float, Numeric, Bool }; // which dtypes an op accepts

bool accepts(Domain d, DType t) {
  switch (d) {
  case Domain::Float:
    return isFloat(t);
  case Domain::Numeric:
    return isFloat(t) || isInteger(t);
  case Domain::Bool:
    return isBool(t);
  }
  return false;
}

std::string domainName(Domain d) {
  switch (d) {
  case Domain::Float:
    return "a floating-point";
  case Domain::Numeric:
    return "a numeric (float or integer)";
  case Domain::Bool:
    return "an i1";
  }
  return "";
}

// ---- unary ----

struct UnaryFn {
  const char* name;
  const char* summary;
  Domain domain;
  double flops;
  double (*f)(double);
  int64_t (*i)(int64_t); // integer form, for ops that accept integers
};

double gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
}
double geluTanh(double x) {
  constexpr double c = 0.7978845608028654; // sqrt(2 / pi)
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}
// d/dx of the two forms: Phi(x) + x phi(x), and with u = c (x + 0.044715 x^3),
// (1 + tanh u) / 2 + x / 2 (1 - tanh^2 u) c (1 + 3 * 0.044715 x^2), whose second term is 0
// (its limit) where tanh saturates.
double geluSlope(double x) {
  return 0.5 * (1.0 + std::erf(x / std::numbers::sqrt2)) +
         x * std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
}
double geluTanhSlope(double x) {
  constexpr double c = 0.7978845608028654;
  double t = std::tanh(c * (x + 0.044715 * x * x * x)), w = 1.0 - t * t;
  return 0.5 * (1.0 + t) + (w == 0 ? 0.0 : 0.5 * x * w * c * (1.0 + 3 * 0.044715 * x * x));
}

const UnaryFn kUnary[] = {
    {"neg", "negation", Domain::Numeric, 1, [](double x) { return -x; },
     [](int64_t x) { return static_cast<int64_t>(0ull - static_cast<uint64_t>(x)); }},
    {"abs", "absolute value", Domain::Numeric, 1, [](double x) { return std::fabs(x); },
     [](int64_t x) { return x < 0 ? static_cast<int64_t>(0ull - static_cast<uint64_t>(x)) : x; }},
    {"relu", "max(x, 0)", Domain::Numeric, 1,
     [](double x) { return x > 0 || std::isnan(x) ? x : 0.0; }, // NaN stays NaN, as in PyTorch
     [](int64_t x) { return x > 0 ? x : int64_t(0); }},
    {"exp", "e^x", Domain::Float, 1, [](double x) { return std::exp(x); }, nullptr},
    {"log", "natural logarithm", Domain::Float, 1, [](double x) { return std::log(x); }, nullptr},
    {"sqrt", "square root", Domain::Float, 1, [](double x) { return std::sqrt(x); }, nullptr},
    {"rsqrt", "1 / sqrt(x)", Domain::Float, 2, [](double x) { return 1.0 / std::sqrt(x); },
     nullptr},
    {"reciprocal", "1 / x", Domain::Float, 1, [](double x) { return 1.0 / x; }, nullptr},
    {"tanh", "hyperbolic tangent", Domain::Float, 1, [](double x) { return std::tanh(x); },
     nullptr},
    {"erf", "Gauss error function", Domain::Float, 1, [](double x) { return std::erf(x); },
     nullptr},
    {"sigmoid", "1 / (1 + e^-x)", Domain::Float, 3,
     [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, nullptr},
    {"floor", "round toward -inf", Domain::Float, 1, [](double x) { return std::floor(x); },
     nullptr},
    {"ceil", "round toward +inf", Domain::Float, 1, [](double x) { return std::ceil(x); }, nullptr},
    {"not", "logical not of an i1", Domain::Bool, 1, nullptr,
     [](int64_t x) { return int64_t(x == 0); }},
};

std::string sameTypeRule(const char* name, Domain domain, const OpSig& sig,
                         std::vector<TensorType>& results) {
  const TensorType& x = sig.operands[0];
  if (!accepts(domain, x.dtype))
    return std::string(name) + " needs " + domainName(domain) + " operand, got " + x.str();
  results = {x};
  return "";
}

Tensor applyUnary(const Tensor& x, double (*f)(double), int64_t (*fi)(int64_t)) {
  if (isFloat(x.dtype())) {
    std::vector<double> v = x.toDoubles();
    for (double& e : v)
      e = f(e);
    return Tensor::fromDoubles(x.type(), v);
  }
  std::vector<int64_t> v = x.toInts();
  for (int64_t& e : v)
    e = fi(e);
  return Tensor::fromInts(x.type(), v);
}

// ---- gradient rules ----

Value* op1(Builder& b, const char* name, Value* x) {
  return b.value(name, {x});
}
Value* op2(Builder& b, const char* name, Value* x, Value* y) {
  return b.value(name, {x, y});
}
Value* cmp(Builder& b, Value* x, Value* y, const char* dir) {
  return b.value("compare", {x, y}, {{"direction", dir}});
}
Value* select(Builder& b, Value* c, Value* x, Value* y) {
  return b.value("where", {c, x, y});
}

// d/dx of y = f(x), given x, y and the result gradient g; nullptr: no gradient flows.
using UnaryGrad = Value* (*)(Builder&, Value* x, Value* y, Value* g);

UnaryGrad unaryGrad(std::string_view name) {
  if (name == opname::kNeg)
    return [](Builder& b, Value*, Value*, Value* g) { return op1(b, "neg", g); };
  if (name == opname::kAbs)
    return [](Builder& b, Value* x, Value*, Value* g) {
      Value* zero = scalar(b, x->type().dtype, 0);
      Value* pos = select(b, cmp(b, x, zero, "gt"), g, zeros(b, g->type()));
      return select(b, cmp(b, x, zero, "lt"), op1(b, "neg", g), pos);
    };
  if (name == opname::kRelu)
    return [](Builder& b, Value* x, Value*, Value* g) {
      return select(b, cmp(b, x, scalar(b, x->type().dtype, 0), "gt"), g, zeros(b, g->type()));
    };
  if (name == opname::kExp)
    return [](Builder& b, Value*, Value* y, Value* g) { return op2(b, "mul", g, y); };
  if (name == opname::kLog)
    return [](Builder& b, Value* x, Value*, Value* g) { return op2(b, "div", g, x); };
  if (name == opname::kSqrt)
    return [](Builder& b, Value*, Value* y, Value* g) {
      return op2(b, "div", op2(b, "mul", g, scalar(b, y->type().dtype, 0.5)), y);
    };
  if (name == opname::kRsqrt) // d(x^-1/2) = -1/2 x^-3/2 = -1/2 y^3
    return [](Builder& b, Value*, Value* y, Value* g) {
      Value* y3 = op2(b, "mul", op2(b, "mul", y, y), y);
      return op2(b, "mul", op2(b, "mul", g, scalar(b, y->type().dtype, -0.5)), y3);
    };
  if (name == opname::kReciprocal)
    return [](Builder& b, Value*, Value* y, Value* g) {
      return op1(b, "neg", op2(b, "mul", g, op2(b, "mul", y, y)));
    };
  if (name == opname::kTanh)
    return [](Builder& b, Value*, Value* y, Value* g) {
      Value* one = scalar(b, y->type().dtype, 1);
      return op2(b, "mul", g, op2(b, "sub", one, op2(b, "mul", y, y)));
    };
  if (name == opname::kErf) // 2/sqrt(pi) e^(-x^2)
    return [](Builder& b, Value* x, Value*, Value* g) {
      Value* e = op1(b, "exp", op1(b, "neg", op2(b, "mul", x, x)));
      return op2(b, "mul", g, op2(b, "mul", e, scalar(b, x->type().dtype, 1.1283791670955126)));
    };
  if (name == opname::kSigmoid)
    return [](Builder& b, Value*, Value* y, Value* g) {
      Value* one = scalar(b, y->type().dtype, 1);
      return op2(b, "mul", g, op2(b, "mul", y, op2(b, "sub", one, y)));
    };
  if (name == opname::kFloor || name == opname::kCeil) // steps: zero almost everywhere
    return [](Builder&, Value*, Value*, Value*) -> Value* { return nullptr; };
  return nullptr; // `not`: booleans carry no gradient
}

void registerUnary(OpRegistry& r, const UnaryFn& u) {
  OpDef d;
  d.name = u.name;
  d.summary = u.summary;
  d.inferTypes = [u](const OpSig& sig, std::vector<TensorType>& res) {
    return sameTypeRule(u.name, u.domain, sig, res);
  };
  d.flops = flopsPerResultElement(u.flops);
  d.kernel = [u](const KernelArgs& a) {
    return std::vector<Tensor>{applyUnary(*a.inputs[0], u.f, u.i)};
  };
  d.element.unaryF = u.f;
  d.element.unaryI = u.i;
  if (UnaryGrad grad = unaryGrad(u.name))
    d.gradient = [grad](const GradArgs& a) {
      return std::vector<Value*>{grad(a.b, a.op.operand(0), a.op.result(0), gradOrZero(a, 0))};
    };
  d.shardingRule = elementwiseRule;
  r.add(std::move(d));
}

void registerGelu(OpRegistry& r) {
  OpDef d;
  d.name = "gelu";
  d.summary = "Gaussian error linear unit; approximate = \"none\" (erf) or \"tanh\"";
  d.attrs = {{"approximate", AttrKind::String, Attr("none")}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const std::string& a = sig.attrs.getString("approximate");
    if (a != "none" && a != "tanh")
      return "attribute 'approximate' must be \"none\" or \"tanh\", got \"" + a + "\"";
    return sameTypeRule("gelu", Domain::Float, sig, res);
  };
  d.flops = flopsPerResultElement(8);
  d.kernel = [](const KernelArgs& a) {
    bool t = a.attrs.getString("approximate") == "tanh";
    return std::vector<Tensor>{applyUnary(*a.inputs[0], t ? geluTanh : gelu, nullptr)};
  };
  // One op, so the compiled runtime evaluates the slope in one pass rather than as the dozen
  // elementwise ops of its formula.
  d.gradient = [](const GradArgs& a) {
    Value* x = a.op.operand(0);
    return std::vector<Value*>{a.b.value("gelu_grad", {x, gradOrZero(a, 0)},
                                         {{"approximate", a.op.attrs().getString("approximate")}})};
  };
  d.shardingRule = elementwiseRule;
  r.add(std::move(d));
}

// dy * gelu'(x), gelu's gradient: operands x and dy of one float type and shape.
void registerGeluGrad(OpRegistry& r) {
  OpDef d;
  d.name = "gelu_grad";
  d.summary = "gelu's gradient dy * gelu'(x); approximate as gelu's";
  d.minOperands = d.maxOperands = 2;
  d.attrs = {{"approximate", AttrKind::String, Attr("none")}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const std::string& a = sig.attrs.getString("approximate");
    if (a != "none" && a != "tanh")
      return "attribute 'approximate' must be \"none\" or \"tanh\", got \"" + a + "\"";
    if (sig.operands[0] != sig.operands[1])
      return "gelu_grad operands x and dy must have the same type, got " + sig.operands[0].str() +
             " and " + sig.operands[1].str();
    return sameTypeRule("gelu_grad", Domain::Float, sig, res);
  };
  d.flops = flopsPerResultElement(20);
  d.kernel = [](const KernelArgs& a) {
    double (*slope)(double) =
        a.attrs.getString("approximate") == "tanh" ? geluTanhSlope : geluSlope;
    std::vector<double> x = a.inputs[0]->toDoubles(), dy = a.inputs[1]->toDoubles();
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = dy[i] * slope(x[i]);
    return std::vector<Tensor>{Tensor::fromDoubles(a.resultTypes[0], x)};
  };
  d.shardingRule = elementwiseRule;
  r.add(std::move(d));
}

// ---- binary and ternary with broadcasting ----

std::string broadcastRule(const char* name, Domain domain, const OpSig& sig, DType resultType,
                          bool resultIsOperandType, std::vector<TensorType>& res) {
  const TensorType &a = sig.operands[0], &b = sig.operands[1];
  if (a.dtype != b.dtype)
    return std::string(name) + " operands must have the same element type, got " + a.str() +
           " and " + b.str();
  if (!accepts(domain, a.dtype)) { // plural: drop domainName's article
    std::string dn = domainName(domain);
    return std::string(name) + " needs " + dn.substr(dn.find(' ') + 1) + " operands, got " +
           a.str();
  }
  Shape out;
  std::string err = broadcastShapes(a.shape, b.shape, out);
  if (!err.empty()) return err;
  res = {TensorType{resultIsOperandType ? a.dtype : resultType, out}};
  return "";
}

template <typename T, typename F>
std::vector<T> zipBroadcast(const Shape& out, const Shape& as, const std::vector<T>& a,
                            const Shape& bs, const std::vector<T>& b, F f) {
  std::vector<T> r(static_cast<size_t>(numel(out)));
  if (as == out && bs == out) {
    for (size_t i = 0; i < r.size(); ++i)
      r[i] = f(a[i], b[i]);
    return r;
  }
  auto ia = broadcastIndexMap(out, as), ib = broadcastIndexMap(out, bs);
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = f(a[static_cast<size_t>(ia[i])], b[static_cast<size_t>(ib[i])]);
  return r;
}

struct BinaryFn {
  const char* name;
  const char* summary;
  Domain domain;
  double (*f)(double, double);
  int64_t (*i)(int64_t, int64_t); // nullptr: float only
};

int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t truncDiv(int64_t a, int64_t b) {
  if (b == 0) throw Error("integer division by zero");
  if (a == INT64_MIN && b == -1) return INT64_MIN;
  return a / b;
}
// NaN-propagating max/min, as PyTorch's maximum/minimum.
double fmaxNan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
double fminNan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

const BinaryFn kBinary[] = {
    {"add", "a + b", Domain::Numeric, [](double a, double b) { return a + b; }, wrapAdd},
    {"sub", "a - b", Domain::Numeric, [](double a, double b) { return a - b; }, wrapSub},
    {"mul", "a * b", Domain::Numeric, [](double a, double b) { return a * b; }, wrapMul},
    {"div", "a / b (integers truncate toward zero)", Domain::Numeric,
     [](double a, double b) { return a / b; }, truncDiv},
    {"pow", "a ^ b", Domain::Float, [](double a, double b) { return std::pow(a, b); }, nullptr},
    {"max", "elementwise maximum (NaN propagates)", Domain::Numeric, fmaxNan,
     [](int64_t a, int64_t b) { return std::max(a, b); }},
    {"min", "elementwise minimum (NaN propagates)", Domain::Numeric, fminNan,
     [](int64_t a, int64_t b) { return std::min(a, b); }},
    {"and", "logical and of i1", Domain::Bool, nullptr,
     [](int64_t a, int64_t b) { return int64_t(a && b); }},
    {"or", "logical or of i1", Domain::Bool, nullptr,
     [](int64_t a, int64_t b) { return int64_t(a || b); }},
};

// d/da and d/db of y = f(a, b) before summing back over broadcast dims.
std::vector<Value*> binaryGrad(Builder& b, std::string_view name, Value* x, Value* y, Value* out,
                               Value* g) {
  DType t = x->type().dtype;
  if (name == opname::kAdd) return {g, g};
  if (name == opname::kSub) return {g, op1(b, "neg", g)};
  if (name == opname::kMul) return {op2(b, "mul", g, y), op2(b, "mul", g, x)};
  if (name == opname::kDiv)
    return {op2(b, "div", g, y), op1(b, "neg", op2(b, "div", op2(b, "mul", g, out), y))};
  if (name == opname::kPow) {
    // d/da = b a^(b-1); d/db = y ln a, taken as 0 where a == 0 (as PyTorch does).
    Value* da =
        op2(b, "mul", g, op2(b, "mul", y, op2(b, "pow", x, op2(b, "sub", y, scalar(b, t, 1)))));
    Value* lnx = op1(b, "log", x);
    Value* db = op2(b, "mul", g, op2(b, "mul", out, lnx));
    Value* zero = scalar(b, t, 0);
    return {da, select(b, cmp(b, x, zero, "eq"), zeros(b, db->type()), db)};
  }
  // max/min: the winner takes the gradient; ties split it evenly (as PyTorch does).
  const char* wins = name == opname::kMax ? "gt" : "lt";
  Value* half = op2(b, "mul", g, scalar(b, t, 0.5));
  Value* zero = zeros(b, g->type());
  Value* tie = cmp(b, x, y, "eq");
  return {select(b, cmp(b, x, y, wins), g, select(b, tie, half, zero)),
          select(b, cmp(b, y, x, wins), g, select(b, tie, half, zero))};
}

void registerBinary(OpRegistry& r, const BinaryFn& bf) {
  OpDef d;
  d.name = bf.name;
  d.summary = bf.summary;
  d.minOperands = d.maxOperands = 2;
  d.inferTypes = [bf](const OpSig& sig, std::vector<TensorType>& res) {
    return broadcastRule(bf.name, bf.domain, sig, DType::F32, true, res);
  };
  d.flops = flopsPerResultElement(1);
  d.kernel = [bf](const KernelArgs& a) {
    const Tensor &x = *a.inputs[0], &y = *a.inputs[1];
    const TensorType& rt = a.resultTypes[0];
    if (isFloat(x.dtype()))
      return std::vector<Tensor>{Tensor::fromDoubles(
          rt, zipBroadcast(rt.shape, x.shape(), x.toDoubles(), y.shape(), y.toDoubles(), bf.f))};
    return std::vector<Tensor>{Tensor::fromInts(
        rt, zipBroadcast(rt.shape, x.shape(), x.toInts(), y.shape(), y.toInts(), bf.i))};
  };
  d.element.binaryF = bf.f;
  d.element.binaryI = bf.i;
  if (bf.domain != Domain::Bool)
    d.gradient = [name = std::string(bf.name)](const GradArgs& a) {
      Value *x = a.op.operand(0), *y = a.op.operand(1);
      if (!isFloat(x->type().dtype)) return std::vector<Value*>{nullptr, nullptr};
      // Broadcast operands so every rule sees full-shape values, then sum back.
      auto full = [&](Value* v) {
        const Shape& s = a.op.result(0)->type().shape;
        return v->type().shape == s ? v : a.b.value("broadcast", {v}, {{"shape", s}});
      };
      std::vector<Value*> gs =
          binaryGrad(a.b, name, full(x), full(y), a.op.result(0), gradOrZero(a, 0));
      return std::vector<Value*>{sumToShape(a.b, gs[0], x->type().shape),
                                 sumToShape(a.b, gs[1], y->type().shape)};
    };
  d.shardingRule = elementwiseRule;
  r.add(std::move(d));
}

template <typename T> bool compareValues(const std::string& dir, T a, T b) {
  if (dir == "eq") return a == b;
  if (dir == "ne") return a != b;
  if (dir == "lt") return a < b;
  if (dir == "le") return a <= b;
  if (dir == "gt") return a > b;
  return a >= b;
}

void registerCompare(OpRegistry& r) {
  OpDef d;
  d.name = "compare";
  d.summary = "elementwise comparison to i1; direction = eq|ne|lt|le|gt|ge";
  d.minOperands = d.maxOperands = 2;
  d.attrs = {{"direction", AttrKind::String, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const std::string& dir = sig.attrs.getString("direction");
    if (dir != "eq" && dir != "ne" && dir != "lt" && dir != "le" && dir != "gt" && dir != "ge")
      return "attribute 'direction' must be one of eq, ne, lt, le, gt, ge; got \"" + dir + "\"";
    const TensorType &a = sig.operands[0], &b = sig.operands[1];
    if (a.dtype != b.dtype)
      return "compare operands must have the same element type, got " + a.str() + " and " + b.str();
    Shape out;
    std::string err = broadcastShapes(a.shape, b.shape, out);
    if (!err.empty()) return err;
    res = {TensorType{DType::I1, out}};
    return std::string();
  };
  d.flops = flopsPerResultElement(1);
  d.kernel = [](const KernelArgs& a) {
    const Tensor &x = *a.inputs[0], &y = *a.inputs[1];
    const TensorType& rt = a.resultTypes[0];
    const std::string& dir = a.attrs.getString("direction");
    std::vector<int64_t> out;
    if (isFloat(x.dtype())) {
      auto r = zipBroadcast(rt.shape, x.shape(), x.toDoubles(), y.shape(), y.toDoubles(),
                            [&](double p, double q) { return double(compareValues(dir, p, q)); });
      out.assign(r.begin(), r.end());
    } else {
      out = zipBroadcast(rt.shape, x.shape(), x.toInts(), y.shape(), y.toInts(),
                         [&](int64_t p, int64_t q) { return int64_t(compareValues(dir, p, q)); });
    }
    return std::vector<Tensor>{Tensor::fromInts(rt, out)};
  };
  d.shardingRule = elementwiseRule;
  r.add(std::move(d));
}

void registerWhere(OpRegistry& r) {
  OpDef d;
  d.name = "where";
  d.summary = "select(cond, a, b) with numpy broadcasting of all three";
  d.minOperands = d.maxOperands = 3;
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType &c = sig.operands[0], &a = sig.operands[1], &b = sig.operands[2];
    if (c.dtype != DType::I1) return "where condition must be i1, got " + c.str();
    if (a.dtype != b.dtype)
      return "where operands must have the same element type, got " + a.str() + " and " + b.str();
    Shape ab, out;
    std::string err = broadcastShapes(a.shape, b.shape, ab);
    if (err.empty()) err = broadcastShapes(c.shape, ab, out);
    if (!err.empty()) return err;
    res = {TensorType{a.dtype, out}};
    return std::string();
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor &c = *a.inputs[0], &x = *a.inputs[1], &y = *a.inputs[2];
    const TensorType& rt = a.resultTypes[0];
    auto ic = broadcastIndexMap(rt.shape, c.shape());
    auto ix = broadcastIndexMap(rt.shape, x.shape());
    auto iy = broadcastIndexMap(rt.shape, y.shape());
    Tensor out(rt);
    size_t es = dtypeSize(rt.dtype);
    for (size_t i = 0; i < ic.size(); ++i) {
      const Tensor& src = c.getInt(ic[i]) ? x : y;
      int64_t j = c.getInt(ic[i]) ? ix[i] : iy[i];
      std::memcpy(out.data() + i * es, src.data() + static_cast<size_t>(j) * es, es);
    }
    return std::vector<Tensor>{std::move(out)};
  };
  d.gradient = [](const GradArgs& a) {
    Value *c = a.op.operand(0), *g = gradOrZero(a, 0);
    if (!isFloat(g->type().dtype)) return std::vector<Value*>{nullptr, nullptr, nullptr};
    Value* zero = zeros(a.b, g->type());
    return std::vector<Value*>{
        nullptr, sumToShape(a.b, select(a.b, c, g, zero), a.op.operand(1)->type().shape),
        sumToShape(a.b, select(a.b, c, zero, g), a.op.operand(2)->type().shape)};
  };
  d.shardingRule = elementwiseRule;
  r.add(std::move(d));
}

void registerCast(OpRegistry& r) {
  OpDef d;
  d.name = "cast";
  d.summary = "element type conversion; floats to integers truncate toward zero";
  d.attrs = {{"to", AttrKind::Type, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    res = {TensorType{sig.attrs.getType("to"), sig.operands[0].shape}};
    return std::string();
  };
  d.flops = flopsPerResultElement(0);
  d.kernel = [](const KernelArgs& a) {
    const Tensor& x = *a.inputs[0];
    Tensor out(a.resultTypes[0]);
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (isFloat(out.dtype()))
        out.setDouble(i, x.getDouble(i));
      else if (isFloat(x.dtype()) && isBool(out.dtype()))
        out.setInt(i, x.getDouble(i) != 0.0);
      else
        out.setInt(i, x.getInt(i));
    }
    return std::vector<Tensor>{std::move(out)};
  };
  d.gradient = [](const GradArgs& a) {
    DType from = a.op.operand(0)->type().dtype;
    if (!isFloat(from) || !a.resultGrads[0]) return std::vector<Value*>{nullptr};
    return std::vector<Value*>{a.b.value("cast", {a.resultGrads[0]}, {{"to", from}})};
  };
  d.shardingRule = elementwiseRule;
  r.add(std::move(d));
}

} // namespace

void registerElementwiseOps(OpRegistry& r) {
  for (const UnaryFn& u : kUnary)
    registerUnary(r, u);
  registerGelu(r);
  registerGeluGrad(r);
  for (const BinaryFn& b : kBinary)
    registerBinary(r, b);
  registerCompare(r);
  registerWhere(r);
  registerCast(r);
}

} // namespace shardc
