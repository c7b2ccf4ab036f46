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
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

std::vector<int64_t> broadcastIndexMap(const Shape& out, const Shape& in) {
  int64_t n = numel(out);
  std::vector<int64_t> map(static_cast<size_t>(n));
  size_t r = out.size(), off = r - in.size();
  // Stride of each output dimension in the input; 0 where the input broadcasts.
  std::vector<int64_t> inStrides = rowMajorStrides(in), strides(r, 0);
  for (size_t i = off; i < r; ++i) strides[i] = in[i - off] == 1 ? 0 : inStrides[i - off];
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

std::string axesAttr(const OpSig& sig, const char* name, int64_t rank,
                     std::vector<int64_t>& axes) {
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
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + types[i].str();
  return s;
}

CostFn flopsPerResultElement(double perElement) {
  return [perElement](const OpSig&, const std::vector<TensorType>& results) {
    return perElement * numelD(results[0]);
  };
}

} // namespace shardc::ops
