// bf16 matmul steps (--precision bf16): a matmul with its operands' folded transposes and
// either a transpose of its result or a weight gradient's batch sum, as the f32 kernel binds
// them, on bf16 values (no epilogue: the ops after a bf16 matmul compute in f32 on widened
// copies). oneDNN's bf16 GEMM multiplies exactly in f32, sums in f32 and rounds once at the
// store; it is fast on AVX512-BF16 or AMX. Without them (as oneDNN sees the CPU:
// DNNL_MAX_CPU_ISA caps it) oneDNN emulates bf16 at a quarter of its f32 rate on AVX-512, or
// has only its reference loop: the kernel then copies the operands into scratch widened to
// f32, runs the f32 GEMM and rounds the product as it stores it, the same numbers up to the
// order of the sums. So it does too where oneDNN has only its reference loop for the step's
// strides in bf16. Which way each step took is recorded (run --stats lists them).
#include "Kernel.h"
#include "MatmulLayout.h"
#include "shardc/exec/GemmChoice.h"

#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"

#include <map>
#include <omp.h>
#include <string_view>
#include <utility>

namespace shardc {
namespace {

using dnnl::memory;
using dt = memory::data_type;

// One operand (or the result) of the GEMM: its bytes as stored, and the dims the matmul takes
// it with. A weight gradient's G through a transpose has no matmul-shaped view in its bytes:
// the step is then widened (`dims` differ from `mm`), as oneDNN's f32 kernel would copy it too.
struct Operand {
  int64_t id = -1;
  memory::dims dims, strides; // the stored bf16 bytes, as a copy reads (or writes) them
  memory::dims mm;
  bool direct() const { return dims == mm; }
  memory::desc stored() const { return memory::desc(dims, dt::bf16, strides); }
  memory::desc gemm; // as the GEMM reads (or writes) it: stored, or in scratch when widened
  // When widened: where in scratch, its plain f32 copy there (`dims`), the copy.
  int64_t offset = -1;
  memory::desc plain;
  dnnl::reorder copy;
};

// An operand whose bytes are read (or written) as `dims` with `strides`, taken as `mm` by the GEMM.
Operand plainOperand(int64_t id, memory::dims dims, memory::dims strides, memory::dims mm) {
  Operand o;
  o.id = id;
  o.dims = std::move(dims);
  o.strides = std::move(strides);
  o.mm = std::move(mm);
  return o;
}

bool reference(const dnnl::matmul::primitive_desc& pd) {
  return std::string_view(pd.impl_info_str()).starts_with("ref");
}

class Bf16MatmulKernel : public Kernel {
public:
  explicit Bf16MatmulKernel(const BindArgs& a) {
    std::map<const Value*, const Op*> inStep;
    const Op *mm = nullptr, *red = nullptr;
    for (const Op* op : a.ops) {
      inStep[op->result(0)] = op;
      if (op->name() == opname::kMatmul) mm = op;
      if (op->name() == opname::kReduceSum) red = op;
    }
    if (!mm) throw Error("step 'matmul' has no matmul op");
    for (const Op* op : a.ops)
      for (size_t r = 0; r < op->numResults(); ++r)
        if (op->result(r)->type().dtype != DType::BF16)
          throw Error("bf16 step 'matmul': '" + op->name() + "' is not bf16");
    if (red)
      bindBatchSum(a, *mm, *red, inStep);
    else
      bindProduct(a, *mm, inStep);
    if (!a.stored(a.num.value(dst_.id))) throw Error("step 'matmul': its result is never stored");
    choose(a);
  }

  int64_t scratchBytes() const override { return scratch_; }

  void run(ExecContext& ctx) override {
    const dnnl::engine& e = ctx.dnnl->engine;
    dnnl::stream& s = ctx.dnnl->stream;
    auto at = [&](const Operand& o) { return ctx.ptr[static_cast<size_t>(o.id)]; };
    auto gemm = [&](const Operand& o) {
      return memory(o.gemm, e, o.offset < 0 ? at(o) : ctx.scratch + o.offset);
    };
    auto copy = [&](const Operand& o, bool in) {
      memory stored(o.stored(), e, at(o)), plain(o.plain, e, ctx.scratch + o.offset);
      o.copy.execute(s, in ? stored : plain, in ? plain : stored);
    };
    bool alone = flops_ < kParallelFlops && ctx.threads > 1;
    if (alone) omp_set_num_threads(1);
    for (const Operand* o : {&src_, &wei_})
      if (o->offset >= 0) copy(*o, true);
    prim_.execute(
        s,
        {{DNNL_ARG_SRC, gemm(src_)}, {DNNL_ARG_WEIGHTS, gemm(wei_)}, {DNNL_ARG_DST, gemm(dst_)}});
    if (dst_.offset >= 0) copy(dst_, false);
    s.wait();
    if (alone) omp_set_num_threads(ctx.threads);
  }

private:
  // transpose(X) x G summed over the batch dims: X^T G with X as [rows, k] and G as [rows, n].
  void bindBatchSum(const BindArgs& a, const Op& mm, const Op& red,
                    const std::map<const Value*, const Op*>& inStep) {
    matmul_layout::BatchSum bs = matmul_layout::batchSumOf(mm, inStep);
    int64_t k = bs.k, n = bs.n, rows = bs.rows;
    flops_ = bs.flops();
    src_ = plainOperand(a.num.id(bs.x), {k, rows}, {1, k}, {k, rows});
    if (bs.gTranspose) {
      wei_.id = a.num.id(bs.gTranspose->operand(0));
      matmul_layout::permuted(*bs.gTranspose, static_cast<size_t>(bs.g->type().rank()), wei_.dims,
                              wei_.strides);
      wei_.mm = {rows, n};
    } else {
      wei_ = plainOperand(a.num.id(bs.g), {rows, n}, {n, 1}, {rows, n});
    }
    dst_ = plainOperand(a.num.id(red.result(0)), {k, n}, {n, 1}, {k, n});
  }

