// Reductions over a set of axes: reduce_sum, reduce_mean, reduce_max, reduce_min, and
// argmax over one axis.
#include "GradUtil.h"
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/ir/IR.h"

#include <cmath>
#include <limits>

namespace shardc {
namespace {
using namespace ops;

enum class Kind { Sum, Mean, Max, Min };

// Result shape of reducing `axes` (sorted, normalized) of `shape`.
Shape reducedShape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims) {
  Shape out;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!reduced)
      out.push_back(shape[static_cast<size_t>(i)]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

std::string reduceRule(const char* name, bool floatOnly, const OpSig& sig,
                       std::vector<TensorType>& res) {
  const TensorType& x = sig.operands[0];
  if (!isFloat(x.dtype) && (floatOnly || !isInteger(x.dtype)))
    return std::string(name) + " needs a " + (floatOnly ? "floating-point" : "numeric") +
           " operand, got " + x.str();
  std::vector<int64_t> axes;
  std::string err = axesAttr(sig, "axes", x.rank(), axes);
  if (!err.empty()) return err;
  res = {TensorType{x.dtype, reducedShape(x.shape, axes, sig.attrs.getBool("keepdims"))}};
  return "";
}

template <typename T>
std::vector<T> reduce(Kind kind, const Shape& shape, const std::vector<int64_t>& axes,
                      const std::vector<T>& x) {
  Shape kept = reducedShape(shape, axes, true);
  auto map = broadcastIndexMap(shape, kept);
  T init = kind == Kind::Max
               ? (std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                       : std::numeric_limits<T>::lowest())
           : kind == Kind::Min
               ? (std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                       : std::numeric_limits<T>::max())
               : T(0);
  std::vector<T> out(static_cast<size_t>(numel(kept)), init);
  for (size_t i = 0; i < x.size(); ++i) {
    T& o = out[static_cast<size_t>(map[i])];
    T v = x[i];
    if (kind == Kind::Sum || kind == Kind::Mean)
      o += v;
    else if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v) || std::isnan(o))
        o = NAN;
      else
        o = kind == Kind::Max ? std::max(o, v) : std::min(o, v);
    } else {
      o = kind == Kind::Max ? std::max(o, v) : std::min(o, v);
    }
  }
  if (kind == Kind::Mean) {
    int64_t count = 1;
    for (int64_t a : axes)
      count *= shape[static_cast<size_t>(a)];
    for (T& o : out)
      o /= static_cast<T>(count);
  }
  return out;
}

// Sum and mean spread the gradient evenly; max and min give it to the extreme elements,
// split evenly between ties (as PyTorch's amax/amin do).
std::vector<Value*> reduceGrad(const GradArgs& a, Kind kind) {
  Value *x = a.op.operand(0), *g = gradOrZero(a, 0);
  if (!isFloat(x->type().dtype)) return {nullptr};
  Builder& b = a.b;
  const Shape& shape = x->type().shape;
  std::vector<int64_t> axes;
  for (int64_t ax : a.op.attrs().getInts("axes"))
    axes.push_back(*normalizeAxis(ax, x->type().rank()));
  Value* gb = broadcastBack(b, g, axes, shape);
  if (kind == Kind::Sum) return {gb};
  if (kind == Kind::Mean) {
    int64_t count = 1;
    for (int64_t ax : axes)
      count *= shape[static_cast<size_t>(ax)];
    return {b.value("div", {gb, scalar(b, x->type().dtype, static_cast<double>(count))})};
  }
  Value* yb = broadcastBack(b, a.op.result(0), axes, shape);
  Value* hit = b.value("cast", {b.value("compare", {x, yb}, {{"direction", "eq"}})},
                       {{"to", x->type().dtype}});
  Value* count = broadcastBack(
      b, b.value("reduce_sum", {hit}, {{"axes", axes}, {"keepdims", true}}), axes, shape);
  return {b.value("div", {b.value("mul", {gb, hit}), count})};
}

