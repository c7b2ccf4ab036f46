// softmax, log_softmax and layer_norm in f32: rows split over threads, each row in vector
// loops (max, sum of exponentials, scale; mean, variance, normalize).
#include "Kernel.h"
#include "LaneProgram.h"
#include "VecMath.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <omp.h>

namespace shardc {
namespace {

SHARDC_INLINE void softmaxRowLoop(const float* x, float* y, int64_t n, bool logForm) {
  float m = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < n; ++j)
    m = x[j] > m ? x[j] : m;
  if (m == -std::numeric_limits<float>::infinity()) m = 0; // a row of -inf: NaN as in double
  float s = 0;
  if (logForm) {
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < n; ++j)
      s += vm::exp(x[j] - m);
    // (x - m) - log s, not x - (m + log s): m + log s rounds to m's precision.
    float l = std::log(s);
    for (int64_t j = 0; j < n; ++j)
      y[j] = (x[j] - m) - l;
    return;
  }
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < n; ++j) {
    y[j] = vm::exp(x[j] - m);
    s += y[j];
  }
  float r = 1.0f / s;
  for (int64_t j = 0; j < n; ++j)
    y[j] *= r;
}
SHARDC_VECTOR_VERSIONS(void, softmaxRow, (const float* x, float* y, int64_t n, bool logForm),
                       (x, y, n, logForm))

// Rows shorter than a vector (attention over a few keys), 16 at a time with a row per lane:
// the exponentials run 16 wide instead of one element per call (256 rows of 8: 13.7 -> 3 us).
// `len[i]` elements of lane i's row are its row; the rest of it is written as 0 (a masked tail).
constexpr int64_t kShortRow = 16, kRowLanes = 16;
SHARDC_INLINE void shortSoftmaxLoop(const float* x, float* y, int64_t n, const int32_t* len,
                                    bool logForm) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float t[kShortRow][kRowLanes], m[kRowLanes], s[kRowLanes];
  for (int64_t i = 0; i < kRowLanes; ++i)
    for (int64_t j = 0; j < n; ++j)
      t[j][i] = x[i * n + j];
#pragma omp simd
  for (int64_t i = 0; i < kRowLanes; ++i) {
    m[i] = kNegInf;
    s[i] = 0;
  }
  for (int64_t j = 0; j < n; ++j)
#pragma omp simd
    for (int64_t i = 0; i < kRowLanes; ++i) {
      float v = j < len[i] ? t[j][i] : kNegInf;
      m[i] = v > m[i] ? v : m[i];
    }
#pragma omp simd
  for (int64_t i = 0; i < kRowLanes; ++i)
    m[i] = m[i] == kNegInf ? 0 : m[i]; // a row of -inf: NaN as in double
  for (int64_t j = 0; j < n; ++j)
#pragma omp simd
    for (int64_t i = 0; i < kRowLanes; ++i) {
      float e = j < len[i] ? vm::exp(t[j][i] - m[i]) : 0.0f;
      s[i] += e;
      if (!logForm) t[j][i] = e;
    }
  for (int64_t i = 0; i < kRowLanes; ++i)
    s[i] = logForm ? std::log(s[i]) : 1.0f / s[i];
  for (int64_t j = 0; j < n; ++j)
#pragma omp simd
    for (int64_t i = 0; i < kRowLanes; ++i)
      t[j][i] = logForm ? (t[j][i] - m[i]) - s[i] : t[j][i] * s[i];
  for (int64_t i = 0; i < kRowLanes; ++i)
    for (int64_t j = 0; j < n; ++j)
      y[i * n + j] = t[j][i];
}
SHARDC_VECTOR_VERSIONS(void, shortSoftmax,
                       (const float* x, float* y, int64_t n, const int32_t* len, bool logForm),
                       (x, y, n, len, logForm))

SHARDC_INLINE void layerNormRowLoop(const float* x, float* y, int64_t n, float eps,
                                    const float* scale, const float* bias) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < n; ++j)
    s += x[j];
  float mean = s / static_cast<float>(n), v = 0;
#pragma omp simd reduction(+ : v)
  for (int64_t j = 0; j < n; ++j)
    v += (x[j] - mean) * (x[j] - mean);
  float rstd = 1.0f / std::sqrt(v / static_cast<float>(n) + eps);
  if (scale && bias)
    for (int64_t j = 0; j < n; ++j)
      y[j] = (x[j] - mean) * rstd * scale[j] + bias[j];
  else if (scale)
    for (int64_t j = 0; j < n; ++j)
      y[j] = (x[j] - mean) * rstd * scale[j];
  else
    for (int64_t j = 0; j < n; ++j)
      y[j] = (x[j] - mean) * rstd;
}
SHARDC_VECTOR_VERSIONS(void, layerNormRow,
                       (const float* x, float* y, int64_t n, float eps, const float* scale,
                        const float* bias),
                       (x, y, n, eps, scale, bias))