  // The product, its operands read through their folded transposes, stored through a
  // transpose of the result when the step has one.
  void bindProduct(const BindArgs& a, const Op& mm,
                   const std::map<const Value*, const Op*>& inStep) {
    const Shape& out = mm.result(0)->type().shape;
    size_t rank = out.size();
    auto operand = [&](size_t i) {
      Operand o;
      const Value* v = mm.operand(i);
      auto it = inStep.find(v);
      if (it != inStep.end() && it->second->name() == opname::kTranspose) {
        matmul_layout::permuted(*it->second, rank, o.dims, o.strides);
        v = it->second->operand(0);
      } else if (it != inStep.end()) {
        throw Error("step 'matmul': operand made by '" + it->second->name() + "' in the step");
      } else {
        matmul_layout::aligned(v->type().shape, rank, o.dims, o.strides);
      }
      o.id = a.num.id(v);
      o.mm = o.dims;
      return o;
    };
    src_ = operand(0);
    wei_ = operand(1);
    flops_ = 2.0 * static_cast<double>(numel(out)) *
             static_cast<double>(mm.operand(0)->type().shape.back());
    dst_.dims = dst_.mm = dnnl_glue::toDims(out);
    dst_.strides = dnnl_glue::rowMajor(dst_.dims);
    const Value* cur = mm.result(0);
    for (const Op* op : a.ops) {
      if (op == &mm || op->result(0) == mm.operand(0) || op->result(0) == mm.operand(1)) continue;
      if (op->name() != opname::kTranspose || op->operand(0) != cur)
        throw Error("bf16 step 'matmul': no epilogue for '" + op->name() + "'");
      // Dim perm[i] of the product is dim i of the store.
      memory::dims td = dnnl_glue::toDims(op->result(0)->type().shape),
                   ts = dnnl_glue::rowMajor(td);
      const auto& perm = op->attrs().getInts("perm");
      for (size_t i = 0; i < perm.size(); ++i)
        dst_.strides[static_cast<size_t>(perm[i])] = ts[i];
      cur = op->result(0);
    }
    dst_.id = a.num.id(cur);
  }

  // bf16 where the CPU has it and oneDNN runs the step's layout on more than its reference
  // loop; else widened to f32.
  void choose(const BindArgs& a) {
    const dnnl::engine& e = a.dnnl->engine;
    if (dnnl_glue::bf16Hardware() && src_.direct() && wei_.direct()) {
      try {
        dnnl::matmul::primitive_desc pd(
            dnnl::matmul::desc(src_.stored(), wei_.stored(), dst_.stored()), e);
        if (!reference(pd)) {
          prim_ = dnnl::matmul(pd);
          for (Operand* o : {&src_, &wei_, &dst_})
            o->gemm = o->stored();
          noteBf16Step("matmul", std::string("bf16 (") + pd.impl_info_str() + ")");
          return;
        }
      } catch (const dnnl::error&) { // none for this layout: widened below
      }
    }
    for (Operand* o : {&src_, &wei_, &dst_}) {
      o->gemm = memory::desc(o->mm, dt::f32, dnnl_glue::rowMajor(o->mm));
      stage(e, *o, o != &dst_);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_.gemm, wei_.gemm, dst_.gemm), e);
    prim_ = dnnl::matmul(pd);
    noteBf16Step("matmul", std::string("widened to f32 (") + pd.impl_info_str() + ")");
  }

  // A plain f32 copy of `o` in scratch: made from its stored bytes before the GEMM (`in`), or
  // stored from after it.
  void stage(const dnnl::engine& e, Operand& o, bool in) {
    o.plain = memory::desc(o.dims, dt::f32, dnnl_glue::rowMajor(o.dims));
    o.offset = scratch_;
    scratch_ += static_cast<int64_t>((o.plain.get_size() + 63) / 64 * 64);
    memory::desc stored = o.stored();
    o.copy = in ? dnnl::reorder(dnnl::reorder::primitive_desc(e, stored, e, o.plain))
                : dnnl::reorder(dnnl::reorder::primitive_desc(e, o.plain, e, stored));
  }

  static constexpr double kParallelFlops = 1 << 20; // as the f32 kernel: one thread below
  double flops_ = 0;
  Operand src_, wei_, dst_;
  int64_t scratch_ = 0;
  dnnl::matmul prim_;
};

} // namespace

std::unique_ptr<Kernel> bindBf16Matmul(const BindArgs& a) {
  return std::make_unique<Bf16MatmulKernel>(a);
}

} // namespace shardc
