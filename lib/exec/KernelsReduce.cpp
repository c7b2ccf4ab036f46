// reduce_sum, reduce_mean, reduce_max, reduce_min over any axes, f32. The shape is viewed as
// [outer, reduced, inner] runs: trailing axes reduce row by row, leading axes by adding rows
// (a bias gradient), and anything else walks the reduced index space per output element in
// contiguous runs of its trailing reduced axes (a batch norm's statistics over N, H and W).
// Sums accumulate blocks of float partial sums in double, so that a sum over 10^5 elements
// (a batch norm's statistics, a bias gradient over many tokens) keeps float's precision
// rather than losing digits with every addition.
// Row and column reductions may take an elementwise prologue (Fusion.cpp) that makes their
// operand block by block, so the operand is never stored. A row sum of a one-hot selection,
// where(iota == label, x, 0) (a cross-entropy's pick of each label's log-probability, and a
// row sum of its gradient), reads the one element per row that can be nonzero.
#include "Kernel.h"
#include "LaneProgram.h"
#include "VecMath.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <omp.h>
#include <vector>

namespace shardc {
namespace {

enum class Kind { Sum, Mean, Max, Min };

template <class T, class U> SHARDC_INLINE T combine(Kind k, T acc, U x) {
  switch (k) {
  case Kind::Max:
    return x > acc || x != x ? x : acc;
  case Kind::Min:
    return x < acc || x != x ? x : acc;
  default:
    return acc + x;
  }
}

float initial(Kind k) {
  return k == Kind::Max   ? -std::numeric_limits<float>::infinity()
         : k == Kind::Min ? std::numeric_limits<float>::infinity()
                          : 0.0f;
}

// Elements summed in float before the running sum (in double) takes them: long enough for
// the vector lanes, short enough that float's rounding stays near one ulp.
constexpr int64_t kSumBlock = 256;

SHARDC_INLINE double reduceRowLoop(Kind k, const float* x, int64_t n) {
  if (k == Kind::Sum || k == Kind::Mean) {
    double total = 0;
    for (int64_t b = 0; b < n; b += kSumBlock) {
      int64_t e = std::min(n, b + kSumBlock);
      float acc = 0;
#pragma omp simd reduction(+ : acc)
      for (int64_t j = b; j < e; ++j)
        acc += x[j];
      total += acc;
    }
    return total;
  }
  float acc = initial(k);
  for (int64_t j = 0; j < n; ++j)
    acc = combine(k, acc, x[j]);
  return acc;
}
SHARDC_VECTOR_VERSIONS(double, reduceRow, (Kind k, const float* x, int64_t n), (k, x, n))

// One loop per kind: with the kind's switch inside, the loop does not vectorize.
SHARDC_INLINE void combineRowLoop(Kind k, double* __restrict acc, const float* x, int64_t n) {
  if (k == Kind::Max)
    for (int64_t j = 0; j < n; ++j)
      acc[j] = combine(Kind::Max, acc[j], x[j]);
  else if (k == Kind::Min)
    for (int64_t j = 0; j < n; ++j)
      acc[j] = combine(Kind::Min, acc[j], x[j]);
  else
    for (int64_t j = 0; j < n; ++j)
      acc[j] += x[j];
}
SHARDC_VECTOR_VERSIONS(void, combineRow,
                       (Kind k, double* __restrict acc, const float* x, int64_t n), (k, acc, x, n))

class ReduceKernel : public Kernel {
public:
  explicit ReduceKernel(const BindArgs& a) {
    const Op& op = a.anchor();
    const std::string& n = op.name();
    kind_ = n == opname::kReduceSum    ? Kind::Sum
            : n == opname::kReduceMean ? Kind::Mean
            : n == opname::kReduceMax  ? Kind::Max
                                       : Kind::Min;
    shape_ = op.operand(0)->type().shape;
    size_t rank = shape_.size();
    reduced_.assign(rank, false);
    for (int64_t ax : op.attrs().getInts("axes"))
      reduced_[static_cast<size_t>(*normalizeAxis(ax, static_cast<int64_t>(rank)))] = true;
    count_ = 1;
    for (size_t d = 0; d < rank; ++d)
      if (reduced_[d]) count_ *= shape_[d];
    // Leading block [0, p) reduced and the rest kept, or the rest reduced.
    size_t p = 0;
    while (p < rank && reduced_[p] == reduced_[0])
      ++p;
    bool twoRuns = true;
    for (size_t d = p; d < rank; ++d)
      twoRuns = twoRuns && reduced_[d] != reduced_[0];
    int64_t head = 1, tail = 1;
    for (size_t d = 0; d < rank; ++d)
      (d < p ? head : tail) *= shape_[d];
    if (rank == 0 || count_ == numel(shape_)) {
      mode_ = Mode::Rows; // everything reduced: one row
      rows_ = 1;
      n_ = numel(shape_);
    } else if (twoRuns && !reduced_[0]) {
      mode_ = Mode::Rows;
      rows_ = head;
      n_ = tail;
    } else if (twoRuns && reduced_[0]) {
      mode_ = Mode::Columns;
      rows_ = head;
      n_ = tail;
      // One accumulator per thread the device runs (CompiledFunction sets OpenMP's count
      // before binding), so that a step allocates nothing.
      partial_.assign(static_cast<size_t>(omp_get_max_threads() * n_), 0.0);
    } else {
      mode_ = Mode::General;
      indexGeneral();
    }
    x_ = a.num.id(op.operand(0));
    y_ = a.num.id(op.result(0));
    if (a.ops.size() > 1) {
      if (mode_ == Mode::General || kind_ == Kind::Max || kind_ == Kind::Min)
        throw Error("step '" + n + "': an elementwise prologue needs a sum or mean over " +
                    "leading or trailing axes");
      std::vector<const Op*> pro(a.ops.begin(), a.ops.end() - 1);
      prologue_ = std::make_unique<LaneProgram>(a, pro, kChunk);
      xSlot_ = prologue_->slot(op.operand(0));
      if (mode_ == Mode::Rows && count_ == shape_.back() && numel(shape_) > 0)
        findOneHot(a, *op.operand(0));
    }
  }

