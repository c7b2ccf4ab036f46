#include "OpUtil.h"

#include <algorithm>

namespace shardc::ops {

std::string broadcastShapes(const Shape& a, const Shape& b, Shape& out) {
  size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      return "shapes " + shapeStr(a) + " and " + shapeStr(b) + " do not broadcast (dimension " +
             std::to_string(i) + ": " + std::to_string(da) + " vs " + std::to_string(db) + ")";
    out[i] = da == 1 ? db : da;
  }
  return "";
}

std::vector<int64_t> rowMajorStrides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

std::vector<int64_t> broadcastIndexMap(const Shape& out, const Shape& in) {
  int64_t n = numel(out);
  std::vector<int64_t> map(static_cast<size_t>(n));
  size_t r = out.size(), off = r - in.size();
  // Stride of each output dimension in the input; 0 where the input broadcasts.
  std::vector<int64_t> inStrides = rowMajorStrides(in), strides(r, 0);
  for (size_t i = off; i < r; ++i)
    strides[i] = in[i - off] == 1 ? 0 : inStrides[i - off];
  std::vector<int64_t> idx(r, 0);
  int64_t pos = 0;
  for (int64_t k = 0; k < n; ++k) {
    map[static_cast<size_t>(k)] = pos;
    for (size_t d = r; d-- > 0;) {
      pos += strides[d];
      if (++idx[d] < out[d]) break;
      pos -= strides[d] * out[d];
      idx[d] = 0;
    }
  }
  return map;
}

std::string axisAttr(const OpSig& sig, const char* name, int64_t rank, int64_t& axis) {
  int64_t a = sig.attrs.getInt(name);
  auto n = normalizeAxis(a, rank);
  if (!n)
    return "attribute '" + std::string(name) + "' = " + std::to_string(a) +
           " is out of range for rank " + std::to_string(rank);
  axis = *n;
  return "";
}

std::string axesAttr(const OpSig& sig, const char* name, int64_t rank, std::vector<int64_t>& axes) {
  axes.clear();
  for (int64_t a : sig.attrs.getInts(name)) {
    auto n = normalizeAxis(a, rank);
    if (!n)
      return "axis " + std::to_string(a) + " in '" + name + "' is out of range for rank " +
             std::to_string(rank);
    if (std::find(axes.begin(), axes.end(), *n) != axes.end())
      return "axis " + std::to_string(a) + " appears twice in '" + name + "'";
    axes.push_back(*n);
  }
  std::sort(axes.begin(), axes.end());
  return "";
}

std::string typeList(const std::vector<TensorType>& types) {
  std::string s;
  for (size_t i = 0; i < types.size(); ++i)
    s += (i ? ", " : "") + types[i].str();
  return s;
}

ShardingRule::Dims newDims(ShardingRule& rule, const Shape& shape, FactorKind kind) {
  ShardingRule::Dims dims;
  for (int64_t d : shape)
    dims.push_back({rule.addFactor(d, kind)});
  return dims;
}

ShardingRule elementwiseRule(const OpSig& sig, const std::vector<TensorType>& results) {
  ShardingRule rule;
  const Shape& out = results[0].shape;
  ShardingRule::Dims outDims = newDims(rule, out);
  for (const TensorType& t : sig.operands) {
    ShardingRule::Dims dims;
    size_t off = out.size() - t.shape.size();
    for (size_t i = 0; i < t.shape.size(); ++i)
      dims.push_back(t.shape[i] == out[off + i] ? outDims[off + i] : std::vector<int>{});
    rule.operands.push_back(dims);
  }
  rule.results = {outDims};
  for (size_t r = 1; r < results.size(); ++r)
    rule.results.push_back(outDims);
  return rule;
}

void reshapeFactors(ShardingRule& rule, const Shape& in, const Shape& out,
                    ShardingRule::Dims& inDims, ShardingRule::Dims& outDims) {
  inDims.assign(in.size(), {});
  outDims.assign(out.size(), {});
  size_t i = 0, j = 0;
  int64_t ra = 0, rb = 0; // what is left of in[i] and out[j]
  auto skipOnes = [&] {
    while (i < in.size() && ra == 0)
      ra = in[i] == 1 ? (++i, 0) : in[i];
    while (j < out.size() && rb == 0)
      rb = out[j] == 1 ? (++j, 0) : out[j];
  };
  skipOnes();
  while (i < in.size() && j < out.size()) {
    int64_t f = std::min(ra, rb);
    if (std::max(ra, rb) % f != 0) break; // sizes do not factor: replicate the rest
    int id = rule.addFactor(f);
    inDims[i].push_back(id);
    outDims[j].push_back(id);
    ra /= f;
    rb /= f;
    if (ra == 1) ra = 0, ++i;
    if (rb == 1) rb = 0, ++j;
    skipOnes();
  }
  for (; i < in.size(); ++i, ra = 0)
    if (in[i] != 1)
      inDims[i].push_back(rule.addFactor(ra ? ra : in[i], FactorKind::NeedReplication));
  for (; j < out.size(); ++j, rb = 0)
    if (out[j] != 1)
      outDims[j].push_back(rule.addFactor(rb ? rb : out[j], FactorKind::NeedReplication));
}

CostFn flopsPerResultElement(double perElement) {
  return [perElement](const OpSig&, const std::vector<TensorType>& results) {
    return perElement * numelD(results[0]);
  };
}

} // namespace shardc::ops
