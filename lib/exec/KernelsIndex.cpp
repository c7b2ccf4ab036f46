// gather (any dtype, rows by memcpy) and scatter_add (f32 rows added into zeros), with the
// reference kernels' index checks made before any element moves.
#include "Kernel.h"
#include "VecMath.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"

#include <cstring>
#include <omp.h>

namespace shardc {
namespace {

int64_t indexAt(const uint8_t* p, DType t, int64_t j) {
  return t == DType::I64 ? reinterpret_cast<const int64_t*>(p)[j]
                         : reinterpret_cast<const int32_t*>(p)[j];
}

SHARDC_INLINE void addRowLoop(float* __restrict y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += x[i];
}
SHARDC_VECTOR_VERSIONS(void, addRow, (float* __restrict y, const float* x, int64_t n), (y, x, n))

class IndexKernel : public Kernel {
public:
  explicit IndexKernel(const BindArgs& a) {
    const Op& op = a.anchor();
    gather_ = op.name() == opname::kGather;
    const Value* idx = op.operand(gather_ ? 1 : 0);
    const Shape& table = gather_ ? op.operand(0)->type().shape : op.result(0)->type().shape;
    int64_t axis = *normalizeAxis(op.attrs().getInt("axis"), static_cast<int64_t>(table.size()));
    for (int64_t i = 0; i < axis; ++i)
      outer_ *= table[static_cast<size_t>(i)];
    for (size_t i = static_cast<size_t>(axis) + 1; i < table.size(); ++i)
      inner_ *= table[i];
    n_ = table[static_cast<size_t>(axis)];
    k_ = idx->type().numel();
    idxType_ = idx->type().dtype;
    es_ = dtypeSize(op.result(0)->type().dtype);
    idx_ = a.num.id(idx);
    data_ = a.num.id(op.operand(gather_ ? 0 : 1));
    out_ = a.num.id(op.result(0));
    rows_.resize(static_cast<size_t>(k_));
  }

  void run(ExecContext& ctx) override {
    const uint8_t* ip = ctx.ptr[static_cast<size_t>(idx_)];
    for (int64_t j = 0; j < k_; ++j) {
      int64_t i = indexAt(ip, idxType_, j);
      if (i < -n_ || i >= n_)
        throw Error(std::string(gather_ ? "gather" : "scatter_add") + " index " +
                    std::to_string(i) + " at position " + std::to_string(j) +
                    " is out of range for a dimension of size " + std::to_string(n_));
      rows_[static_cast<size_t>(j)] = i < 0 ? i + n_ : i;
    }
    const uint8_t* src = ctx.ptr[static_cast<size_t>(data_)];
    uint8_t* dst = ctx.ptr[static_cast<size_t>(out_)];
    size_t row = static_cast<size_t>(inner_) * es_;
    int t = outer_ * k_ * inner_ >= (1 << 15) ? ctx.threads : 1;
    if (gather_) {
      parallelRegion(t, [&] {
#pragma omp for schedule(static)
        for (int64_t ok = 0; ok < outer_ * k_; ++ok) {
          int64_t o = ok / k_, j = ok % k_;
          if (row)
            std::memcpy(dst + static_cast<size_t>(ok) * row,
                        src + static_cast<size_t>(o * n_ + rows_[static_cast<size_t>(j)]) * row,
                        row);
        }
      });
      return;
    }
    auto* y = reinterpret_cast<float*>(dst);
    const auto* u = reinterpret_cast<const float*>(src);
    std::memset(dst, 0, static_cast<size_t>(outer_ * n_) * row);
    // Threads own column ranges of the rows, so repeated indices never race.
    parallelRegion(t, [&] {
      int nt = omp_get_num_threads(), me = omp_get_thread_num();
      int64_t lo = inner_ * me / nt, hi = inner_ * (me + 1) / nt;
      for (int64_t o = 0; o < outer_; ++o)
        for (int64_t j = 0; j < k_; ++j)
          addRow(y + (o * n_ + rows_[static_cast<size_t>(j)]) * inner_ + lo,
                 u + (o * k_ + j) * inner_ + lo, hi - lo);
    });
  }

private:
  bool gather_ = true;
  int64_t outer_ = 1, inner_ = 1, n_ = 1, k_ = 0;
  DType idxType_ = DType::I64;
  size_t es_ = 4;
  int64_t idx_ = -1, data_ = -1, out_ = -1;
  std::vector<int64_t> rows_;
};

} // namespace

std::unique_ptr<Kernel> bindIndex(const BindArgs& a) {
  return std::make_unique<IndexKernel>(a);
}

} // namespace shardc