  void run(ExecContext& ctx) override {
    const float* x = reinterpret_cast<const float*>(ctx.ptr[static_cast<size_t>(x_)]);
    float* y = reinterpret_cast<float*>(ctx.ptr[static_cast<size_t>(y_)]);
    float scale = kind_ == Kind::Mean ? 1.0f / static_cast<float>(count_) : 1.0f;
    int64_t total = numel(shape_);
    int t = total >= (1 << 15) ? ctx.threads : 1;
    if (mode_ == Mode::Columns && partial_.size() < static_cast<size_t>(t * n_))
      partial_.assign(static_cast<size_t>(t * n_), 0.0); // more threads than at bind time
    if (label_ >= 0) {
      pickRows(ctx, y, scale);
    } else if (prologue_) {
      withPrologue(ctx, y, scale, t);
    } else if (mode_ == Mode::Rows) {
      parallelRegion(t, [&] {
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows_; ++r)
          y[r] = static_cast<float>(reduceRow(kind_, x + r * n_, n_) * scale);
      });
    } else if (mode_ == Mode::Columns) {
      // Threads take row ranges (each streams one contiguous block) into their own
      // accumulators, then column ranges of the result combine them.
      parallelRegion(t, [&] {
        int nt = omp_get_num_threads(), me = omp_get_thread_num();
        double* acc = partial_.data() + me * n_;
        std::fill(acc, acc + n_, initial(kind_));
        for (int64_t r = rows_ * me / nt; r < rows_ * (me + 1) / nt; ++r)
          combineRow(kind_, acc, x + r * n_, n_);
#pragma omp barrier
        combineColumns(y, scale, nt, me);
      });
    } else {
      general(x, y, scale, t);
    }
  }

private:
  enum class Mode { Rows, Columns, General };
  static constexpr int64_t kChunk = 1024; // prologue elements per evaluation