// Reduced dims get a factor of `kind` on the operand only (or on a kept size-1 dim).
ShardingRule reductionRule(const OpSig& sig, const std::vector<TensorType>& res,
                           const std::vector<int64_t>& axesAttr, FactorKind kind) {
  const TensorType& x = sig.operands[0];
  std::vector<int64_t> axes;
  for (int64_t a : axesAttr)
    axes.push_back(*normalizeAxis(a, x.rank()));
  bool keep = res[0].rank() == x.rank();
  ShardingRule rule;
  ShardingRule::Dims in, out;
  for (int64_t d = 0; d < x.rank(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    int f =
        rule.addFactor(x.shape[static_cast<size_t>(d)], reduced ? kind : FactorKind::PassThrough);
    in.push_back({f});
    if (!reduced)
      out.push_back({f});
    else if (keep)
      out.push_back({});
  }
  rule.operands = {in};
  rule.results = {out};
  return rule;
}

void registerReduce(OpRegistry& r, const char* name, const char* summary, Kind kind) {
  OpDef d;
  d.name = name;
  d.summary = summary;
  d.attrs = {{"axes", AttrKind::Ints, std::nullopt}, {"keepdims", AttrKind::Bool, Attr(false)}};
  bool floatOnly = kind == Kind::Mean;
  d.inferTypes = [name, floatOnly](const OpSig& sig, std::vector<TensorType>& res) {
    return reduceRule(name, floatOnly, sig, res);
  };
  d.flops = [](const OpSig& sig, const std::vector<TensorType>&) {
    return numelD(sig.operands[0]);
  };
  d.kernel = [kind](const KernelArgs& a) {
    const Tensor& x = *a.inputs[0];
    std::vector<int64_t> axes;
    axesAttr(OpSig{{x.type()}, a.attrs}, "axes", x.type().rank(), axes);
    const TensorType& rt = a.resultTypes[0];
    if (isFloat(x.dtype()))
      return std::vector<Tensor>{
          Tensor::fromDoubles(rt, reduce(kind, x.shape(), axes, x.toDoubles()))};
    return std::vector<Tensor>{Tensor::fromInts(rt, reduce(kind, x.shape(), axes, x.toInts()))};
  };
  d.gradient = [kind](const GradArgs& a) { return reduceGrad(a, kind); };
  // Partial results are pending sums, so only sum and mean may leave a reduced dim sharded
  // (a mean's partial is scaled by the lowering); max and min need it whole.
  bool summing = kind == Kind::Sum || kind == Kind::Mean;
  d.shardingRule = [summing](const OpSig& sig, const std::vector<TensorType>& res) {
    return reductionRule(sig, res, sig.attrs.getInts("axes"),
                         summing ? FactorKind::Reduction : FactorKind::NeedReplication);
  };
  r.add(std::move(d));
}

void registerArgmax(OpRegistry& r) {
  OpDef d;
  d.name = "argmax";
  d.summary = "index (i64) of the first maximum along one axis";
  d.attrs = {{"axis", AttrKind::Int, std::nullopt}, {"keepdims", AttrKind::Bool, Attr(false)}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    if (!isFloat(x.dtype) && !isInteger(x.dtype))
      return "argmax needs a numeric operand, got " + x.str();
    int64_t axis;
    std::string err = axisAttr(sig, "axis", x.rank(), axis);
    if (!err.empty()) return err;
    if (x.shape[static_cast<size_t>(axis)] == 0) return std::string("argmax over an empty axis");
    res = {TensorType{DType::I64, reducedShape(x.shape, {axis}, sig.attrs.getBool("keepdims"))}};
    return std::string();
  };
  // One comparison per input element, as reduce_max.
  d.flops = [](const OpSig& sig, const std::vector<TensorType>&) {
    return numelD(sig.operands[0]);
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor& x = *a.inputs[0];
    int64_t axis = *normalizeAxis(a.attrs.getInt("axis"), x.type().rank());
    int64_t n = x.shape()[static_cast<size_t>(axis)], outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i)
      outer *= x.shape()[static_cast<size_t>(i)];
    for (int64_t i = axis + 1; i < x.type().rank(); ++i)
      inner *= x.shape()[static_cast<size_t>(i)];
    std::vector<int64_t> out(static_cast<size_t>(outer * inner));
    // Integers compare as int64: above 2^53 distinct values can round to the same double.
    auto argmaxOf = [&](const auto& v) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) {
          int64_t best = 0;
          auto bv = v[static_cast<size_t>(o * n * inner + in)];
          for (int64_t j = 1; j < n && !std::isnan(bv); ++j) {
            auto c = v[static_cast<size_t>((o * n + j) * inner + in)];
            if (c > bv || std::isnan(c)) best = j, bv = c;
          }
          out[static_cast<size_t>(o * inner + in)] = best;
        }
    };
    if (isFloat(x.dtype()))
      argmaxOf(x.toDoubles());
    else
      argmaxOf(x.toInts());
    return std::vector<Tensor>{Tensor::fromInts(a.resultTypes[0], out)};
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    return reductionRule(sig, res, {sig.attrs.getInt("axis")}, FactorKind::NeedReplication);
  };
  r.add(std::move(d));
}

} // namespace

void registerReduceOps(OpRegistry& r) {
  registerReduce(r, "reduce_sum", "sum over axes", Kind::Sum);
  registerReduce(r, "reduce_mean", "mean over axes", Kind::Mean);
  registerReduce(r, "reduce_max", "maximum over axes (NaN propagates)", Kind::Max);
  registerReduce(r, "reduce_min", "minimum over axes (NaN propagates)", Kind::Min);
  registerArgmax(r);
}

} // namespace shardc
