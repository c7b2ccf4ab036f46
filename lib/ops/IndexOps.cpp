// Ops that create or index tensors: constant, iota, gather.
#include "GradUtil.h"
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/ir/IR.h"

#include "shardc/support/Error.h"

#include <cstring>

namespace shardc {
namespace {
using namespace ops;

// gather(data, idx) and scatter_add(idx, updates) -> data-shaped: `table` is the data or
// result shape, the wide side is table[:axis] + idx + table[axis+1:].
ShardingRule gatherLikeRule(const Shape& table, const Shape& idx, int64_t axis, bool scatter) {
  ShardingRule rule;
  ShardingRule::Dims tableDims, idxDims, wide;
  for (size_t d = 0; d < table.size(); ++d)
    tableDims.push_back(
        {rule.addFactor(table[d], static_cast<int64_t>(d) == axis ? FactorKind::NeedReplication
                                                                  : FactorKind::PassThrough)});
  for (int64_t n : idx)
    idxDims.push_back(
        {rule.addFactor(n, scatter ? FactorKind::Reduction : FactorKind::PassThrough)});
  wide.insert(wide.end(), tableDims.begin(), tableDims.begin() + axis);
  wide.insert(wide.end(), idxDims.begin(), idxDims.end());
  wide.insert(wide.end(), tableDims.begin() + axis + 1, tableDims.end());
  if (scatter) {
    rule.operands = {idxDims, wide};
    rule.results = {tableDims};
  } else {
    rule.operands = {tableDims, idxDims};
    rule.results = {wide};
  }
  return rule;
}

void registerConstant(OpRegistry& r) {
  OpDef d;
  d.name = "constant";
  d.summary = "a literal tensor";
  d.minOperands = d.maxOperands = 0;
  d.attrs = {{"value", AttrKind::Tensor, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    res = {sig.attrs.getTensor("value").type()};
    return std::string();
  };
  d.bytes = [](const OpSig&, const std::vector<TensorType>& res) {
    return static_cast<double>(res[0].bytes());
  };
  d.kernel = [](const KernelArgs& a) { return std::vector<Tensor>{a.attrs.getTensor("value")}; };
  d.shardingRule = [](const OpSig&, const std::vector<TensorType>& res) {
    ShardingRule rule;
    rule.results = {newDims(rule, res[0].shape)};
    return rule;
  };
  r.add(std::move(d));
}

void registerIota(OpRegistry& r) {
  OpDef d;
  d.name = "iota";
  d.summary = "tensor whose element is its index along `axis`";
  d.minOperands = d.maxOperands = 0;
  d.attrs = {{"shape", AttrKind::Ints, std::nullopt},
             {"axis", AttrKind::Int, Attr(0)},
             {"dtype", AttrKind::Type, Attr(DType::I64)}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const auto& shape = sig.attrs.getInts("shape");
    if (!checkedNumel(shape))
      return "shape " + shapeStr(shape) + " has a negative or too large dimension";
    int64_t axis;
    std::string err = axisAttr(sig, "axis", static_cast<int64_t>(shape.size()), axis);
    if (!err.empty()) return err;
    DType t = sig.attrs.getType("dtype");
    if (isBool(t)) return std::string("iota cannot produce i1");
    res = {TensorType{t, shape}};
    return std::string();
  };
  d.kernel = [](const KernelArgs& a) {
    const TensorType& rt = a.resultTypes[0];
    int64_t axis = *normalizeAxis(a.attrs.getInt("axis"), rt.rank());
    auto strides = rowMajorStrides(rt.shape);
    Tensor out(rt);
    for (int64_t i = 0; i < rt.numel(); ++i)
      out.setInt(i, (i / strides[static_cast<size_t>(axis)]) % rt.shape[static_cast<size_t>(axis)]);
    return std::vector<Tensor>{std::move(out)};
  };
  // Sharding the counting axis would need per-device offsets; that dim stays whole.
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    ShardingRule rule;
    int64_t axis = *normalizeAxis(sig.attrs.getInt("axis"), res[0].rank());
    ShardingRule::Dims dims;
    for (int64_t i = 0; i < res[0].rank(); ++i)
      dims.push_back(
          {rule.addFactor(res[0].shape[static_cast<size_t>(i)],
                          i == axis ? FactorKind::NeedReplication : FactorKind::PassThrough)});
    rule.results = {dims};
    return rule;
  };
  r.add(std::move(d));
}

void registerGather(OpRegistry& r) {
  OpDef d;
  d.name = "gather";
  d.summary = "take slices of data along `axis` at integer indices (embedding lookup); "
              "result dims: data[:axis] + indices + data[axis+1:]; negative indices count "
              "from the end";
  d.minOperands = d.maxOperands = 2;
  d.attrs = {{"axis", AttrKind::Int, Attr(0)}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType &x = sig.operands[0], &idx = sig.operands[1];
    if (!isInteger(idx.dtype)) return "gather indices must be i32 or i64, got " + idx.str();
    int64_t axis;
    std::string err = axisAttr(sig, "axis", x.rank(), axis);
    if (!err.empty()) return err;
    Shape out(x.shape.begin(), x.shape.begin() + axis);
    out.insert(out.end(), idx.shape.begin(), idx.shape.end());
    out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
    res = {TensorType{x.dtype, out}};
    return std::string();
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor &x = *a.inputs[0], &idx = *a.inputs[1];
    int64_t axis = *normalizeAxis(a.attrs.getInt("axis"), x.type().rank());
    int64_t outer = 1, inner = 1, n = x.shape()[static_cast<size_t>(axis)];
    for (int64_t i = 0; i < axis; ++i)
      outer *= x.shape()[static_cast<size_t>(i)];
    for (size_t i = static_cast<size_t>(axis) + 1; i < x.shape().size(); ++i)
      inner *= x.shape()[i];
    size_t es = dtypeSize(x.dtype()), row = static_cast<size_t>(inner) * es;
    Tensor out(a.resultTypes[0]);
    int64_t k = idx.numel();
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = idx.getInt(j);
      if (i < -n || i >= n)
        throw Error("gather index " + std::to_string(i) + " at position " + std::to_string(j) +
                    " is out of range for a dimension of size " + std::to_string(n));
      if (i < 0) i += n;
      for (int64_t o = 0; o < outer && row; ++o)
        std::memcpy(out.data() + static_cast<size_t>(o * k + j) * row,
                    x.data() + static_cast<size_t>(o * n + i) * row, row);
    }
    return std::vector<Tensor>{std::move(out)};
  };
  // The transpose of a gather is a scatter-add of the gradient rows into zeros.
  d.gradient = [](const GradArgs& a) {
    const TensorType& x = a.op.operand(0)->type();
    if (!isFloat(x.dtype)) return std::vector<Value*>{nullptr, nullptr};
    int64_t axis = *normalizeAxis(a.op.attrs().getInt("axis"), x.rank());
    return std::vector<Value*>{a.b.value("scatter_add", {a.op.operand(1), gradOrZero(a, 0)},
                                         {{"axis", axis}, {"shape", x.shape}}),
                               nullptr};
  };
  // data[:axis] and data[axis+1:] pass through to the result, as do the index dims; the
  // gathered axis itself needs replication (any row may be picked).
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>&) {
    return gatherLikeRule(sig.operands[0].shape, sig.operands[1].shape,
                          *normalizeAxis(sig.attrs.getInt("axis"), sig.operands[0].rank()), false);
  };
  r.add(std::move(d));
}