  // Sets label_ when the reduced operand (made in the step) is where(iota == label, x, 0)
  // with the iota counting along the reduced last axis and one stored integer label per row,
  // and the step stores nothing else (picking one element per row would leave the rest of a
  // stored intermediate unwritten).
  void findOneHot(const BindArgs& a, const Value& reduced) {
    for (const Op* o : a.ops)
      for (size_t r = 0; o != &a.anchor() && r < o->numResults(); ++r)
        if (a.stored(o->result(r))) return;
    auto inStep = [&](const Value* v) {
      const Op* d = v->definingOp();
      return d && std::find(a.ops.begin(), a.ops.end(), d) != a.ops.end() ? d : nullptr;
    };
    const Op* w = inStep(&reduced);
    if (!w || w->name() != opname::kWhere || !isZero(a, w->operand(2), inStep)) return;
    const Op* c = inStep(w->operand(0));
    if (!c || c->name() != opname::kCompare || c->attrs().getString("direction") != "eq") return;
    int64_t last = static_cast<int64_t>(shape_.size()) - 1;
    for (int side = 0; side < 2; ++side) {
      const Op* iota = c->operand(side)->definingOp(); // in the step, or a bind-time constant
      const Value* label = c->operand(1 - side);
      const TensorType& lt = label->type();
      if (!iota || iota->name() != opname::kIota || iota->result(0)->type().shape != shape_ ||
          *normalizeAxis(iota->attrs().getInt("axis"), last + 1) != last ||
          (lt.dtype != DType::I64 && lt.dtype != DType::I32) || inStep(label) || !a.stored(label) ||
          lt.rank() != last + 1 || lt.shape.back() != 1 ||
          !std::equal(shape_.begin(), shape_.end() - 1, lt.shape.begin()))
        continue;
      label_ = a.num.id(label);
      labelIs64_ = lt.dtype == DType::I64;
      return;
    }
  }

  // A constant zero, perhaps broadcast or reshaped in the step.
  template <class InStep> static bool isZero(const BindArgs& a, const Value* v, InStep&& inStep) {
    while (const Op* d = inStep(v)) {
      if (d->name() != opname::kBroadcast && d->name() != opname::kReshape) return false;
      v = d->operand(0);
    }
    auto it = a.constants.find(a.num.id(v));
    if (it == a.constants.end()) return false;
    for (int64_t i = 0; i < it->second.numel(); ++i)
      if (it->second.getDouble(i) != 0) return false;
    return true;
  }

  // y[r] = x[r, label[r]] (0 when the label is out of range), x made by the prologue one
  // element at a time.
  void pickRows(ExecContext& ctx, float* y, float scale) {
    prologue_->prepare(ctx);
    const uint8_t* label = ctx.ptr[static_cast<size_t>(label_)];
    for (int64_t r = 0; r < rows_; ++r) {
      int64_t j = labelIs64_ ? reinterpret_cast<const int64_t*>(label)[r]
                             : reinterpret_cast<const int32_t*>(label)[r];
      // 0 + x, as the full sum starting from +0 gives for x = -0.
      y[r] = j >= 0 && j < n_
                 ? (0.0f + prologue_->evalBlock(ctx, r * n_ + j, 1, 0)[xSlot_][0]) * scale
                 : 0.0f;
    }
  }

  // The operand's elements [p, p + len) from the prologue, chunk by chunk, each passed to
  // `take(chunk, offset in the range, length)`.
  template <class F>
  void produce(const ExecContext& ctx, int me, int64_t p, int64_t len, F&& take) {
    for (int64_t j = 0; j < len; j += kChunk) {
      int64_t c = std::min(kChunk, len - j);
      take(prologue_->evalBlock(ctx, p + j, c, me)[xSlot_], j, c);
    }
  }

