// matmul through oneDNN: batch dims broadcast, a transposed operand read with permuted
// strides, a transposed result stored with permuted strides, and the step's epilogue (bias
// or residual add, sub, mul, and relu/tanh/sigmoid/exp/abs) applied as post-ops before the
// result is stored. A step that is one GEMM (every matmul but the batched ones of attention,
// and weight gradients summed over the batch) of 2^24 FLOPs or more may run on OpenBLAS
// instead: whichever library is faster on this machine for its shape, timed once
// (GemmChoice.h); its epilogue then runs as a lane program over each thread's rows of the
// product as soon as the thread has computed them.
#include "Kernel.h"
#include "LaneProgram.h"
#include "MatmulLayout.h"
#include "OpenBlas.h"
#include "shardc/exec/GemmChoice.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <map>
#include <omp.h>
#include <set>
#include <string_view>
#include <unordered_map>

namespace shardc {
namespace {

using dnnl::algorithm;
using dnnl::memory;

using matmul_layout::aligned;
using matmul_layout::permuted;

// One row-major GEMM, C = op(A) op(B), as OpenBLAS takes it, split over threads along
// the longer side of C, or along its rows when an epilogue follows (C is then plain: ldc n).
struct BlasGemm {
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;

  void run(const ExecContext& ctx, int threads, const float* a, const float* b, float* c,
           LaneProgram* epilogue) const {
    bool alongM = m >= n || epilogue;
    int64_t side = alongM ? m : n, chunk = ((side + threads - 1) / threads + 15) / 16 * 16;
    int parts = static_cast<int>((side + chunk - 1) / chunk);
    parallelRegion(parts, [&] {
#pragma omp for schedule(static)
      for (int t = 0; t < parts; ++t) {
        int64_t lo = t * chunk, len = std::min(chunk, side - lo);
        if (!alongM) {
          openblas::sgemm(ta, tb, m, len, k, a, lda, b + (tb ? lo * ldb : lo), ldb, 0.0f, c + lo,
                          ldc);
          continue;
        }
        openblas::sgemm(ta, tb, len, n, k, a + (ta ? lo : lo * lda), lda, b, ldb, 0.0f,
                        c + lo * ldc, ldc);
        if (!epilogue) continue;
        int thread = omp_get_thread_num();
        for (int64_t p = lo * n, end = (lo + len) * n; p < end; p += epilogue->block())
          epilogue->evalBlock(ctx, p, std::min(epilogue->block(), end - p), thread);
      }
    });
  }
};

// The matrix of the last two dims of (dims, strides) as BLAS reads it: rows x cols, plain
// (cols contiguous) or transposed (rows contiguous), with its leading dimension. False
// when neither dim is contiguous.
bool blasMatrix(const memory::dims& d, const memory::dims& s, bool& trans, int64_t& ld) {
  size_t r = d.size();
  int64_t rows = d[r - 2], cols = d[r - 1], sr = s[r - 2], sc = s[r - 1];
  if ((cols == 1 || sc == 1) && (rows == 1 || sr >= cols)) {
    trans = false;
    ld = rows == 1 ? cols : sr;
    return true;
  }
  if ((rows == 1 || sr == 1) && (cols == 1 || sc >= rows)) {
    trans = true;
    ld = cols == 1 ? rows : sc;
    return true;
  }
  return false;
}

// The library takes ints, and empty products are left to oneDNN.
constexpr int64_t kBlasInt = 1 << 30;
bool blasSized(int64_t m, int64_t n, int64_t k) {
  return std::min({m, n, k}) >= 1 && std::max({m, n, k}) < kBlasInt && m * k < 2 * kBlasInt &&
         k * n < 2 * kBlasInt && m * n < 2 * kBlasInt;
}

int64_t batchOf(const memory::dims& d) {
  int64_t b = 1;
  for (size_t i = 0; i + 2 < d.size(); ++i)
    b *= d[i];
  return b;
}

// The GEMM of a matmul whose B has no batch: A's batch joins its rows when A and C are
// row-major. False when BLAS cannot take the layout.
bool blasGemm(const memory::dims& ad, const memory::dims& as, const memory::dims& bd,
              const memory::dims& bs, const memory::dims& od, const memory::dims& os, BlasGemm& g) {
  size_t r = od.size();
  if (batchOf(bd) != 1) return false;
  int64_t batch = batchOf(ad);
  bool flat = batch > 1;
  if (flat && (as != dnnl_glue::rowMajor(ad) || os != dnnl_glue::rowMajor(od))) return false;
  bool tc = false;
  if (!blasMatrix(ad, as, g.ta, g.lda) || !blasMatrix(bd, bs, g.tb, g.ldb) ||
      !blasMatrix(od, os, tc, g.ldc) || tc)
    return false;
  g.m = batch * ad[r - 2];
  g.k = ad[r - 1];
  g.n = bd[r - 1];
  return blasSized(g.m, g.n, g.k) && std::max({g.lda, g.ldb, g.ldc}) < kBlasInt;
}

void permuteDims(const std::vector<size_t>& order, memory::dims& d, memory::dims& s) {
  memory::dims d0 = d, s0 = s;
  for (size_t i = 0; i < order.size(); ++i) {
    d[i] = d0[order[i]];
    s[i] = s0[order[i]];
  }
}

// The rows of the GEMM that are one run of rows in both A and C: the product of the
// trailing row dims (every dim but the last) over which both are contiguous.
int64_t runOfRows(const memory::dims& ad, const memory::dims& as, const memory::dims& os) {
  size_t r = ad.size();
  int64_t run = ad[r - 2];
  for (size_t i = r - 2; i-- > 0;) {
    if (ad[i] == 1) continue;
    size_t j = i + 1; // the next dim that is not a unit one
    while (j < r - 2 && ad[j] == 1)
      ++j;
    if (as[i] != as[j] * ad[j] || os[i] != os[j] * ad[j]) break;
    run *= ad[i];
  }
  return run;
}

// With B shared by every batch element, the product's rows (every dim of A and C but the
// last) may be walked in any order. A matmul whose A or C comes through a transpose that
// keeps the last dim (multi-head attention's [seq, batch] layout) would run as many GEMMs
// of few rows (128 of 8 rows at BERT width); walked in the order of A's strides, or of C's,
// it runs as fewer GEMMs of more rows, the other side read or written through permuted
// strides (8 of 128). order[i] is the dim of the matmul that becomes dim i: the identity
// unless another order makes longer runs of rows.
std::vector<size_t> rowOrder(const memory::dims& ad, const memory::dims& as, const memory::dims& bd,
                             const memory::dims& os) {
  size_t r = ad.size();
  std::vector<size_t> identity(r);
  for (size_t i = 0; i < r; ++i)
    identity[i] = i;
  if (r < 3 || batchOf(bd) != 1) return identity;
  auto byStrides = [&](const memory::dims& st) {
    std::vector<size_t> rows; // unit dims stay where they are: their strides mean nothing
    for (size_t i = 0; i + 1 < r; ++i)
      if (ad[i] != 1) rows.push_back(i);
    std::vector<size_t> sorted = rows, order = identity;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](size_t x, size_t y) { return st[x] > st[y]; });
    for (size_t j = 0; j < rows.size(); ++j)
      order[rows[j]] = sorted[j];
    return order;
  };
  auto run = [&](const std::vector<size_t>& order) {
    memory::dims d = ad, s = as, o = ad, so = os;
    permuteDims(order, d, s);
    permuteDims(order, o, so);
    return runOfRows(d, s, so);
  };
  std::vector<size_t> best = identity;
  for (const auto& order : {byStrides(as), byStrides(os)})
    if (run(order) > run(best)) best = order;
  return best;
}

