#include "FactorProjection.h"

#include <algorithm>

namespace shardc {

bool FactorSharding::compatibleWith(const FactorSharding& o) const {
  if (axes.empty() || o.axes.empty()) return true;
  if (chunks != o.chunks) return false;
  size_t n = std::min(axes.size(), o.axes.size());
  return std::equal(axes.begin(), axes.begin() + static_cast<std::ptrdiff_t>(n), o.axes.begin());
}

std::vector<std::optional<FactorSharding>> projectToFactors(const TensorSharding& s,
                                                            const ShardingRule::Dims& dims,
                                                            const ShardingRule& rule,
                                                            const Mesh& mesh) {
  std::vector<std::optional<FactorSharding>> out(rule.factorSizes.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    const std::vector<int>& fs = dims[d];
    for (int f : fs)
      out[static_cast<size_t>(f)] = FactorSharding{};
    if (d >= s.dims.size() || s.dims[d].empty() || fs.empty()) continue;
    // Leading factors that the chunk count covers whole stay unsharded; the first factor
    // left takes the remaining chunk count.
    int64_t chunks = s.chunksOf(d);
    size_t i = 0;
    while (i < fs.size() && chunks % rule.factorSizes[static_cast<size_t>(fs[i])] == 0)
      chunks /= rule.factorSizes[static_cast<size_t>(fs[i++])];
    if (i == fs.size() || rule.factorSizes[static_cast<size_t>(fs[i])] % chunks) continue;
    out[static_cast<size_t>(fs[i])]->chunks = chunks;
    int64_t left = rule.factorSizes[static_cast<size_t>(fs[i])] / chunks;
    for (const std::string& axis : s.dims[d]) {
      int64_t n = mesh.axisSize(axis);
      if (left == 1 && out[static_cast<size_t>(fs[i])]->chunks == 1 && i + 1 < fs.size())
        left = rule.factorSizes[static_cast<size_t>(fs[++i])];
      if (left % n) break;
      out[static_cast<size_t>(fs[i])]->axes.push_back(axis);
      left /= n;
    }
  }
  return out;
}

TensorSharding projectToTensor(const std::vector<FactorSharding>& factors,
                               const ShardingRule::Dims& dims, const ShardingRule& rule,
                               const Mesh& mesh) {
  TensorSharding s = TensorSharding::replicated(static_cast<int64_t>(dims.size()));
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t chunks = 1;
    bool whole = true; // every factor so far is fully split (or none is split yet)
    for (int f : dims[d]) {
      const FactorSharding& fs = factors[static_cast<size_t>(f)];
      int64_t size = rule.factorSizes[static_cast<size_t>(f)];
      if (fs.axes.empty()) {
        if (!s.dims[d].empty()) break; // nothing may follow a split factor but whole ones
        chunks *= size;
        continue;
      }
      if (!whole || (!s.dims[d].empty() && fs.chunks != 1)) break;
      if (s.dims[d].empty()) chunks *= fs.chunks;
      for (const std::string& a : fs.axes)
        s.dims[d].push_back(a);
      whole = mesh.groupSize(fs.axes) * fs.chunks == size;
    }
    s.setChunks(d, s.dims[d].empty() ? 1 : chunks);
  }
  return s;
}

} // namespace shardc