void registerScatterAdd(OpRegistry& r) {
  OpDef d;
  d.name = "scatter_add";
  d.summary = "zeros of `shape`, plus each slice of updates added at its index along `axis` "
              "(the transpose of gather: updates dims are shape[:axis] + indices + shape[axis+1:])";
  d.minOperands = d.maxOperands = 2;
  d.attrs = {{"axis", AttrKind::Int, Attr(0)}, {"shape", AttrKind::Ints, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType &idx = sig.operands[0], &upd = sig.operands[1];
    const auto& shape = sig.attrs.getInts("shape");
    if (!isInteger(idx.dtype)) return "scatter_add indices must be i32 or i64, got " + idx.str();
    if (!checkedNumel(shape))
      return "shape " + shapeStr(shape) + " has a negative or too large dimension";
    int64_t axis;
    std::string err = axisAttr(sig, "axis", static_cast<int64_t>(shape.size()), axis);
    if (!err.empty()) return err;
    Shape want(shape.begin(), shape.begin() + axis);
    want.insert(want.end(), idx.shape.begin(), idx.shape.end());
    want.insert(want.end(), shape.begin() + axis + 1, shape.end());
    if (upd.shape != want)
      return "updates must have shape " + shapeStr(want) + " for indices " + idx.str() + ", got " +
             upd.str();
    res = {TensorType{upd.dtype, shape}};
    return std::string();
  };
  d.flops = [](const OpSig& sig, const std::vector<TensorType>&) {
    return numelD(sig.operands[1]);
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor &idx = *a.inputs[0], &upd = *a.inputs[1];
    const TensorType& rt = a.resultTypes[0];
    int64_t axis = *normalizeAxis(a.attrs.getInt("axis"), rt.rank());
    int64_t outer = 1, inner = 1, n = rt.shape[static_cast<size_t>(axis)], k = idx.numel();
    for (int64_t i = 0; i < axis; ++i)
      outer *= rt.shape[static_cast<size_t>(i)];
    for (size_t i = static_cast<size_t>(axis) + 1; i < rt.shape.size(); ++i)
      inner *= rt.shape[i];
    bool fl = isFloat(rt.dtype);
    std::vector<double> outF(fl ? static_cast<size_t>(rt.numel()) : 0),
        u = fl ? upd.toDoubles() : std::vector<double>();
    std::vector<int64_t> outI(fl ? 0 : static_cast<size_t>(rt.numel())),
        ui = fl ? std::vector<int64_t>() : upd.toInts();
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = idx.getInt(j);
      if (i < -n || i >= n)
        throw Error("scatter_add index " + std::to_string(i) + " at position " + std::to_string(j) +
                    " is out of range for a dimension of size " + std::to_string(n));
      if (i < 0) i += n;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t e = 0; e < inner; ++e) {
          size_t dst = static_cast<size_t>((o * n + i) * inner + e),
                 src = static_cast<size_t>((o * k + j) * inner + e);
          if (fl)
            outF[dst] += u[src];
          else
            outI[dst] += ui[src];
        }
    }
    return std::vector<Tensor>{fl ? Tensor::fromDoubles(rt, outF) : Tensor::fromInts(rt, outI)};
  };
  d.gradient = [](const GradArgs& a) {
    return std::vector<Value*>{nullptr, a.b.value("gather", {gradOrZero(a, 0), a.op.operand(0)},
                                                  {{"axis", a.op.attrs().getInt("axis")}})};
  };
  // The transpose of gather's rule; updates summed into one row make the index dims
  // reductions.
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    return gatherLikeRule(res[0].shape, sig.operands[0].shape,
                          *normalizeAxis(sig.attrs.getInt("axis"), res[0].rank()), true);
  };
  r.add(std::move(d));
}

} // namespace

void registerIndexOps(OpRegistry& r) {
  registerConstant(r);
  registerIota(r);
  registerGather(r);
  registerScatterAdd(r);
}

} // namespace shardc