// A zeroed f32 buffer of `bytes`, for timing a GEMM on.
std::vector<float> timingBuffer(size_t bytes) {
  return std::vector<float>(bytes / sizeof(float) + 1, 0.0f);
}

class MatmulKernel : public Kernel {
public:
  explicit MatmulKernel(const BindArgs& a) {
    const Op* mm = nullptr;
    std::map<const Value*, const Op*> inStep;
    for (const Op* op : a.ops) {
      inStep[op->result(0)] = op;
      if (op->name() == opname::kMatmul) mm = op;
    }
    if (!mm) throw Error("step 'matmul' has no matmul op");
    if (bindBatchReduced(a, *mm, inStep)) return;
    const Shape& out = mm->result(0)->type().shape;
    size_t rank = out.size();
    auto operand = [&](size_t i, memory::dims& dims, memory::dims& strides) {
      const Value* v = mm->operand(i);
      auto it = inStep.find(v);
      if (it != inStep.end() && it->second->name() == opname::kTranspose) {
        permuted(*it->second, rank, dims, strides);
        v = it->second->operand(0);
      } else if (it != inStep.end()) {
        throw Error("step 'matmul': operand made by '" + it->second->name() + "' in the step");
      } else {
        aligned(v->type().shape, rank, dims, strides);
      }
      return a.num.id(v);
    };
    memory::dims ad, as, bd, bs;
    srcId_ = operand(0, ad, as);
    weiId_ = operand(1, bd, bs);
    memory::dims od = dnnl_glue::toDims(out), os = dnnl_glue::rowMajor(od);
    const Op* stored = nullptr; // a transpose of the result, which stores it permuted
    for (const Op* op : a.ops)
      if (op->name() == opname::kTranspose && op->result(0) != mm->operand(0) &&
          op->result(0) != mm->operand(1))
        stored = op;
    if (stored) {
      // Dim perm[i] of the product is dim i of the store.
      memory::dims td = dnnl_glue::toDims(stored->result(0)->type().shape),
                   ts = dnnl_glue::rowMajor(td);
      const auto& perm = stored->attrs().getInts("perm");
      for (size_t i = 0; i < perm.size(); ++i)
        os[static_cast<size_t>(perm[i])] = ts[i];
    }
    // Rows walked out of order take their epilogue as a lane program (below), which
    // needs the result stored untransposed.
    std::vector<size_t> order = rowOrder(ad, as, bd, os);
    bool epilogue = std::any_of(a.ops.begin(), a.ops.end(), [&](const Op* op) {
      return op != mm && op->name() != opname::kTranspose && op->name() != opname::kBroadcast;
    });
    if ((epilogue && stored) || !keepsRowsFast(a, order, ad, as, bd, bs, os))
      std::sort(order.begin(), order.end());
    bool rowsMoved = !std::is_sorted(order.begin(), order.end());
    permuteDims(order, ad, as);
    permuteDims(order, od, os);
    flops_ = 2.0 * static_cast<double>(numel(out)) *
             static_cast<double>(mm->operand(0)->type().shape.back());
    dnnl::post_ops po;
    const Value* cur = mm->result(0);
    for (const Op* op : a.ops) {
      if (op == mm || op->name() == opname::kTranspose || op->name() == opname::kBroadcast)
        continue;
      const std::string& n = op->name();
      if (op->operand(0) != cur && !(op->numOperands() == 2 && op->operand(1) == cur))
        throw Error("step 'matmul': '" + n + "' does not continue the matmul's epilogue");
      if (op->numOperands() == 1) {
        algorithm alg = n == opname::kRelu      ? algorithm::eltwise_relu
                        : n == opname::kTanh    ? algorithm::eltwise_tanh
                        : n == opname::kSigmoid ? algorithm::eltwise_logistic
                        : n == opname::kExp     ? algorithm::eltwise_exp
                        : n == opname::kAbs     ? algorithm::eltwise_abs
                                                : algorithm::undef;
        if (alg == algorithm::undef) throw Error("step 'matmul': no epilogue for '" + n + "'");
        po.append_eltwise(1.0f, alg, 0.0f, 0.0f);
      } else {
        const Value* x = op->operand(op->operand(0) == cur ? 1 : 0);
        if (auto it = inStep.find(x); it != inStep.end()) {
          if (it->second->name() != opname::kBroadcast)
            throw Error("step 'matmul': epilogue operand made by '" + it->second->name() + "'");
          x = it->second->operand(0);
        }
        algorithm alg = n == opname::kAdd   ? algorithm::binary_add
                        : n == opname::kSub ? algorithm::binary_sub
                        : n == opname::kMul ? algorithm::binary_mul
                                            : algorithm::undef;
        if (alg == algorithm::undef || x->type().rank() > static_cast<int64_t>(rank))
          throw Error("step 'matmul': no epilogue for '" + n + "'");
        memory::dims xd, xs;
        aligned(x->type().shape, rank, xd, xs);
        permuteDims(order, xd, xs);
        binaryPos_.push_back(po.len());
        po.append_binary(alg, dnnl_glue::f32Desc(xd, xs));
        binaryIds_.push_back(a.num.id(x));
        binaryDescs_.push_back(dnnl_glue::f32Desc(xd, xs));
      }
      cur = op->result(0);
    }
    const Value* epilogueEnd = cur; // the value before any result transpose
    if (stored) {
      if (stored->operand(0) != cur)
        throw Error("step 'matmul': a transpose that neither feeds the matmul nor stores it");
      cur = stored->result(0);
    }
    if (!a.stored(cur)) throw Error("step 'matmul': its result is never stored");
    dstId_ = a.num.id(cur);
    bool blasOk =
        flops_ >= kBlasFlops && openblas::available() && (po.len() == 0 || cur == epilogueEnd) &&
        blasGemm(ad, as, bd, bs, od, os, blas_) && (po.len() == 0 || blas_.ldc == blas_.n);
    auto onBlas = [&] {
      useBlas_ = true;
      if (po.len() > 0 && !epilogue_) bindEpilogue(a, *mm);
    };
    if (blasOk && openblas::chosenByUser()) {
      onBlas();
      return;
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    srcDesc_ = dnnl_glue::f32Desc(ad, as);
    weiDesc_ = dnnl_glue::f32Desc(bd, bs);
    dstDesc_ = dnnl_glue::f32Desc(od, os);
    try {
      dnnl::matmul::desc desc(srcDesc_, weiDesc_, dstDesc_);
      dnnl::matmul::primitive_desc pd(desc, attr, a.dnnl->engine);
      // The transposes Fusion.cpp folds are those oneDNN's GEMM takes as strides (its
      // reference loop is two orders of magnitude slower); PlanTest runs every such perm.
      // With some post-ops (a binary operand broadcast over the batch: a relative position
      // bias) oneDNN 2.6 takes only its reference loop, and with the rows walked out of
      // order a binary post-op writes out of bounds: the epilogue then runs as a lane
      // program over the product, as on OpenBLAS.
      bool folded = std::any_of(a.ops.begin(), a.ops.end(),
                                [](const Op* op) { return op->name() == opname::kTranspose; });
      auto isRef = [](const dnnl::matmul::primitive_desc& d) {
        return std::string_view(d.impl_info_str()).starts_with("ref");
      };
      if (po.len() > 0 && cur == epilogueEnd && (rowsMoved || (folded && isRef(pd)))) {
        pd = dnnl::matmul::primitive_desc(desc, a.dnnl->engine);
        binaryIds_.clear();
        binaryPos_.clear();
        binaryDescs_.clear();
        bindEpilogue(a, *mm);
      }
      if (folded && isRef(pd))
        throw InternalError("oneDNN has only its reference matmul for step '" + a.step.kernel +
                            "' with transposes read as strides");
      prim_ = dnnl::matmul(pd);
    } catch (const dnnl::error& e) {
      if (blasOk) {
        onBlas();
        return;
      }
      throw Error(std::string("oneDNN has no matmul for this step: ") + e.what());
    }
    if (blasOk &&
        gemmOnOpenBlas(gemmKey("gemm"), [&] { return timeGemm(a, ad, as, bd, bs, od, os); }))
      onBlas();
  }

  // Whether oneDNN runs the matmul with its rows walked in `order` (a probe without
  // epilogue) on more than its reference loop.
  static bool keepsRowsFast(const BindArgs& a, const std::vector<size_t>& order, memory::dims ad,
                            memory::dims as, const memory::dims& bd, const memory::dims& bs,
                            memory::dims os) {
    if (std::is_sorted(order.begin(), order.end())) return true;
    memory::dims od = ad;
    od.back() = bd.back();
    permuteDims(order, ad, as);
    permuteDims(order, od, os);
    try {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(dnnl_glue::f32Desc(ad, as),
                                                         dnnl_glue::f32Desc(bd, bs),
                                                         dnnl_glue::f32Desc(od, os)),
                                      a.dnnl->engine);
      return !std::string_view(pd.impl_info_str()).starts_with("ref");
    } catch (const dnnl::error&) {
      return false;
    }
  }

