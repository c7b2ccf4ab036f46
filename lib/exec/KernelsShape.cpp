// Data movement of any dtype: transpose, broadcast (outside the f32 lanes), slice, reverse,
// concat, split and pad, all as one strided copy (rows by memcpy where both sides are contiguous).
#include "Kernel.h"

#include "shardc/ir/IR.h"
#include "shardc/ir/Tensor.h"
#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace shardc {
namespace {

using Strides = std::vector<int64_t>;

Strides rowMajorOf(const Shape& s) {
  Strides r(s.size());
  int64_t acc = 1;
  for (size_t d = s.size(); d-- > 0;) {
    r[d] = acc;
    acc *= s[d];
  }
  return r;
}

// The destination and source offsets (in elements) of entry `index` of the index space made
// by the first `dims` dims of `shape`.
std::pair<int64_t, int64_t> outerOffsets(int64_t index, size_t dims, const Shape& shape,
                                         const Strides& ds, const Strides& ss) {
  int64_t doff = 0, soff = 0;
  for (size_t d = dims; d-- > 0;) {
    int64_t i = index % shape[d];
    index /= shape[d];
    doff += i * ds[d];
    soff += i * ss[d];
  }
  return {doff, soff};
}

// A transpose-like copy of 4-byte elements (the destination's rows contiguous, the source's
// not): the last two dims in 32 x 32 tiles, so reads and writes both stay in cache lines.
void tiledCopy(uint32_t* dst, const Strides& ds, const uint32_t* src, const Strides& ss,
               const Shape& shape, int threads) {
  constexpr int64_t kTile = 32;
  size_t rank = shape.size();
  int64_t rows = shape[rank - 2], cols = shape[rank - 1], planes = numel(shape) / (rows * cols);
  int64_t dr = ds[rank - 2], sr = ss[rank - 2], sc = ss[rank - 1];
  int64_t rowTiles = (rows + kTile - 1) / kTile;
  parallelRegion(threads, [&] {
#pragma omp for schedule(static)
    for (int64_t pt = 0; pt < planes * rowTiles; ++pt) {
      int64_t plane = pt / rowTiles, i0 = (pt % rowTiles) * kTile;
      auto [doff, soff] = outerOffsets(plane, rank - 2, shape, ds, ss);
      int64_t i1 = std::min(rows, i0 + kTile);
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        int64_t j1 = std::min(cols, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j)
            dst[doff + i * dr + j] = src[soff + i * sr + j * sc];
      }
    }
  });
}

// dst[sum i_d dstStrides_d] = src[sum i_d srcStrides_d] over the index space `shape`
// (strides in elements of `es` bytes). Rows of the last dim are split over threads.
void stridedCopy(uint8_t* dst, const Strides& ds, const uint8_t* src, const Strides& ss,
                 const Shape& shape, size_t es, int threads) {
  int64_t total = numel(shape);
  if (total == 0) return;
  size_t rank = shape.size();
  if (rank == 0) {
    std::memcpy(dst, src, es);
    return;
  }
  int64_t inner = shape[rank - 1], rows = total / inner;
  int64_t di = ds[rank - 1], si = ss[rank - 1];
  bool rowsContiguous = di == 1 && si == 1;
  int t = total * static_cast<int64_t>(es) >= (1 << 18) ? threads : 1;
  if (rank >= 2 && es == 4 && di == 1 && si != 1 && shape[rank - 2] >= 16 && inner >= 16)
    return tiledCopy(reinterpret_cast<uint32_t*>(dst), ds, reinterpret_cast<const uint32_t*>(src),
                     ss, shape, t);
  parallelRegion(t, [&] {
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      auto [doff, soff] = outerOffsets(row, rank - 1, shape, ds, ss);
      uint8_t* drow = dst + doff * static_cast<int64_t>(es);
      const uint8_t* srow = src + soff * static_cast<int64_t>(es);
      if (rowsContiguous) {
        std::memcpy(drow, srow, static_cast<size_t>(inner) * es);
      } else if (es == 4) {
        auto* d4 = reinterpret_cast<uint32_t*>(drow);
        auto* s4 = reinterpret_cast<const uint32_t*>(srow);
        for (int64_t j = 0; j < inner; ++j)
          d4[j * di] = s4[j * si];
      } else {
        for (int64_t j = 0; j < inner; ++j)
          std::memcpy(drow + j * di * static_cast<int64_t>(es),
                      srow + j * si * static_cast<int64_t>(es), es);
      }
    }
  });
}

// One strided copy per (input, output) piece, precomputed at bind time.
struct Piece {
  int64_t src, dst;       // value ids
  int64_t srcOff, dstOff; // element offsets
  Strides srcStrides, dstStrides;
  Shape shape;
};

