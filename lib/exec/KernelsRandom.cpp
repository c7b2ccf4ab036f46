// dropout on f32: the registry op's mask (RandomOps.cpp), rows of the last dim over threads.
// Each element's global index is the sum of its per-dim index operands times the global
// strides, so a device computes exactly the words the whole tensor would.
#include "Kernel.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/support/Philox.h"

#include <omp.h>

namespace shardc {
namespace {

class DropoutKernel : public Kernel {
public:
  explicit DropoutKernel(const BindArgs& a) {
    const Op& op = a.anchor();
    x_ = a.num.id(op.operand(0));
    ratio_ = a.num.id(op.operand(1));
    rng_ = a.num.id(op.operand(2));
    for (size_t d = 3; d < op.numOperands(); ++d)
      index_.push_back(a.num.id(op.operand(d)));
    out_ = a.num.id(op.result(0));
    shape_ = op.operand(0)->type().shape;
    strides_ = op.attrs().getInts("strides");
    stream_ = static_cast<uint32_t>(op.attrs().getInt("stream"));
  }

  void run(ExecContext& ctx) override {
    int64_t n = numel(shape_);
    if (n == 0) return;
    double p = philox::checkedDropoutRatio(
        *reinterpret_cast<const double*>(ctx.ptr[static_cast<size_t>(ratio_)]));
    uint64_t threshold = philox::dropThreshold(p);
    float scale = p < 1 ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f;
    const auto* rng = reinterpret_cast<const int64_t*>(ctx.ptr[static_cast<size_t>(rng_)]);
    auto seed = static_cast<uint64_t>(rng[0]);
    auto step = static_cast<uint32_t>(rng[1]);
    // Per dim, each index's share of the global linear index.
    std::vector<std::vector<uint64_t>> part(shape_.size());
    for (size_t d = 0; d < shape_.size(); ++d) {
      const auto* idx = reinterpret_cast<const int64_t*>(ctx.ptr[static_cast<size_t>(index_[d])]);
      for (int64_t i = 0; i < shape_[d]; ++i)
        part[d].push_back(static_cast<uint64_t>(idx[i]) * static_cast<uint64_t>(strides_[d]));
    }
    size_t last = shape_.empty() ? 0 : shape_.size() - 1;
    int64_t inner = shape_.empty() ? 1 : shape_[last], rows = n / inner;
    const auto* x = reinterpret_cast<const float*>(ctx.ptr[static_cast<size_t>(x_)]);
    auto* y = reinterpret_cast<float*>(ctx.ptr[static_cast<size_t>(out_)]);
    int threads = n >= (1 << 14) ? ctx.threads : 1;
    parallelRegion(threads, [&] {
#pragma omp for schedule(static)
      for (int64_t row = 0; row < rows; ++row) {
        uint64_t base = 0;
        int64_t r = row;
        for (size_t d = last; d-- > 0;) {
          base += part[d][static_cast<size_t>(r % shape_[d])];
          r /= shape_[d];
        }
        for (int64_t j = 0; j < inner; ++j) {
          uint64_t index = base + (shape_.empty() ? 0 : part[last][static_cast<size_t>(j)]);
          bool keep = philox::firstWord(index, step, stream_, seed) >= threshold;
          y[row * inner + j] = keep ? x[row * inner + j] * scale : 0.0f;
        }
      }
    });
  }

private:
  int64_t x_, ratio_, rng_, out_;
  std::vector<int64_t> index_;
  Shape shape_;
  std::vector<int64_t> strides_;
  uint32_t stream_;
};

} // namespace

std::unique_ptr<Kernel> bindRandom(const BindArgs& a) {
  return std::make_unique<DropoutKernel>(a);
}

} // namespace shardc