  // The GEMM as the choice names it: its shape, layout and threads.
  std::string gemmKey(const char* kind) const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s:m%lld,n%lld,k%lld,%c%c,ld%lld,%lld,%lld,threads%d", kind,
                  static_cast<long long>(blas_.m), static_cast<long long>(blas_.n),
                  static_cast<long long>(blas_.k), blas_.ta ? 't' : 'n', blas_.tb ? 't' : 'n',
                  static_cast<long long>(blas_.lda), static_cast<long long>(blas_.ldb),
                  static_cast<long long>(blas_.ldc), omp_get_max_threads());
    return buf;
  }

  // Both libraries on this step's GEMM (its epilogue left out: it costs both alike), on
  // zeroed buffers laid out as the step's operands.
  GemmTimes timeGemm(const BindArgs& a, const memory::dims& ad, const memory::dims& as,
                     const memory::dims& bd, const memory::dims& bs, const memory::dims& od,
                     const memory::dims& os) const {
    memory::desc src = dnnl_glue::f32Desc(ad, as), wei = dnnl_glue::f32Desc(bd, bs),
                 dst = dnnl_glue::f32Desc(od, os);
    std::vector<float> x = timingBuffer(src.get_size()), w = timingBuffer(wei.get_size()),
                       y = timingBuffer(dst.get_size());
    const dnnl::engine& e = a.dnnl->engine;
    dnnl::matmul plain(dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wei, dst), e));
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(src, e, x.data())},
                                         {DNNL_ARG_WEIGHTS, memory(wei, e, w.data())},
                                         {DNNL_ARG_DST, memory(dst, e, y.data())}};
    return timeBoth(x.data(), w.data(), y.data(), [&] {
      plain.execute(a.dnnl->stream, args);
      a.dnnl->stream.wait();
    });
  }

  // OpenBLAS's run of blas_ on (x, w, y) against `onednn`, each timed by leastSeconds.
  GemmTimes timeBoth(const float* x, const float* w, float* y,
                     const std::function<void()>& onednn) const {
    ExecContext ctx;
    int threads = omp_get_max_threads();
    GemmTimes t;
    t.openblas = leastSeconds(3, [&] { blas_.run(ctx, threads, x, w, y, nullptr); });
    t.onednn = leastSeconds(3, onednn);
    return t;
  }

  // The ops after the matmul (and the broadcasts of their operands) as a lane program that
  // reads the product from the matmul's value, computed into the step's result (the fusion
  // stores nothing else of the step). The plan never lets a matmul step's result share
  // bytes with what the step reads (only elementwise steps write in place).
  void bindEpilogue(const BindArgs& a, const Op& mm) {
    std::vector<const Op*> ops;
    for (const Op* op : a.ops)
      if (op != &mm && op->name() != opname::kTranspose) ops.push_back(op);
    std::set<const Value*> made{mm.result(0)};
    for (const Op* op : ops)
      made.insert(op->result(0));
    for (const Op* op : ops)
      for (const Value* v : op->operands())
        if (!made.count(v)) epilogueInputs_.emplace_back(a.num.id(v), v->type().bytes());
    productId_ = a.num.id(mm.result(0));
    kernelLabel_ = a.step.kernel;
    productBytes_ = mm.result(0)->type().bytes();
    epilogue_ = std::make_unique<LaneProgram>(a, ops, kEpilogueBlock);
  }

  // Where the product goes this run: the result's bytes, checked against the epilogue's
  // operands.
  uint8_t* productBuffer(const ExecContext& ctx) const {
    uint8_t* d = ctx.ptr[static_cast<size_t>(dstId_)];
    for (auto [id, bytes] : epilogueInputs_) {
      const uint8_t* p = ctx.ptr[static_cast<size_t>(id)];
      if (p && p < d + productBytes_ && d < p + bytes)
        throw InternalError("matmul step '" + kernelLabel_ +
                            "' reads an operand that shares its result's bytes");
    }
    return d;
  }

  // transpose(X) x G summed over the batch (Fusion.cpp: a weight gradient): X^T G with X as
  // [rows, k] and G as [rows, n], so the batch lies in the contraction. OpenBLAS reads X^T
  // at its plain rate. oneDNN 2.6's GEMM reads a tall transposed source (k > n) at about
  // half its plain rate on AVX2 (60 against 103 GFLOP/s for k 1024, n 256, 1024 rows, 2
  // threads): there X^T is copied plain into scratch first, which costs far less than it
  // saves. Not below kBlasFlops, where the GEMM is oneDNN's even with OpenBLAS: the copy's
  // second primitive costs more than it saves (0.5 MFLOP: 15 -> 5 us; 8 MFLOP: 45 -> 31 us).
  // A G read through a transpose has its rows in another order than X's: it is copied in
  // X's row order into scratch first (rows x n floats, against the b x k x n product and
  // its sum it replaces).
  bool bindBatchReduced(const BindArgs& a, const Op& mm,
                        const std::map<const Value*, const Op*>& inStep) {
    const Op* red = nullptr;
    for (const Op* op : a.ops)
      if (op->name() == opname::kReduceSum) red = op;
    if (!red) return false;
    matmul_layout::BatchSum bs = matmul_layout::batchSumOf(mm, inStep);
    int64_t k = bs.k, n = bs.n, rows = bs.rows;
    flops_ = bs.flops();
    srcId_ = a.num.id(bs.x);
    weiId_ = a.num.id(bs.g);
    dstId_ = a.num.id(red->result(0));
    if (bs.gTranspose) {
      memory::dims d, st;
      permuted(*bs.gTranspose, bs.g->type().rank(), d, st);
      weiId_ = a.num.id(bs.gTranspose->operand(0));
      storedGDesc_ = dnnl_glue::f32Desc(d, st);
      rowOrderGDesc_ = dnnl_glue::f32Desc(d, dnnl_glue::rowMajor(d));
      gCopy_ = dnnl::reorder(dnnl::reorder::primitive_desc(a.dnnl->engine, storedGDesc_,
                                                           a.dnnl->engine, rowOrderGDesc_));
      gCopyBytes_ = alignedBytes(rows * n);
    }
    bool blasOk = flops_ >= kBlasFlops && openblas::available() && blasSized(k, n, rows);
    if (blasOk) blas_ = {true, false, k, n, rows, k, n, n};
    if (blasOk && openblas::chosenByUser()) return useBlas_ = true;
    bool copy = k > n && flops_ >= kBlasFlops;
    transposedDesc_ = dnnl_glue::f32Desc({k, rows}, {1, k});
    srcDesc_ = copy ? dnnl_glue::f32Desc({k, rows}, {rows, 1}) : transposedDesc_;
    weiDesc_ = dnnl_glue::f32Desc({rows, n}, {n, 1});
    dstDesc_ = dnnl_glue::f32Desc({k, n}, {n, 1});
    try {
      prim_ = dnnl::matmul(dnnl::matmul::primitive_desc(
          dnnl::matmul::desc(srcDesc_, weiDesc_, dstDesc_), a.dnnl->engine));
      if (copy) {
        transpose_ = dnnl::reorder(dnnl::reorder::primitive_desc(a.dnnl->engine, transposedDesc_,
                                                                 a.dnnl->engine, srcDesc_));
        xCopyBytes_ = alignedBytes(k * rows);
      }
    } catch (const dnnl::error& e) {
      if (blasOk) return useBlas_ = true;
      throw Error(std::string("oneDNN has no matmul for this step: ") + e.what());
    }
    if (blasOk && gemmOnOpenBlas(gemmKey("batch-summed"), [&] { return timeBatchSummed(a); })) {
      useBlas_ = true;
      xCopyBytes_ = 0; // OpenBLAS reads X^T as it is
    }
    return true;
  }

  // Bytes of `floats` f32s, rounded up so the next scratch buffer starts on a cache line.
  static int64_t alignedBytes(int64_t floats) {
    return (floats * static_cast<int64_t>(sizeof(float)) + 63) / 64 * 64;
  }

  // A batch sum's G in X's row order: copied into scratch when it comes through a
  // transpose, else as stored.
  uint8_t* batchSumG(ExecContext& ctx) const {
    uint8_t* stored = ctx.ptr[static_cast<size_t>(weiId_)];
    if (!gCopyBytes_) return stored;
    memory from(storedGDesc_, ctx.dnnl->engine, stored),
        to(rowOrderGDesc_, ctx.dnnl->engine, ctx.scratch);
    gCopy_.execute(ctx.dnnl->stream, from, to);
    ctx.dnnl->stream.wait();
    return ctx.scratch;
  }

  // Both libraries on this weight gradient, as run() runs each (oneDNN with its copy of X^T).
  GemmTimes timeBatchSummed(const BindArgs& a) const {
    std::vector<float> x = timingBuffer(transposedDesc_.get_size()),
                       g = timingBuffer(weiDesc_.get_size()), y = timingBuffer(dstDesc_.get_size()),
                       plain = timingBuffer(static_cast<size_t>(xCopyBytes_));
    const dnnl::engine& e = a.dnnl->engine;
    memory src(srcDesc_, e, xCopyBytes_ ? plain.data() : x.data()),
        transposed(transposedDesc_, e, x.data());
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                         {DNNL_ARG_WEIGHTS, memory(weiDesc_, e, g.data())},
                                         {DNNL_ARG_DST, memory(dstDesc_, e, y.data())}};
    return timeBoth(x.data(), g.data(), y.data(), [&] {
      if (xCopyBytes_) transpose_.execute(a.dnnl->stream, transposed, src);
      prim_.execute(a.dnnl->stream, args);
      a.dnnl->stream.wait();
    });
  }

  int64_t scratchBytes() const override { return gCopyBytes_ + xCopyBytes_; }

  void run(ExecContext& ctx) override {
    // A small GEMM costs less on one thread than waking the others.
    bool alone = flops_ < kParallelFlops && ctx.threads > 1;
    if (useBlas_) {
      auto f32 = [&](int64_t id) {
        return reinterpret_cast<float*>(ctx.ptr[static_cast<size_t>(id)]);
      };
      int threads = alone ? 1 : ctx.threads;
      if (!epilogue_) {
        blas_.run(ctx, threads, f32(srcId_), reinterpret_cast<float*>(batchSumG(ctx)), f32(dstId_),
                  nullptr);
        return;
      }
      // The epilogue reads the product, which no plan stores, from the result's bytes.
      uint8_t*& product = ctx.ptr[static_cast<size_t>(productId_)];
      product = productBuffer(ctx);
      epilogue_->prepare(ctx);
      blas_.run(ctx, threads, f32(srcId_), f32(weiId_), reinterpret_cast<float*>(product),
                epilogue_.get());
      product = nullptr;
      return;
    }
    auto mem = [&](const memory::desc& d, int64_t id) {
      return memory(d, ctx.dnnl->engine, ctx.ptr[static_cast<size_t>(id)]);
    };
    memory src = mem(srcDesc_, srcId_);
    if (xCopyBytes_) {
      memory transposed = mem(transposedDesc_, srcId_);
      src = memory(srcDesc_, ctx.dnnl->engine, ctx.scratch + gCopyBytes_);
      transpose_.execute(ctx.dnnl->stream, transposed, src);
    }
    // With its epilogue as a lane program, the product goes to the result's bytes first.
    uint8_t** product = epilogue_ ? &ctx.ptr[static_cast<size_t>(productId_)] : nullptr;
    if (product) *product = productBuffer(ctx);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_WEIGHTS, memory(weiDesc_, ctx.dnnl->engine, batchSumG(ctx))},
        {DNNL_ARG_DST, memory(dstDesc_, ctx.dnnl->engine,
                              product ? *product : ctx.ptr[static_cast<size_t>(dstId_)])}};
    for (size_t i = 0; i < binaryIds_.size(); ++i)
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(binaryPos_[i]) | DNNL_ARG_SRC_1,
                   mem(binaryDescs_[i], binaryIds_[i]));
    // oneDNN takes its thread count from OpenMP when it runs.
    if (alone) omp_set_num_threads(1);
    prim_.execute(ctx.dnnl->stream, args);
    ctx.dnnl->stream.wait();
    if (alone) omp_set_num_threads(ctx.threads);
    if (!product) return;
    epilogue_->prepare(ctx);
    int64_t n = productBytes_ / static_cast<int64_t>(sizeof(float)), block = epilogue_->block();
    int threads = alone ? 1 : ctx.threads;
    parallelRegion(threads, [&] {
#pragma omp for schedule(static)
      for (int64_t p = 0; p < n; p += block)
        epilogue_->evalBlock(ctx, p, std::min(block, n - p), omp_get_thread_num());
    });
    *product = nullptr;
  }