// softmax(where(mask, -inf, x)) over the last dim with a mask of the last two dims only (a
// causal or padding mask): when, at run time, every mask row keeps a prefix of its row and
// masks the rest, the softmax runs over the prefix alone and the rest is zero, so masked
// scores are neither read nor exponentiated. Any other mask takes the general path.
struct PrefixMask {
  int64_t cond = -1, x = -1; // value ids: the i1 mask and the scores
  int64_t maskRows = 1;      // mask rows, cycled over the rows of x (1: one row for all)
  std::vector<int64_t> keep; // per mask row: elements kept, filled per run

  static std::unique_ptr<PrefixMask> match(const BindArgs& a, const Op& where, int64_t n) {
    const Value *c = where.operand(0), *fill = where.operand(1), *x = where.operand(2);
    auto k = a.constants.find(a.num.id(fill));
    if (c->type().dtype != DType::I1 || x->type() != where.result(0)->type() ||
        k == a.constants.end() || k->second.numel() != 1 || !std::isinf(k->second.getDouble(0)) ||
        k->second.getDouble(0) > 0)
      return nullptr;
    const Shape& cs = c->type().shape;
    if (cs.empty() || cs.back() != n) return nullptr;
    for (size_t d = 0; d + 2 < cs.size(); ++d)
      if (cs[d] != 1) return nullptr;
    const Shape& xs = x->type().shape;
    int64_t rows = cs.size() >= 2 ? cs[cs.size() - 2] : 1;
    if (rows != 1 && (xs.size() < 2 || xs[xs.size() - 2] != rows)) return nullptr;
    auto m = std::make_unique<PrefixMask>();
    m->cond = a.num.id(c);
    m->x = a.num.id(x);
    m->maskRows = rows;
    m->keep.resize(static_cast<size_t>(rows));
    return m;
  }

  // Reads the mask: whether every row is a kept prefix (at least one element) and masked rest.
  bool prefixes(const ExecContext& ctx, int64_t n) {
    const uint8_t* c = ctx.ptr[static_cast<size_t>(cond)];
    for (int64_t i = 0; i < maskRows; ++i) {
      const uint8_t* row = c + i * n;
      int64_t l = 0;
      while (l < n && !row[l])
        ++l;
      for (int64_t j = l; j < n; ++j)
        if (!row[j]) return false;
      if (l == 0) return false; // every score masked: NaN, as the general path computes
      keep[static_cast<size_t>(i)] = l;
    }
    return true;
  }
};

// Rows of `n` elements, `inner` apart (inner > 1: the axis is not the last dim; the row is
// gathered into a buffer first).
class RowKernel : public Kernel {
public:
  explicit RowKernel(const BindArgs& a) {
    const Op& op = a.anchor();
    if (a.ops.size() == 2 && op.name() == opname::kSoftmax && a.ops[0]->name() == opname::kWhere)
      masked_ = PrefixMask::match(a, *a.ops[0], op.operand(0)->type().shape.back());
    if (a.ops.size() > 1) {
      // An elementwise prologue makes the rows (Fusion.cpp): one row per evaluation.
      std::vector<const Op*> pro(a.ops.begin(), a.ops.end() - 1);
      prologue_ = std::make_unique<LaneProgram>(a, pro, op.operand(0)->type().shape.back());
      xSlot_ = prologue_->slot(op.operand(0));
    }
    kind_ = op.name();
    const Shape& s = op.operand(0)->type().shape;
    int64_t axis = *normalizeAxis(op.attrs().getInt("axis"), static_cast<int64_t>(s.size()));
    outer_ = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer_ *= s[static_cast<size_t>(d)];
    n_ = 1;
    inner_ = 1;
    if (kind_ == opname::kLayerNorm) {
      for (size_t d = static_cast<size_t>(axis); d < s.size(); ++d)
        n_ *= s[d];
      eps_ = static_cast<float>(op.attrs().getFloat("epsilon"));
      if (op.numOperands() > 1) scale_ = a.num.id(op.operand(1));
      if (op.numOperands() > 2) bias_ = a.num.id(op.operand(2));
    } else {
      n_ = s[static_cast<size_t>(axis)];
      for (size_t d = static_cast<size_t>(axis) + 1; d < s.size(); ++d)
        inner_ *= s[d];
    }
    x_ = a.num.id(op.operand(0));
    y_ = a.num.id(op.result(0));
  }