  void withPrologue(ExecContext& ctx, float* y, float scale, int t) {
    prologue_->prepare(ctx);
    if (mode_ == Mode::Rows && n_ < kChunk) {
      // Short rows (a softmax gradient's sums over 128 keys): whole rows per evaluation.
      int64_t per = kChunk / n_, blocks = (rows_ + per - 1) / per;
      parallelRegion(t, [&] {
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < blocks; ++blk) {
          int64_t r0 = blk * per, nr = std::min(per, rows_ - r0);
          const float* v =
              prologue_->evalBlock(ctx, r0 * n_, nr * n_, omp_get_thread_num())[xSlot_];
          for (int64_t i = 0; i < nr; ++i)
            y[r0 + i] = static_cast<float>(reduceRow(kind_, v + i * n_, n_) * scale);
        }
      });
      return;
    }
    if (mode_ == Mode::Rows) {
      parallelRegion(t, [&] {
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows_; ++r) {
          double acc = 0;
          produce(ctx, omp_get_thread_num(), r * n_, n_,
                  [&](const float* v, int64_t, int64_t c) { acc += reduceRow(kind_, v, c); });
          y[r] = static_cast<float>(acc * scale);
        }
      });
      return;
    }
    // Threads take row ranges into their own accumulators, the prologue evaluated in chunks
    // that may span rows (a short row is not a chunk of its own), then column ranges of the
    // result combine them.
    parallelRegion(t, [&] {
      int nt = omp_get_num_threads(), me = omp_get_thread_num();
      double* acc = partial_.data() + me * n_;
      std::fill(acc, acc + n_, 0.0);
      int64_t r0 = rows_ * me / nt, r1 = rows_ * (me + 1) / nt;
      produce(ctx, me, r0 * n_, (r1 - r0) * n_, [&](const float* v, int64_t j, int64_t c) {
        for (int64_t col = j % n_, done = 0; done < c; col = 0) {
          int64_t len = std::min(n_ - col, c - done);
          combineRow(kind_, acc + col, v + done, len);
          done += len;
        }
      });
#pragma omp barrier
      combineColumns(y, scale, nt, me);
    });
  }

  // y[j] for this thread's range of columns j: the threads' accumulators combined.
  void combineColumns(float* y, float scale, int nt, int me) const {
    for (int64_t j = n_ * me / nt; j < n_ * (me + 1) / nt; ++j) {
      double v = partial_[static_cast<size_t>(j)];
      for (int k = 1; k < nt; ++k)
        v = combine(kind_, v, partial_[static_cast<size_t>(k * n_ + j)]);
      y[j] = static_cast<float>(v * scale);
    }
  }

  // The General mode's index tables: the offset of each output's first element, and of each
  // run (the trailing reduced axes, contiguous) relative to it.
  void indexGeneral() {
    size_t rank = shape_.size();
    std::vector<int64_t> strides(rank);
    for (int64_t d = static_cast<int64_t>(rank) - 1, st = 1; d >= 0; --d) {
      strides[static_cast<size_t>(d)] = st;
      st *= shape_[static_cast<size_t>(d)];
    }
    size_t tail = rank;
    run_ = 1;
    while (tail > 0 && reduced_[tail - 1])
      run_ *= shape_[--tail];
    // Offsets of every combination of the axes in `axes` (the last one fastest).
    auto offsets = [&](const std::vector<size_t>& axes) {
      std::vector<int64_t> out{0};
      for (size_t d : axes) {
        std::vector<int64_t> next;
        next.reserve(out.size() * static_cast<size_t>(shape_[d]));
        for (int64_t o : out)
          for (int64_t i = 0; i < shape_[d]; ++i)
            next.push_back(o + i * strides[d]);
        out = std::move(next);
      }
      return out;
    };
    std::vector<size_t> kept, runs;
    for (size_t d = 0; d < tail; ++d)
      (reduced_[d] ? runs : kept).push_back(d);
    outBase_ = offsets(kept);
    runStart_ = offsets(runs);
  }

  void general(const float* x, float* y, float scale, int t) const {
    int64_t outs = static_cast<int64_t>(outBase_.size());
    parallelRegion(t, [&] {
#pragma omp for schedule(static)
      for (int64_t o = 0; o < outs; ++o) {
        const float* base = x + outBase_[static_cast<size_t>(o)];
        double v = initial(kind_);
        for (int64_t start : runStart_)
          v = kind_ == Kind::Sum || kind_ == Kind::Mean
                  ? v + reduceRow(kind_, base + start, run_)
                  : combine(kind_, v, reduceRow(kind_, base + start, run_));
        y[o] = static_cast<float>(v * scale);
      }
    });
  }

  Kind kind_;
  Shape shape_;
  std::vector<bool> reduced_;
  int64_t count_ = 1, rows_ = 1, n_ = 1;
  Mode mode_ = Mode::General;
  int64_t x_ = -1, y_ = -1;
  std::unique_ptr<LaneProgram> prologue_;
  int xSlot_ = -1;
  int64_t label_ = -1; // a one-hot selection's labels (findOneHot), else -1
  bool labelIs64_ = true;
  std::vector<int64_t> outBase_, runStart_; // Mode::General (indexGeneral)
  int64_t run_ = 1;
  std::vector<double> partial_; // a column reduction's accumulators per thread
};

} // namespace

std::unique_ptr<Kernel> bindReduce(const BindArgs& a) {
  return std::make_unique<ReduceKernel>(a);
}

} // namespace shardc