class CopyKernel : public Kernel {
public:
  CopyKernel(std::vector<Piece> pieces, size_t es, std::vector<uint8_t> fill, int64_t fillId,
             int64_t fillCount)
      : pieces_(std::move(pieces)), es_(es), fill_(std::move(fill)), fillId_(fillId),
        fillCount_(fillCount) {}
  void run(ExecContext& ctx) override {
    if (fillId_ >= 0) fill(ctx.ptr[static_cast<size_t>(fillId_)]);
    for (const Piece& p : pieces_)
      stridedCopy(ctx.ptr[static_cast<size_t>(p.dst)] + p.dstOff * static_cast<int64_t>(es_),
                  p.dstStrides,
                  ctx.ptr[static_cast<size_t>(p.src)] + p.srcOff * static_cast<int64_t>(es_),
                  p.srcStrides, p.shape, es_, ctx.threads);
  }

private:
  // The pad value over the whole result: zeros by memset, any other value by doubling
  // copies of it (an element at a time cost a 9 MB pad 10 ms).
  void fill(uint8_t* p) const {
    auto bytes = static_cast<size_t>(fillCount_) * es_;
    if (bytes == 0) return;
    if (std::all_of(fill_.begin(), fill_.end(), [](uint8_t b) { return b == 0; })) {
      std::memset(p, 0, bytes);
      return;
    }
    std::memcpy(p, fill_.data(), es_);
    for (size_t done = es_; done < bytes; done *= 2)
      std::memcpy(p + done, p, std::min(done, bytes - done));
  }

  std::vector<Piece> pieces_;
  size_t es_;
  std::vector<uint8_t> fill_;
  int64_t fillId_, fillCount_;
};

} // namespace

std::unique_ptr<Kernel> bindShape(const BindArgs& a) {
  if (a.ops.size() != 1) return nullptr;
  const Op& op = a.anchor();
  const std::string& n = op.name();
  const Value* x = op.operand(0);
  const Shape& xs = x->type().shape;
  Strides xst = rowMajorOf(xs);
  size_t es = dtypeSize(x->type().dtype);
  int64_t xid = a.num.id(x);
  std::vector<Piece> pieces;
  auto whole = [&](const Value* v) { return a.num.id(v); };
  if (n == opname::kTranspose) {
    const auto& perm = op.attrs().getInts("perm");
    const Shape& out = op.result(0)->type().shape;
    Strides ss;
    for (int64_t p : perm)
      ss.push_back(xst[static_cast<size_t>(p)]);
    pieces.push_back({xid, whole(op.result(0)), 0, 0, ss, rowMajorOf(out), out});
  } else if (n == opname::kBroadcast) {
    const Shape& out = op.result(0)->type().shape;
    pieces.push_back(
        {xid, whole(op.result(0)), 0, 0, broadcastStrides(out, xs), rowMajorOf(out), out});
  } else if (n == opname::kReshape) { // the same flat order: read with the result's own strides
    const Shape& out = op.result(0)->type().shape;
    pieces.push_back({xid, whole(op.result(0)), 0, 0, rowMajorOf(out), rowMajorOf(out), out});
  } else if (n == opname::kSlice) {
    const auto &start = op.attrs().getInts("start"), &stride = op.attrs().getInts("stride");
    const Shape& out = op.result(0)->type().shape;
    Strides ss;
    int64_t off = 0;
    for (size_t d = 0; d < xs.size(); ++d) {
      off += start[d] * xst[d];
      ss.push_back(std::min(stride[d], std::max<int64_t>(xs[d], 1)) * xst[d]);
    }
    pieces.push_back({xid, whole(op.result(0)), off, 0, ss, rowMajorOf(out), out});
  } else if (n == opname::kReverse) { // read from the last element backwards along each axis
    Strides ss = xst;
    int64_t off = 0;
    for (int64_t ax : op.attrs().getInts("axes")) {
      auto d = static_cast<size_t>(*normalizeAxis(ax, static_cast<int64_t>(xs.size())));
      off += (std::max<int64_t>(xs[d], 1) - 1) * xst[d];
      ss[d] = -xst[d];
    }
    pieces.push_back({xid, whole(op.result(0)), off, 0, ss, xst, xs});
  } else if (n == opname::kConcat || n == opname::kSplit) {
    bool cat = n == opname::kConcat;
    const Shape& big = cat ? op.result(0)->type().shape : xs;
    auto axis = static_cast<size_t>(
        *normalizeAxis(op.attrs().getInt("axis"), static_cast<int64_t>(big.size())));
    Strides bst = rowMajorOf(big);
    int64_t at = 0;
    size_t count = cat ? op.numOperands() : op.numResults();
    for (size_t i = 0; i < count; ++i) {
      const Value* piece = cat ? op.operand(i) : op.result(i);
      const Shape& ps = piece->type().shape;
      Strides pst = rowMajorOf(ps);
      int64_t off = at * bst[axis];
      if (cat)
        pieces.push_back({whole(piece), whole(op.result(0)), 0, off, pst, bst, ps});
      else
        pieces.push_back({xid, whole(piece), off, 0, bst, pst, ps});
      at += ps[axis];
    }
  } else if (n == opname::kPad) {
    const auto &lo = op.attrs().getInts("low"), &in = op.attrs().getInts("interior");
    const Shape& out = op.result(0)->type().shape;
    Strides ost = rowMajorOf(out), ds;
    int64_t off = 0;
    for (size_t d = 0; d < xs.size(); ++d) {
      ds.push_back((in[d] + 1) * ost[d]);
      off += lo[d] * ost[d];
    }
    Tensor one(TensorType{x->type().dtype, {}});
    one.setDouble(0, op.attrs().getFloat("value"));
    std::vector<uint8_t> fill(one.data(), one.data() + one.byteSize());
    pieces.push_back({xid, whole(op.result(0)), 0, off, xst, ds, xs});
    return std::make_unique<CopyKernel>(std::move(pieces), es, std::move(fill), whole(op.result(0)),
                                        numel(out));
  } else {
    return nullptr;
  }
  return std::make_unique<CopyKernel>(std::move(pieces), es, std::vector<uint8_t>{}, -1, 0);
}

} // namespace shardc