  void run(ExecContext& ctx) override {
    const float* x = reinterpret_cast<const float*>(ctx.ptr[static_cast<size_t>(x_)]);
    float* y = reinterpret_cast<float*>(ctx.ptr[static_cast<size_t>(y_)]);
    const float* scale = scale_ >= 0
                             ? reinterpret_cast<const float*>(ctx.ptr[static_cast<size_t>(scale_)])
                             : nullptr;
    const float* bias =
        bias_ >= 0 ? reinterpret_cast<const float*>(ctx.ptr[static_cast<size_t>(bias_)]) : nullptr;
    int64_t rows = outer_ * inner_;
    if (n_ == 0 || rows == 0) return;
    int t = rows * n_ >= (1 << 14) ? ctx.threads : 1;
    bool logForm = kind_ == opname::kLogSoftmax, norm = kind_ == opname::kLayerNorm;
    bool prefix = masked_ && masked_->prefixes(ctx, n_);
    if (!norm && n_ < kShortRow && (prefix || (!prologue_ && inner_ == 1))) {
      const float* src =
          prefix ? reinterpret_cast<const float*>(ctx.ptr[static_cast<size_t>(masked_->x)]) : x;
      shortRows(src, y, rows, prefix ? masked_.get() : nullptr, logForm, t);
      return;
    }
    if (prefix) {
      const float* s = reinterpret_cast<const float*>(ctx.ptr[static_cast<size_t>(masked_->x)]);
      const std::vector<int64_t>& keep = masked_->keep;
      parallelRegion(t, [&] {
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
          int64_t l = keep[static_cast<size_t>(r % masked_->maskRows)];
          softmaxRow(s + r * n_, y + r * n_, l, false);
          std::fill(y + r * n_ + l, y + (r + 1) * n_, 0.0f);
        }
      });
      return;
    }
    if (prologue_) {
      prologue_->prepare(ctx);
      parallelRegion(t, [&] {
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
          int me = omp_get_thread_num();
          float* const* slots = prologue_->evalBlock(ctx, r * n_, n_, me);
          if (norm)
            layerNormRow(slots[xSlot_], y + r * n_, n_, eps_, scale, bias);
          else
            softmaxRow(slots[xSlot_], y + r * n_, n_, logForm);
        }
      });
      return;
    }
    if (inner_ == 1) {
      parallelRegion(t, [&] {
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
          if (norm)
            layerNormRow(x + r * n_, y + r * n_, n_, eps_, scale, bias);
          else
            softmaxRow(x + r * n_, y + r * n_, n_, logForm);
        }
      });
      return;
    }
    parallelRegion(t, [&] {
      std::vector<float> in(static_cast<size_t>(n_)), out(static_cast<size_t>(n_));
#pragma omp for schedule(static)
      for (int64_t r = 0; r < rows; ++r) {
        int64_t o = r / inner_, i = r % inner_;
        const float* px = x + o * n_ * inner_ + i;
        for (int64_t j = 0; j < n_; ++j)
          in[static_cast<size_t>(j)] = px[j * inner_];
        softmaxRow(in.data(), out.data(), n_, logForm);
        float* py = y + o * n_ * inner_ + i;
        for (int64_t j = 0; j < n_; ++j)
          py[j * inner_] = out[static_cast<size_t>(j)];
      }
    });
  }

private:
  // Contiguous rows of n_ < kShortRow elements, a row's first keep elements under a prefix
  // mask: blocks of kRowLanes rows, the last partial block row by row.
  void shortRows(const float* x, float* y, int64_t rows, const PrefixMask* mask, bool logForm,
                 int threads) const {
    int64_t blocks = (rows + kRowLanes - 1) / kRowLanes;
    parallelRegion(threads, [&] {
      int32_t len[kRowLanes];
#pragma omp for schedule(static)
      for (int64_t b = 0; b < blocks; ++b) {
        int64_t r0 = b * kRowLanes, lanes = std::min(kRowLanes, rows - r0);
        for (int64_t i = 0; i < lanes; ++i)
          len[i] = static_cast<int32_t>(
              mask ? mask->keep[static_cast<size_t>((r0 + i) % mask->maskRows)] : n_);
        if (lanes == kRowLanes) {
          shortSoftmax(x + r0 * n_, y + r0 * n_, n_, len, logForm);
          continue;
        }
        for (int64_t i = 0; i < lanes; ++i) {
          float* row = y + (r0 + i) * n_;
          softmaxRow(x + (r0 + i) * n_, row, len[i], logForm);
          std::fill(row + len[i], row + n_, 0.0f);
        }
      }
    });
  }

  std::unique_ptr<PrefixMask> masked_;
  std::unique_ptr<LaneProgram> prologue_;
  int xSlot_ = -1;
  std::string kind_;
  int64_t outer_ = 1, n_ = 1, inner_ = 1;
  float eps_ = 0;
  int64_t x_ = -1, y_ = -1, scale_ = -1, bias_ = -1;
};

} // namespace

std::unique_ptr<Kernel> bindNorm(const BindArgs& a) {
  return std::make_unique<RowKernel>(a);
}

} // namespace shardc
