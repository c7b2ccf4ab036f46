// Data-movement ops that only rearrange elements: transpose, reshape, broadcast, slice,
// reverse, concat, split. Kernels copy raw elements, so they work for every dtype.
#include "GradUtil.h"
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/ir/IR.h"

#include <cstring>
#include <numeric>

namespace shardc {
namespace {
using namespace ops;

// out[i] = in[map[i]] elementwise, for any dtype.
Tensor gatherElements(const Tensor& in, const TensorType& outType,
                      const std::vector<int64_t>& map) {
  Tensor out(outType);
  size_t es = dtypeSize(in.dtype());
  for (size_t i = 0; i < map.size(); ++i)
    std::memcpy(out.data() + i * es, in.data() + static_cast<size_t>(map[i]) * es, es);
  return out;
}

// Flat input index of every element of a strided view: out index -> sum(idx*stride)+offset.
std::vector<int64_t> viewIndexMap(const Shape& outShape, const std::vector<int64_t>& strides,
                                  int64_t offset) {
  std::vector<int64_t> map(static_cast<size_t>(numel(outShape)));
  std::vector<int64_t> idx(outShape.size(), 0);
  int64_t pos = offset;
  for (size_t k = 0; k < map.size(); ++k) {
    map[k] = pos;
    for (size_t d = outShape.size(); d-- > 0;) {
      pos += strides[d];
      if (++idx[d] < outShape[d]) break;
      pos -= strides[d] * outShape[d];
      idx[d] = 0;
    }
  }
  return map;
}

std::string checkShapeAttr(const std::vector<int64_t>& shape) {
  if (!checkedNumel(shape))
    return "shape " + shapeStr(shape) + " has a negative or too large dimension";
  return "";
}

void registerTranspose(OpRegistry& r) {
  OpDef d;
  d.name = "transpose";
  d.summary = "permute dims: result dim i is operand dim perm[i]";
  d.attrs = {{"perm", AttrKind::Ints, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    const auto& perm = sig.attrs.getInts("perm");
    if (static_cast<int64_t>(perm.size()) != x.rank())
      return "perm has " + std::to_string(perm.size()) + " entries for an operand of rank " +
             std::to_string(x.rank());
    std::vector<bool> seen(perm.size(), false);
    Shape out;
    for (int64_t p : perm) {
      if (p < 0 || p >= x.rank() || seen[static_cast<size_t>(p)])
        return "perm " + shapeStr(perm) + " is not a permutation of 0.." +
               std::to_string(x.rank() - 1);
      seen[static_cast<size_t>(p)] = true;
      out.push_back(x.shape[static_cast<size_t>(p)]);
    }
    res = {TensorType{x.dtype, out}};
    return std::string();
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor& x = *a.inputs[0];
    const auto& perm = a.attrs.getInts("perm");
    auto inStrides = rowMajorStrides(x.shape());
    std::vector<int64_t> strides;
    for (int64_t p : perm)
      strides.push_back(inStrides[static_cast<size_t>(p)]);
    const TensorType& rt = a.resultTypes[0];
    return std::vector<Tensor>{gatherElements(x, rt, viewIndexMap(rt.shape, strides, 0))};
  };
  d.gradient = [](const GradArgs& a) {
    const auto& perm = a.op.attrs().getInts("perm");
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    return std::vector<Value*>{a.b.value("transpose", {gradOrZero(a, 0)}, {{"perm", inverse}})};
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>&) {
    ShardingRule rule;
    ShardingRule::Dims in = newDims(rule, sig.operands[0].shape), out;
    for (int64_t p : sig.attrs.getInts("perm"))
      out.push_back(in[static_cast<size_t>(p)]);
    rule.operands = {in};
    rule.results = {out};
    return rule;
  };
  r.add(std::move(d));
}

void registerReshape(OpRegistry& r) {
  OpDef d;
  d.name = "reshape";
  d.summary = "same elements in row-major order, new shape";
  d.attrs = {{"shape", AttrKind::Ints, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    const auto& shape = sig.attrs.getInts("shape");
    std::string err = checkShapeAttr(shape);
    if (!err.empty()) return err;
    if (numel(shape) != x.numel())
      return "cannot reshape " + x.str() + " (" + std::to_string(x.numel()) + " elements) to " +
             shapeStr(shape) + " (" + std::to_string(numel(shape)) + " elements)";
    res = {TensorType{x.dtype, shape}};
    return std::string();
  };
  d.bytes = [](const OpSig&, const std::vector<TensorType>&) { return 0.0; };
  d.kernel = [](const KernelArgs& a) {
    Tensor out(a.resultTypes[0]);
    if (out.byteSize())
      std::memcpy(out.data(), a.inputs[0]->data(), out.byteSize()); // empty: no buffer
    return std::vector<Tensor>{std::move(out)};
  };
  d.gradient = [](const GradArgs& a) {
    return std::vector<Value*>{
        a.b.value("reshape", {gradOrZero(a, 0)}, {{"shape", a.op.operand(0)->type().shape}})};
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    ShardingRule rule;
    ShardingRule::Dims in, out;
    reshapeFactors(rule, sig.operands[0].shape, res[0].shape, in, out);
    rule.operands = {in};
    rule.results = {out};
    return rule;
  };
  r.add(std::move(d));
}

void registerBroadcast(OpRegistry& r) {
  OpDef d;
  d.name = "broadcast";
  d.summary = "numpy broadcast_to: repeat size-1 and missing leading dims to `shape`";
  d.attrs = {{"shape", AttrKind::Ints, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    const auto& shape = sig.attrs.getInts("shape");
    std::string err = checkShapeAttr(shape);
    if (!err.empty()) return err;
    Shape out;
    err = broadcastShapes(x.shape, shape, out);
    if (!err.empty() || out != shape)
      return "cannot broadcast " + x.str() + " to " + shapeStr(shape);
    res = {TensorType{x.dtype, shape}};
    return std::string();
  };
  d.kernel = [](const KernelArgs& a) {
    const TensorType& rt = a.resultTypes[0];
    return std::vector<Tensor>{
        gatherElements(*a.inputs[0], rt, broadcastIndexMap(rt.shape, a.inputs[0]->shape()))};
  };
  d.gradient = [](const GradArgs& a) {
    return std::vector<Value*>{sumToShape(a.b, gradOrZero(a, 0), a.op.operand(0)->type().shape)};
  };
  d.shardingRule = elementwiseRule;
  r.add(std::move(d));
}

// Slice and pad: a dim whose size changes needs replication (its elements move between
// devices); a dim left whole passes through.
ShardingRule resizedDimsRule(const OpSig& sig, const std::vector<TensorType>& res) {
  const Shape& in = sig.operands[0].shape;
  ShardingRule rule;
  ShardingRule::Dims a, b;
  for (size_t d = 0; d < in.size(); ++d) {
    if (res[0].shape[d] == in[d]) {
      int f = rule.addFactor(in[d]);
      a.push_back({f});
      b.push_back({f});
    } else {
      a.push_back({rule.addFactor(in[d], FactorKind::NeedReplication)});
      b.push_back({rule.addFactor(res[0].shape[d], FactorKind::NeedReplication)});
    }
  }
  rule.operands = {a};
  rule.results = {b};
  return rule;
}

void registerSlice(OpRegistry& r) {
  OpDef d;
  d.name = "slice";
  d.summary = "elements start[i] <= j < limit[i] with step stride[i] > 0, per dim";
  d.attrs = {{"start", AttrKind::Ints, std::nullopt},
             {"limit", AttrKind::Ints, std::nullopt},
             {"stride", AttrKind::Ints, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    const auto &start = sig.attrs.getInts("start"), &limit = sig.attrs.getInts("limit"),
               &stride = sig.attrs.getInts("stride");
    size_t rank = x.shape.size();
    if (start.size() != rank || limit.size() != rank || stride.size() != rank)
      return "start, limit and stride need one entry per dim of " + x.str();
    Shape out;
    for (size_t i = 0; i < rank; ++i) {
      if (stride[i] <= 0) return "stride of dim " + std::to_string(i) + " must be positive";
      if (start[i] < 0 || start[i] > limit[i] || limit[i] > x.shape[i])
        return "dim " + std::to_string(i) + ": need 0 <= start (" + std::to_string(start[i]) +
               ") <= limit (" + std::to_string(limit[i]) + ") <= " + std::to_string(x.shape[i]);
      // ceil((limit - start) / stride), without overflow for huge strides.
      out.push_back(limit[i] == start[i] ? 0 : (limit[i] - start[i] - 1) / stride[i] + 1);
    }
    res = {TensorType{x.dtype, out}};
    return std::string();
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor& x = *a.inputs[0];
    const auto &start = a.attrs.getInts("start"), &stride = a.attrs.getInts("stride");
    auto inStrides = rowMajorStrides(x.shape());
    int64_t offset = 0;
    std::vector<int64_t> strides;
    for (size_t i = 0; i < inStrides.size(); ++i) {
      offset += start[i] * inStrides[i];
      // A stride beyond the dim takes one element; clamping it keeps the index sums in range.
      strides.push_back(std::min(stride[i], std::max<int64_t>(x.shape()[i], 1)) * inStrides[i]);
    }
    const TensorType& rt = a.resultTypes[0];
    if (rt.numel() == 0) return std::vector<Tensor>{Tensor(rt)};
    return std::vector<Tensor>{gatherElements(x, rt, viewIndexMap(rt.shape, strides, offset))};
  };
  // The slice's gradient is the result gradient padded back into place.
  d.gradient = [](const GradArgs& a) {
    const TensorType& in = a.op.operand(0)->type();
    Value* g = gradOrZero(a, 0);
    if (g->type().numel() == 0) return std::vector<Value*>{zeros(a.b, in)};
    const auto &start = a.op.attrs().getInts("start"), &stride = a.op.attrs().getInts("stride");
    std::vector<int64_t> low, high, interior;
    for (size_t i = 0; i < in.shape.size(); ++i) {
      int64_t n = g->type().shape[i];
      low.push_back(start[i]);
      interior.push_back(stride[i] - 1);
      high.push_back(in.shape[i] - (start[i] + (n - 1) * stride[i] + 1));
    }
    return std::vector<Value*>{
        a.b.value("pad", {g}, {{"low", low}, {"high", high}, {"interior", interior}})};
  };
  d.shardingRule = resizedDimsRule;
  r.add(std::move(d));
}

// Reversal: along each axis in `axes`, element j of the result is element d-1-j of the
// operand (torch.flip; ONNX slices with negative steps). A reversed dim needs replication:
// device i's block of the result is device n-1-i's block of the operand.
void registerReverse(OpRegistry& r) {
  OpDef d;
  d.name = "reverse";
  d.summary = "reverse the order of elements along each dim in axes";
  d.attrs = {{"axes", AttrKind::Ints, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    std::vector<bool> seen(static_cast<size_t>(x.rank()), false);
    for (int64_t a : sig.attrs.getInts("axes")) {
      auto n = normalizeAxis(a, x.rank());
      if (!n)
        return "axis " + std::to_string(a) + " is out of range for an operand of rank " +
               std::to_string(x.rank());
      if (seen[static_cast<size_t>(*n)]) return "axis " + std::to_string(a) + " is given twice";
      seen[static_cast<size_t>(*n)] = true;
    }
    res = {x};
    return std::string();
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor& x = *a.inputs[0];
    std::vector<int64_t> strides = rowMajorStrides(x.shape());
    int64_t offset = 0;
    for (int64_t ax : a.attrs.getInts("axes")) {
      auto n = static_cast<size_t>(*normalizeAxis(ax, static_cast<int64_t>(x.shape().size())));
      offset += (std::max<int64_t>(x.shape()[n], 1) - 1) * strides[n];
      strides[n] = -strides[n];
    }
    if (x.numel() == 0) return std::vector<Tensor>{Tensor(x.type())};
    return std::vector<Tensor>{
        gatherElements(x, x.type(), viewIndexMap(x.shape(), strides, offset))};
  };
  d.gradient = [](const GradArgs& a) {
    return std::vector<Value*>{
        a.b.value("reverse", {gradOrZero(a, 0)}, {{"axes", a.op.attrs().getInts("axes")}})};
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>&) {
    const TensorType& x = sig.operands[0];
    std::vector<bool> reversed(static_cast<size_t>(x.rank()), false);
    for (int64_t a : sig.attrs.getInts("axes"))
      reversed[static_cast<size_t>(*normalizeAxis(a, x.rank()))] = true;
    ShardingRule rule;
    ShardingRule::Dims in, out;
    for (size_t i = 0; i < x.shape.size(); ++i) {
      if (reversed[i]) {
        in.push_back({rule.addFactor(x.shape[i], FactorKind::NeedReplication)});
        out.push_back({rule.addFactor(x.shape[i], FactorKind::NeedReplication)});
      } else {
        int f = rule.addFactor(x.shape[i]);
        in.push_back({f});
        out.push_back({f});
      }
    }
    rule.operands = {in};
    rule.results = {out};
    return rule;
  };
  r.add(std::move(d));
}

// Concat and split: every dim but `axis` is shared; along `axis` each tensor needs
// replication (pieces of one dimension land at different offsets). Equal pieces are the
// exception: the whole dim is [c, w] (c pieces, needing replication, of w shared with every
// piece), so sharding w keeps a fused q|k|v projection split per device ({model}:3).
ShardingRule alongAxisRule(const std::vector<TensorType>& operands,
                           const std::vector<TensorType>& results, int64_t axis) {
  ShardingRule rule;
  bool splitting = operands.size() == 1;
  const Shape& ref = splitting ? operands[0].shape : results[0].shape;
  const std::vector<TensorType>& pieces = splitting ? results : operands;
  auto a = static_cast<size_t>(axis);
  bool equal = pieces.size() > 1 && pieces[0].shape[a] > 0;
  for (const TensorType& t : pieces)
    equal = equal && t.shape[a] == pieces[0].shape[a];
  std::vector<int> shared;
  for (size_t d = 0; d < ref.size(); ++d)
    shared.push_back(d == a ? -1 : rule.addFactor(ref[d]));
  int count = -1, width = -1;
  if (equal) {
    count = rule.addFactor(static_cast<int64_t>(pieces.size()), FactorKind::NeedReplication);
    width = rule.addFactor(pieces[0].shape[a]);
  }
  auto dims = [&](const TensorType& t, bool whole) {
    ShardingRule::Dims ds;
    for (size_t d = 0; d < ref.size(); ++d) {
      if (shared[d] >= 0)
        ds.push_back({shared[d]});
      else if (equal)
        ds.push_back(whole ? std::vector<int>{count, width} : std::vector<int>{width});
      else
        ds.push_back({rule.addFactor(t.shape[d], FactorKind::NeedReplication)});
    }
    return ds;
  };
  for (const TensorType& t : operands)
    rule.operands.push_back(dims(t, splitting));
  for (const TensorType& t : results)
    rule.results.push_back(dims(t, !splitting));
  return rule;
}

void registerConcat(OpRegistry& r) {
  OpDef d;
  d.name = "concat";
  d.summary = "join operands along one axis";
  d.maxOperands = -1;
  d.attrs = {{"axis", AttrKind::Int, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    int64_t axis;
    std::string err = axisAttr(sig, "axis", x.rank(), axis);
    if (!err.empty()) return err;
    Shape out = x.shape;
    out[static_cast<size_t>(axis)] = 0;
    for (const TensorType& t : sig.operands) {
      bool ok = t.dtype == x.dtype && t.rank() == x.rank();
      for (int64_t i = 0; ok && i < x.rank(); ++i)
        ok = i == axis || t.shape[static_cast<size_t>(i)] == x.shape[static_cast<size_t>(i)];
      if (!ok)
        return "concat operands must agree in element type and in every dim but " +
               std::to_string(axis) + ", got " + typeList(sig.operands);
      out[static_cast<size_t>(axis)] += t.shape[static_cast<size_t>(axis)];
    }
    res = {TensorType{x.dtype, out}};
    return std::string();
  };
  d.kernel = [](const KernelArgs& a) {
    Tensor out(a.resultTypes[0]);
    int64_t axis = *normalizeAxis(a.attrs.getInt("axis"), out.type().rank());
    int64_t at = 0;
    for (const Tensor* in : a.inputs) {
      int64_t len = in->shape()[static_cast<size_t>(axis)];
      copyAlong(*in, 0, out, at, axis, len);
      at += len;
    }
    return std::vector<Tensor>{std::move(out)};
  };
  d.gradient = [](const GradArgs& a) {
    Value* g = gradOrZero(a, 0);
    int64_t axis = *normalizeAxis(a.op.attrs().getInt("axis"), g->type().rank());
    std::vector<int64_t> sizes;
    for (Value* v : a.op.operands())
      sizes.push_back(v->type().shape[static_cast<size_t>(axis)]);
    Op* s = a.b.create("split", {g}, {{"axis", axis}, {"sizes", sizes}});
    std::vector<Value*> out;
    for (size_t i = 0; i < s->numResults(); ++i)
      out.push_back(s->result(i));
    return out;
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    return alongAxisRule(sig.operands, res,
                         *normalizeAxis(sig.attrs.getInt("axis"), res[0].rank()));
  };
  r.add(std::move(d));
}

void registerSplit(OpRegistry& r) {
  OpDef d;
  d.name = "split";
  d.summary = "cut along one axis into pieces of the given sizes (one result each)";
  d.attrs = {{"axis", AttrKind::Int, std::nullopt}, {"sizes", AttrKind::Ints, std::nullopt}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    int64_t axis;
    std::string err = axisAttr(sig, "axis", x.rank(), axis);
    if (!err.empty()) return err;
    const auto& sizes = sig.attrs.getInts("sizes");
    if (sizes.empty()) return std::string("split needs at least one size");
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0 || s > x.shape[static_cast<size_t>(axis)])
        return "split size " + std::to_string(s) + " is out of range";
      total += s;
    }
    if (total != x.shape[static_cast<size_t>(axis)])
      return "split sizes " + shapeStr(sizes) + " sum to " + std::to_string(total) + ", but dim " +
             std::to_string(axis) + " of " + x.str() + " is " +
             std::to_string(x.shape[static_cast<size_t>(axis)]);
    res.clear();
    for (int64_t s : sizes) {
      TensorType t = x;
      t.shape[static_cast<size_t>(axis)] = s;
      res.push_back(t);
    }
    return std::string();
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor& x = *a.inputs[0];
    int64_t axis = *normalizeAxis(a.attrs.getInt("axis"), x.type().rank());
    std::vector<Tensor> outs;
    int64_t at = 0;
    for (const TensorType& t : a.resultTypes) {
      Tensor part(t);
      int64_t len = t.shape[static_cast<size_t>(axis)];
      copyAlong(x, at, part, 0, axis, len);
      at += len;
      outs.push_back(std::move(part));
    }
    return outs;
  };
  d.gradient = [](const GradArgs& a) {
    std::vector<Value*> pieces;
    for (size_t i = 0; i < a.op.numResults(); ++i)
      pieces.push_back(gradOrZero(a, i));
    int64_t axis = *normalizeAxis(a.op.attrs().getInt("axis"), a.op.operand(0)->type().rank());
    return std::vector<Value*>{a.b.value("concat", pieces, {{"axis", axis}})};
  };
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    return alongAxisRule(sig.operands, res,
                         *normalizeAxis(sig.attrs.getInt("axis"), res[0].rank()));
  };
  r.add(std::move(d));
}

void registerPad(OpRegistry& r) {
  OpDef d;
  d.name = "pad";
  d.summary =
      "insert `value` before (low), after (high) and between (interior) the elements of each dim";
  d.attrs = {{"low", AttrKind::Ints, std::nullopt},
             {"high", AttrKind::Ints, std::nullopt},
             {"interior", AttrKind::Ints, std::nullopt},
             {"value", AttrKind::Float, Attr(0.0)}};
  d.inferTypes = [](const OpSig& sig, std::vector<TensorType>& res) {
    const TensorType& x = sig.operands[0];
    const auto &lo = sig.attrs.getInts("low"), &hi = sig.attrs.getInts("high"),
               &in = sig.attrs.getInts("interior");
    if (lo.size() != x.shape.size() || hi.size() != x.shape.size() || in.size() != x.shape.size())
      return "low, high and interior need one entry per dim of " + x.str();
    Shape out;
    for (size_t i = 0; i < x.shape.size(); ++i) {
      if (lo[i] < 0 || hi[i] < 0 || in[i] < 0)
        return std::string("padding amounts must be non-negative");
      int64_t n = x.shape[i];
      // In 128 bits: the amounts are user attributes and may be near the int64 limits.
      __int128 size = __int128(lo[i]) + hi[i] + n + (n > 0 ? __int128(n - 1) * in[i] : 0);
      if (size > kMaxElements) return "padded dim " + std::to_string(i) + " is too large";
      out.push_back(static_cast<int64_t>(size));
    }
    res = {TensorType{x.dtype, out}};
    return std::string();
  };
  d.kernel = [](const KernelArgs& a) {
    const Tensor& x = *a.inputs[0];
    const TensorType& rt = a.resultTypes[0];
    const auto &lo = a.attrs.getInts("low"), &in = a.attrs.getInts("interior");
    Tensor out(rt);
    double fill = a.attrs.getFloat("value");
    for (int64_t i = 0; i < out.numel(); ++i)
      out.setDouble(i, fill);
    auto outStrides = rowMajorStrides(rt.shape);
    std::vector<int64_t> strides;
    int64_t offset = 0;
    for (size_t i = 0; i < lo.size(); ++i) {
      strides.push_back((in[i] + 1) * outStrides[i]);
      offset += lo[i] * outStrides[i];
    }
    auto map = viewIndexMap(x.shape(), strides, offset);
    size_t es = dtypeSize(x.dtype());
    for (size_t i = 0; i < map.size(); ++i)
      std::memcpy(out.data() + static_cast<size_t>(map[i]) * es, x.data() + i * es, es);
    return std::vector<Tensor>{std::move(out)};
  };
  d.gradient = [](const GradArgs& a) {
    const TensorType& x = a.op.operand(0)->type();
    if (x.numel() == 0) return std::vector<Value*>{zeros(a.b, x)};
    const auto &lo = a.op.attrs().getInts("low"), &in = a.op.attrs().getInts("interior");
    std::vector<int64_t> start, limit, stride;
    for (size_t i = 0; i < lo.size(); ++i) {
      start.push_back(lo[i]);
      stride.push_back(in[i] + 1);
      limit.push_back(lo[i] + (x.shape[i] - 1) * (in[i] + 1) + 1);
    }
    return std::vector<Value*>{a.b.value("slice", {gradOrZero(a, 0)},
                                         {{"start", start}, {"limit", limit}, {"stride", stride}})};
  };
  d.shardingRule = resizedDimsRule;
  r.add(std::move(d));
}

} // namespace

void registerShapeOps(OpRegistry& r) {
  registerTranspose(r);
  registerReshape(r);
  registerBroadcast(r);
  registerSlice(r);
  registerReverse(r);
  registerConcat(r);
  registerSplit(r);
  registerPad(r);
}

} // namespace shardc