private:
  static constexpr double kParallelFlops = 1 << 20;
  // Below this, oneDNN: OpenBLAS's fixed cost per call (a locked buffer pool, contended when
  // several thread devices call at once: 9 -> 16 us for 64^3) outweighs its faster loops.
  // The GPT fixture's Adam step on 2 thread devices took 5.5 ms on OpenBLAS, 3.1 on oneDNN.
  static constexpr double kBlasFlops = 1 << 24;
  double flops_ = 0; // 2 m n k (times the batch)
  int64_t srcId_, weiId_, dstId_;
  bool useBlas_ = false;
  BlasGemm blas_;
  static constexpr int64_t kEpilogueBlock = 256; // elements: every slot's block stays in L1
  std::unique_ptr<LaneProgram> epilogue_;        // on OpenBLAS: the ops after the GEMM
  std::vector<std::pair<int64_t, int64_t>> epilogueInputs_; // (id, bytes) read from outside
  int64_t productId_ = -1, productBytes_ = 0;
  std::string kernelLabel_;
  memory::desc srcDesc_, weiDesc_, dstDesc_, transposedDesc_;
  dnnl::reorder transpose_; // a weight gradient's X^T, made plain in scratch
  int64_t xCopyBytes_ = 0;
  dnnl::reorder gCopy_; // a weight gradient's G, copied in X's row order to scratch
  memory::desc storedGDesc_, rowOrderGDesc_;
  int64_t gCopyBytes_ = 0;
  std::vector<int64_t> binaryIds_;
  std::vector<int> binaryPos_; // each binary post-op's place in the chain
  std::vector<memory::desc> binaryDescs_;
  dnnl::matmul prim_;
};

} // namespace

std::unique_ptr<Kernel> bindMatmul(const BindArgs& a) {
  for (const Op* op : a.ops)
    if (op->name() == opname::kMatmul && op->result(0)->type().dtype == DType::BF16)
      return bindBf16Matmul(a);
  return std::make_unique<MatmulKernel>(a);
}

} // namespace shardc
