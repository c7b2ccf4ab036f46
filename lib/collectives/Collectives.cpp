#include "shardc/collectives/Collectives.h"

#include "shardc/support/Error.h"

#include <algorithm>
#include <cstring>

namespace shardc {
namespace {

size_t axisOf(const Mesh& mesh, const std::string& axis) {
  auto i = mesh.axisIndex(axis);
  if (!i) throw Error("axis '" + axis + "' is not in the mesh " + mesh.str());
  return *i;
}

void checkAxes(const Mesh& mesh, const std::vector<std::string>& axes) {
  for (size_t i = 0; i < axes.size(); ++i) {
    axisOf(mesh, axes[i]);
    for (size_t j = 0; j < i; ++j)
      if (axes[j] == axes[i]) throw Error("axis '" + axes[i] + "' is listed twice");
  }
}

int64_t checkDim(const Tensor& x, int64_t dim) {
  auto d = normalizeAxis(dim, x.type().rank());
  if (!d) throw Error("dim " + std::to_string(dim) + " is out of range for " + x.type().str());
  return *d;
}

// Checks that `dim` of `x` splits into `n` equal pieces.
int64_t checkSplit(const Tensor& x, int64_t dim, int64_t n) {
  int64_t d = checkDim(x, dim);
  if (x.shape()[static_cast<size_t>(d)] % n)
    throw Error("dim " + std::to_string(d) + " of " + x.type().str() + " does not divide into " +
                std::to_string(n) + " pieces");
  return d;
}

// Piece `index` of `n` equal pieces of `x` along `dim`.
Tensor piece(const Tensor& x, int64_t dim, int64_t index, int64_t n) {
  TensorType t = x.type();
  int64_t len = t.shape[static_cast<size_t>(dim)] / n;
  t.shape[static_cast<size_t>(dim)] = len;
  Tensor out(t);
  copyAlong(x, index * len, out, 0, dim, len);
  return out;
}

Tensor concat(const std::vector<Tensor>& pieces, int64_t dim) {
  TensorType t = pieces[0].type();
  t.shape[static_cast<size_t>(dim)] = 0;
  for (const Tensor& p : pieces)
    t.shape[static_cast<size_t>(dim)] += p.shape()[static_cast<size_t>(dim)];
  Tensor out(t);
  int64_t at = 0;
  for (const Tensor& p : pieces) {
    int64_t len = p.shape()[static_cast<size_t>(dim)];
    copyAlong(p, 0, out, at, dim, len);
    at += len;
  }
  return out;
}

// Elementwise sum of same-typed tensors, in order: floats in double, integers in int64,
// rounded once at the end.
Tensor sumInOrder(const std::vector<Tensor>& parts, double scale) {
  const TensorType& t = parts[0].type();
  if (isFloat(t.dtype)) {
    std::vector<double> acc = parts[0].toDoubles();
    for (size_t p = 1; p < parts.size(); ++p) {
      std::vector<double> v = parts[p].toDoubles();
      for (size_t i = 0; i < acc.size(); ++i)
        acc[i] += v[i];
    }
    if (scale != 1)
      for (double& a : acc)
        a *= scale;
    return Tensor::fromDoubles(t, acc);
  }
  if (scale != 1)
    throw Error("a sum of " + t.str() + " cannot be scaled by " + std::to_string(scale) +
                " (integers)");
  std::vector<int64_t> acc = parts[0].toInts();
  for (size_t p = 1; p < parts.size(); ++p) {
    std::vector<int64_t> v = parts[p].toInts();
    for (size_t i = 0; i < acc.size(); ++i)
      acc[i] += v[i];
  }
  return Tensor::fromInts(t, acc);
}

// Elements [begin, begin + len) of `x` in row-major order, as a 1-D tensor.
Tensor flatRange(const Tensor& x, int64_t begin, int64_t len) {
  Tensor out(TensorType{x.dtype(), {len}});
  size_t es = dtypeSize(x.dtype());
  if (len) std::memcpy(out.data(), x.data() + static_cast<size_t>(begin) * es, out.byteSize());
  return out;
}

} // namespace

Tensor Collectives::sum(const std::vector<Tensor>& parts,
                        const std::vector<std::string>& axes) const {
  bool scaled = std::find(axes.begin(), axes.end(), scaledAxis_) != axes.end();
  return sumInOrder(parts, scaled ? sumScale_ : 1);
}

int64_t Collectives::groupRank(const std::vector<std::string>& axes) const {
  checkAxes(mesh(), axes);
  std::vector<int64_t> coords = mesh().coordinates(device());
  int64_t rank = 0;
  for (const std::string& a : axes) {
    size_t i = axisOf(mesh(), a);
    rank = rank * mesh().axes()[i].size + coords[i];
  }
  return rank;
}

int64_t Collectives::groupSize(const std::vector<std::string>& axes) const {
  checkAxes(mesh(), axes);
  return mesh().groupSize(axes);
}

int64_t Collectives::groupDevice(const std::vector<std::string>& axes, int64_t rank) const {
  std::vector<int64_t> coords = mesh().coordinates(device());
  for (size_t k = axes.size(); k-- > 0;) {
    size_t i = axisOf(mesh(), axes[k]);
    coords[i] = rank % mesh().axes()[i].size;
    rank /= mesh().axes()[i].size;
  }
  return mesh().device(coords);
}

// Rank r sums the r-th contiguous range of the elements over the group, then every rank
// gathers all ranges: each element is summed by one rank only, so all ranks agree bitwise,
// and each device sends 2(n-1)/n of the tensor, as a ring all-reduce does.
Tensor Collectives::allReduce(const Tensor& x, const std::vector<std::string>& axes) {
  int64_t n = groupSize(axes), r = groupRank(axes), total = x.numel();
  auto begin = [&](int64_t q) { return total / n * q + std::min(q, total % n); };
  auto len = [&](int64_t q) { return begin(q + 1) - begin(q); };
  std::vector<Tensor> send;
  for (int64_t q = 0; q < n; ++q)
    send.push_back(flatRange(x, begin(q), len(q)));
  std::vector<TensorType> mine(static_cast<size_t>(n), TensorType{x.dtype(), {len(r)}});
  Tensor sum = this->sum(exchange(axes, send, mine), axes);

  std::vector<TensorType> ranges;
  for (int64_t q = 0; q < n; ++q)
    ranges.push_back(TensorType{x.dtype(), {len(q)}});
  std::vector<Tensor> all =
      exchange(axes, std::vector<Tensor>(static_cast<size_t>(n), sum), ranges);
  Tensor out(x.type());
  for (int64_t q = 0; q < n; ++q)
    if (len(q))
      std::memcpy(out.data() + static_cast<size_t>(begin(q)) * dtypeSize(x.dtype()),
                  all[static_cast<size_t>(q)].data(), all[static_cast<size_t>(q)].byteSize());
  return out;
}

Tensor Collectives::allGather(const Tensor& x, const std::vector<std::string>& axes, int64_t dim) {
  int64_t d = checkDim(x, dim), n = groupSize(axes);
  std::vector<Tensor> send(static_cast<size_t>(n), x);
  return concat(exchange(axes, send, std::vector<TensorType>(send.size(), x.type())), d);
}

Tensor Collectives::reduceScatter(const Tensor& x, const std::vector<std::string>& axes,
                                  int64_t dim) {
  int64_t n = groupSize(axes), d = checkSplit(x, dim, n);
  std::vector<Tensor> send;
  for (int64_t q = 0; q < n; ++q)
    send.push_back(piece(x, d, q, n));
  std::vector<TensorType> types(send.size(), send[0].type());
  return sum(exchange(axes, send, types), axes);
}

Tensor Collectives::allToAll(const Tensor& x, const std::vector<std::string>& axes,
                             int64_t splitDim, int64_t concatDim) {
  int64_t n = groupSize(axes), sd = checkSplit(x, splitDim, n), cd = checkDim(x, concatDim);
  std::vector<Tensor> send;
  for (int64_t q = 0; q < n; ++q)
    send.push_back(piece(x, sd, q, n));
  std::vector<TensorType> types(send.size(), send[0].type());
  return concat(exchange(axes, send, types), cd);
}

Tensor Collectives::permute(const Tensor& x, const std::vector<std::string>& axes,
                            const std::vector<int64_t>& pairs) {
  int64_t n = groupSize(axes), r = groupRank(axes);
  if (pairs.size() % 2) throw Error("pairs must list (source, target) ranks, got an odd count");
  std::vector<int64_t> sourceOf(static_cast<size_t>(n), -1), targetOf(sourceOf);
  for (size_t i = 0; i < pairs.size(); i += 2) {
    int64_t src = pairs[i], dst = pairs[i + 1];
    if (src < 0 || src >= n || dst < 0 || dst >= n)
      throw Error("pair (" + std::to_string(src) + ", " + std::to_string(dst) +
                  ") names a rank outside the group of " + std::to_string(n));
    if (targetOf[static_cast<size_t>(src)] >= 0 || sourceOf[static_cast<size_t>(dst)] >= 0)
      throw Error("pair (" + std::to_string(src) + ", " + std::to_string(dst) +
                  ") reuses a source or a target");
    targetOf[static_cast<size_t>(src)] = dst;
    sourceOf[static_cast<size_t>(dst)] = src;
  }
  TensorType none{x.dtype(), {0}};
  std::vector<Tensor> send(static_cast<size_t>(n), Tensor(none));
  std::vector<TensorType> types(static_cast<size_t>(n), none);
  int64_t target = targetOf[static_cast<size_t>(r)], source = sourceOf[static_cast<size_t>(r)];
  if (target >= 0) send[static_cast<size_t>(target)] = x;
  if (source >= 0) types[static_cast<size_t>(source)] = x.type();
  std::vector<Tensor> got = exchange(axes, send, types);
  return source >= 0 ? got[static_cast<size_t>(source)] : Tensor(x.type());
}

Tensor Collectives::shardSlice(const Tensor& x, const std::vector<std::string>& axes,
                               int64_t dim) const {
  int64_t n = groupSize(axes);
  return piece(x, checkSplit(x, dim, n), groupRank(axes), n);
}

} // namespace shardc
