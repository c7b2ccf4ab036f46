#include "ConvLoops.h"

#include <algorithm>

namespace shardc::ops {
namespace {

// Output positions unfolded at a time: a block's taps x positions stay in cache, and the
// scratch memory is bounded whatever the kernel size.
constexpr int64_t kBlock = 256;

// c[m][n] += a[m][k] * b[k][n], row-major with the given leading dims; every element of c adds
// its k terms in ascending order. Four rows of c share each row of b.
void gemmAcc(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
             int64_t ldb, double* c, int64_t ldc) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    double* __restrict c0 = c + i * ldc;
    double* __restrict c1 = c0 + ldc;
    double* __restrict c2 = c1 + ldc;
    double* __restrict c3 = c2 + ldc;
    const double* ai = a + i * lda;
    for (int64_t p = 0; p < k; ++p) {
      const double a0 = ai[p], a1 = ai[lda + p], a2 = ai[2 * lda + p], a3 = ai[3 * lda + p];
      const double* __restrict bp = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) {
        const double v = bp[j];
        c0[j] += a0 * v;
        c1[j] += a1 * v;
        c2[j] += a2 * v;
        c3[j] += a3 * v;
      }
    }
  }
  for (; i < m; ++i) {
    double* __restrict ci = c + i * ldc;
    for (int64_t p = 0; p < k; ++p) {
      const double ap = a[i * lda + p];
      const double* __restrict bp = b + p * ldb;
      for (int64_t j = 0; j < n; ++j)
        ci[j] += ap * bp[j];
    }
  }
}

// Calls f(tap, j, xi) for every tap of output positions p0 .. p0+np-1 of image `img`, group g:
// tap = (channel in group, kernel row, kernel column) flattened, j = position - p0, xi = the
// flat index into x it reads, or -1 in the padding.
template <typename Fn>
void forEachUnfolded(const ConvDims& d, int64_t img, int64_t g, int64_t p0, int64_t np, Fn&& f) {
  const Window& win = d.win;
  for (int64_t c = 0; c < d.cpg; ++c) {
    int64_t rows = (img * d.c + g * d.cpg + c) * d.h;
    for (int64_t ky = 0; ky < win.kh; ++ky)
      for (int64_t kx = 0; kx < win.kw; ++kx) {
        int64_t tap = (c * win.kh + ky) * win.kw + kx;
        for (int64_t j = 0; j < np; ++j) {
          int64_t p = p0 + j, iy = win.row(p / d.ow, ky), ix = win.col(p % d.ow, kx);
          bool inside = iy >= 0 && iy < d.h && ix >= 0 && ix < d.w;
          f(tap, j, inside ? (rows + iy) * d.w + ix : -1);
        }
      }
  }
}

// Calls f(img, g, p0, np) for every block of at most kBlock output positions p0 .. p0+np-1 of
// every image and group.
template <typename Fn> void forEachBlock(const ConvDims& d, Fn&& f) {
  const int64_t P = d.oh * d.ow;
  for (int64_t img = 0; img < d.n; ++img)
    for (int64_t g = 0; g < d.groups; ++g)
      for (int64_t p0 = 0; p0 < P; p0 += kBlock)
        f(img, g, p0, std::min(kBlock, P - p0));
}

} // namespace

ConvDims convDims(const Shape& xs, const Shape& ws, const Shape& os, const AttrDict& attrs) {
  ConvDims d{};
  readWindow(attrs, ws[2], ws[3], d.win);
  d.n = xs[0], d.c = xs[1], d.h = xs[2], d.w = xs[3];
  d.f = ws[0], d.cpg = ws[1], d.groups = attrs.getInt("groups");
  d.fpg = d.f / d.groups;
  d.oh = os[2], d.ow = os[3];
  return d;
}

std::vector<double> convForward(const ConvDims& d, const double* x, const double* w,
                                const double* bias) {
  const int64_t P = d.oh * d.ow, K = d.taps();
  std::vector<double> out(static_cast<size_t>(d.n * d.f * P));
  if (bias)
    for (int64_t i = 0; i < d.n * d.f; ++i)
      std::fill_n(out.begin() + i * P, P, bias[i % d.f]);
  std::vector<double> col(static_cast<size_t>(K * std::min(P, kBlock)));
  forEachBlock(d, [&](int64_t img, int64_t g, int64_t p0, int64_t np) {
    forEachUnfolded(d, img, g, p0, np, [&](int64_t tap, int64_t j, int64_t xi) {
      col[static_cast<size_t>(tap * np + j)] = xi < 0 ? 0.0 : x[xi];
    });
    gemmAcc(d.fpg, np, K, w + g * d.fpg * K, K, col.data(), np,
            out.data() + (img * d.f + g * d.fpg) * P + p0, P);
  });
  return out;
}

std::vector<double> convBackwardInput(const ConvDims& d, const double* dy, const double* w) {
  const int64_t P = d.oh * d.ow, K = d.taps();
  std::vector<double> dx(static_cast<size_t>(d.n * d.c * d.h * d.w));
  // w per group transposed to [taps][filters], so that dcol = w^T dy runs as gemmAcc.
  std::vector<double> wt(static_cast<size_t>(d.f * K));
  for (int64_t g = 0; g < d.groups; ++g)
    for (int64_t fi = 0; fi < d.fpg; ++fi)
      for (int64_t t = 0; t < K; ++t)
        wt[static_cast<size_t>((g * K + t) * d.fpg + fi)] = w[(g * d.fpg + fi) * K + t];
  std::vector<double> dcol(static_cast<size_t>(K * std::min(P, kBlock)));
  forEachBlock(d, [&](int64_t img, int64_t g, int64_t p0, int64_t np) {
    std::fill(dcol.begin(), dcol.end(), 0.0);
    gemmAcc(K, np, d.fpg, wt.data() + g * K * d.fpg, d.fpg, dy + (img * d.f + g * d.fpg) * P + p0,
            P, dcol.data(), np);
    forEachUnfolded(d, img, g, p0, np, [&](int64_t tap, int64_t j, int64_t xi) {
      if (xi >= 0) dx[static_cast<size_t>(xi)] += dcol[static_cast<size_t>(tap * np + j)];
    });
  });
  return dx;
}

std::vector<double> convBackwardFilter(const ConvDims& d, const double* x, const double* dy) {
  const int64_t P = d.oh * d.ow, K = d.taps();
  std::vector<double> dw(static_cast<size_t>(d.f * K));
  // The unfolded input transposed ([positions][taps]), so that dw += dy colT runs as gemmAcc.
  std::vector<double> colT(static_cast<size_t>(K * std::min(P, kBlock)));
  forEachBlock(d, [&](int64_t img, int64_t g, int64_t p0, int64_t np) {
    forEachUnfolded(d, img, g, p0, np, [&](int64_t tap, int64_t j, int64_t xi) {
      colT[static_cast<size_t>(j * K + tap)] = xi < 0 ? 0.0 : x[xi];
    });
    gemmAcc(d.fpg, K, np, dy + (img * d.f + g * d.fpg) * P + p0, P, colT.data(), K,
            dw.data() + g * d.fpg * K, K);
  });
  return dw;
}

} // namespace shardc::ops
