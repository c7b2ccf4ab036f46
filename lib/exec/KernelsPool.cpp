// 2-D max and average pooling over NCHW f32 and their backward ops, planes split over
// threads; the window taps of every output position are listed once at bind time.
#include "Kernel.h"

#include "../ops/WindowUtil.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace shardc {
namespace {

class PoolKernel : public Kernel {
public:
  explicit PoolKernel(const BindArgs& a) {
    const Op& op = a.anchor();
    const std::string& n = op.name();
    max_ = n == opname::kMaxPool2d || n == opname::kMaxPool2dBackward;
    backward_ = n == opname::kMaxPool2dBackward || n == opname::kAvgPool2dBackward;
    const Shape& xs = backward_ ? op.result(0)->type().shape : op.operand(0)->type().shape;
    const Shape& os =
        backward_ ? op.operand(max_ ? 1 : 0)->type().shape : op.result(0)->type().shape;
    const auto& k = op.attrs().getInts("kernel");
    ops::Window w;
    ops::readWindow(op.attrs(), k[0], k[1], w);
    bool includePad = !max_ && op.attrs().getBool("count_include_pad");
    planes_ = xs[0] * xs[1];
    inPlane_ = xs[2] * xs[3];
    outPlane_ = os[2] * os[3];
    start_.push_back(0);
    for (int64_t oy = 0; oy < os[2]; ++oy)
      for (int64_t ox = 0; ox < os[3]; ++ox) {
        int64_t padded = 0, inside = 0;
        for (int64_t ky = 0; ky < k[0]; ++ky)
          for (int64_t kx = 0; kx < k[1]; ++kx) {
            int64_t iy = w.row(oy, ky), ix = w.col(ox, kx);
            if (iy < xs[2] + w.pb && ix < xs[3] + w.pr) ++padded;
            if (iy >= 0 && iy < xs[2] && ix >= 0 && ix < xs[3]) {
              taps_.push_back(static_cast<int32_t>(iy * xs[3] + ix));
              ++inside;
            }
          }
        start_.push_back(static_cast<int64_t>(taps_.size()));
        divisor_.push_back(static_cast<float>(includePad ? padded : inside));
      }
    if (max_ && backward_) {
      x_ = a.num.id(op.operand(0));
      dy_ = a.num.id(op.operand(1));
    } else {
      (backward_ ? dy_ : x_) = a.num.id(op.operand(0));
    }
    out_ = a.num.id(op.result(0));
  }

  void run(ExecContext& ctx) override {
    auto f = [&](int64_t id) { return reinterpret_cast<float*>(ctx.ptr[static_cast<size_t>(id)]); };
    float* out = f(out_);
    const float* x = x_ >= 0 ? f(x_) : nullptr;
    const float* dy = dy_ >= 0 ? f(dy_) : nullptr;
    int t = planes_ * outPlane_ >= (1 << 12) ? ctx.threads : 1;
    if (backward_) std::memset(out, 0, static_cast<size_t>(planes_ * inPlane_) * sizeof(float));
    parallelRegion(t, [&] {
#pragma omp for schedule(static)
      for (int64_t p = 0; p < planes_; ++p) {
        if (backward_)
          backwardPlane(x ? x + p * inPlane_ : nullptr, dy + p * outPlane_, out + p * inPlane_);
        else
          forwardPlane(x + p * inPlane_, out + p * outPlane_);
      }
    });
  }

private:
  void forwardPlane(const float* x, float* y) const {
    for (int64_t o = 0; o < outPlane_; ++o) {
      auto b = static_cast<size_t>(start_[static_cast<size_t>(o)]),
           e = static_cast<size_t>(start_[static_cast<size_t>(o) + 1]);
      if (max_) {
        float acc = -std::numeric_limits<float>::infinity();
        for (size_t i = b; i < e; ++i) {
          float v = x[taps_[i]];
          acc = v != v || acc != acc ? std::numeric_limits<float>::quiet_NaN() : std::max(acc, v);
        }
        y[o] = acc;
      } else {
        float acc = 0;
        for (size_t i = b; i < e; ++i)
          acc += x[taps_[i]];
        y[o] = acc / divisor_[static_cast<size_t>(o)];
      }
    }
  }

  void backwardPlane(const float* x, const float* dy, float* dx) const {
    for (int64_t o = 0; o < outPlane_; ++o) {
      auto b = static_cast<size_t>(start_[static_cast<size_t>(o)]),
           e = static_cast<size_t>(start_[static_cast<size_t>(o) + 1]);
      if (max_) { // the first maximum (a NaN beats any number) takes the gradient
        int32_t best = -1;
        for (size_t i = b; i < e; ++i) {
          float v = x[taps_[i]];
          if (best < 0 || (v != v && x[best] == x[best]) || v > x[best]) best = taps_[i];
        }
        if (best >= 0) dx[best] += dy[o];
      } else {
        float share = dy[o] / divisor_[static_cast<size_t>(o)];
        for (size_t i = b; i < e; ++i)
          dx[taps_[i]] += share;
      }
    }
  }

  bool max_ = true, backward_ = false;
  int64_t planes_ = 0, inPlane_ = 0, outPlane_ = 0;
  std::vector<int32_t> taps_;  // input offsets in the plane, window by window
  std::vector<int64_t> start_; // window o's taps: [start_[o], start_[o + 1])
  std::vector<float> divisor_; // average pooling
  int64_t x_ = -1, dy_ = -1, out_ = -1;
};

} // namespace

std::unique_ptr<Kernel> bindPool(const BindArgs& a) {
  return std::make_unique<PoolKernel>(a);
}

} // namespace shardc
