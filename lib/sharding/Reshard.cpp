#include "Reshard.h"

#include "shardc/ir/Builder.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <optional>

namespace shardc {
namespace {

std::string joinAxes(const std::vector<std::string>& axes) {
  std::string s;
  for (const std::string& a : axes)
    s += (s.empty() ? "" : ",") + a;
  return s;
}

class Resharder {
public:
  Resharder(Builder& b, const Mesh& mesh) : b_(b), mesh_(mesh) {}

  // A collective on dimension `dim`; with `chunks` > 1 the dimension is viewed as
  // [chunks, rest] and the collective works on `rest`, chunk by chunk.
  Value* alongDim(std::string_view op, Value* v, int64_t dim, const std::vector<std::string>& axes,
                  int64_t chunks) {
    AttrDict attrs{{"axes", joinAxes(axes)}, {"group", mesh_.groupSize(axes)}};
    if (chunks == 1) {
      attrs.set("dim", dim);
      return b_.value(op, {v}, attrs);
    }
    Shape split = v->type().shape;
    auto d = static_cast<size_t>(dim);
    split[d] /= chunks;
    split.insert(split.begin() + static_cast<std::ptrdiff_t>(d), chunks);
    Value* viewed = b_.value("reshape", {v}, {{"shape", split}});
    attrs.set("dim", dim + 1);
    Value* done = b_.value(op, {viewed}, attrs);
    Shape back = done->type().shape;
    back[d] *= back[d + 1];
    back.erase(back.begin() + static_cast<std::ptrdiff_t>(d) + 1);
    return b_.value("reshape", {done}, {{"shape", back}});
  }

  Value* run(Value* v, TensorSharding cur, const TensorSharding& to) {
    size_t rank = cur.dims.size();
    // Pending sums: scattered onto a dimension that gains that axis next, else all-reduced.
    std::vector<std::string> reduce;
    for (const std::string& p : cur.partial) {
      bool scattered = false;
      for (size_t d = 0; d < rank && !scattered; ++d) {
        if (!extendsWith(cur, to, d, p)) continue;
        v = alongDim("reduce_scatter", v, static_cast<int64_t>(d), {p}, to.chunksOf(d));
        cur.dims[d].push_back(p);
        cur.setChunks(d, to.chunksOf(d));
        scattered = true;
      }
      if (!scattered) reduce.push_back(p);
    }
    cur.partial.clear();
    if (!reduce.empty())
      v = b_.value("all_reduce", {v},
                   {{"axes", joinAxes(reduce)}, {"group", mesh_.groupSize(reduce)}});

    // Axes a dimension loses: moved to another dimension by all-to-all or gathered.
    for (size_t d = 0; d < rank; ++d) {
      size_t keep = kept(cur, to, d);
      while (cur.dims[d].size() > keep) {
        if (cur.dims[d].size() == keep + 1 && cur.chunksOf(d) == 1) {
          const std::string axis = cur.dims[d].back();
          if (auto e = moveTarget(cur, to, d, axis)) {
            v = b_.value("all_to_all", {v},
                         {{"axes", axis},
                          {"group", mesh_.axisSize(axis)},
                          {"split_dim", static_cast<int64_t>(*e)},
                          {"concat_dim", static_cast<int64_t>(d)}});
            cur.dims[d].pop_back();
            cur.dims[*e].push_back(axis);
            continue;
          }
          if (auto swapped = permuteFor(cur, to, d, axis)) {
            v = permute(v, axis, *swapped);
            cur.dims[d].back() = *swapped;
            keep = kept(cur, to, d);
            continue;
          }
        }
        std::vector<std::string> lost(cur.dims[d].begin() + static_cast<std::ptrdiff_t>(keep),
                                      cur.dims[d].end());
        v = alongDim("all_gather", v, static_cast<int64_t>(d), lost, cur.chunksOf(d));
        cur.dims[d].resize(keep);
      }
      if (cur.dims[d].empty()) cur.setChunks(d, 1);
    }
    // Axes a dimension gains: each device keeps its own piece.
    for (size_t d = 0; d < rank; ++d) {
      if (to.dims[d].size() == cur.dims[d].size()) continue;
      std::vector<std::string> gained(
          to.dims[d].begin() + static_cast<std::ptrdiff_t>(cur.dims[d].size()), to.dims[d].end());
      v = alongDim("shard_slice", v, static_cast<int64_t>(d), gained, to.chunksOf(d));
      cur.dims[d] = to.dims[d];
      cur.setChunks(d, to.chunksOf(d));
    }
    SHARDC_CHECK(cur == to, "resharding did not reach its target");
    return v;
  }

private:
  // Length of the prefix of cur's axes on `d` that `to` keeps.
  static size_t kept(const TensorSharding& cur, const TensorSharding& to, size_t d) {
    const auto& x = cur.dims[d];
    const auto& y = to.dims[d];
    if (!x.empty() && !y.empty() && cur.chunksOf(d) != to.chunksOf(d)) return 0;
    size_t n = 0;
    while (n < x.size() && n < y.size() && x[n] == y[n])
      ++n;
    return n;
  }

  // `to` keeps everything `cur` has on `d` and adds `axis` next.
  static bool extendsWith(const TensorSharding& cur, const TensorSharding& to, size_t d,
                          const std::string& axis) {
    const auto& x = cur.dims[d];
    const auto& y = to.dims[d];
    return y.size() > x.size() && kept(cur, to, d) == x.size() && y[x.size()] == axis;
  }

  // A dimension other than `from` that gains `axis` next, unchunked.
  static std::optional<size_t> moveTarget(const TensorSharding& cur, const TensorSharding& to,
                                          size_t from, const std::string& axis) {
    for (size_t e = 0; e < cur.dims.size(); ++e)
      if (e != from && to.chunksOf(e) == 1 && cur.chunksOf(e) == 1 && extendsWith(cur, to, e, axis))
        return e;
    return std::nullopt;
  }

  // An axis of the same size that `to` wants in place of `axis` on `d` and that `cur` does
  // not use elsewhere: the pieces only change hands.
  std::optional<std::string> permuteFor(const TensorSharding& cur, const TensorSharding& to,
                                        size_t d, const std::string& axis) const {
    size_t at = cur.dims[d].size() - 1;
    if (to.dims[d].size() <= at || to.chunksOf(d) != 1) return std::nullopt;
    const std::string& want = to.dims[d][at];
    if (want == axis || mesh_.axisSize(want) != mesh_.axisSize(axis)) return std::nullopt;
    for (const auto& dim : cur.dims)
      if (std::find(dim.begin(), dim.end(), want) != dim.end()) return std::nullopt;
    return want;
  }

  // Over the group (axis, other): the device at (i, j) holds piece i and needs piece j, which
  // the device at (j, i) holds.
  Value* permute(Value* v, const std::string& axis, const std::string& other) {
    int64_t n = mesh_.axisSize(axis);
    std::vector<int64_t> pairs;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        pairs.push_back(j * n + i);
        pairs.push_back(i * n + j);
      }
    return b_.value("collective_permute", {v},
                    {{"axes", axis + "," + other}, {"group", n * n}, {"pairs", pairs}});
  }

  Builder& b_;
  const Mesh& mesh_;
};

} // namespace

Value* emitReshard(Builder& b, const Mesh& mesh, Value* local, TensorSharding from,
                   const TensorSharding& to) {
  if (from == to) return local;
  return Resharder(b, mesh).run(local, std::move(from), to);
}

} // namespace shardc
