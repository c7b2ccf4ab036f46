// conv2d and its two backward ops through oneDNN, on NCHW / OIHW buffers (groups as GOIHW).
// The primitives pick their own layouts (format any); plain buffers are reordered in and out.
// bf16 steps compute in bf16 (products exact in f32, sums in f32, one rounding at the store) or
// in f32, the reorders widening the operands and rounding the result: in f32 where the CPU has
// neither AVX512-BF16 nor AMX, else whichever is timed faster for the step's shape on this
// machine (GemmChoice.h): oneDNN's bf16 kernels are not faster for every shape.
#include "DnnlGlue.h"
#include "Kernel.h"
#include "shardc/exec/GemmChoice.h"

#include "../ops/WindowUtil.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <omp.h>
#include <sstream>
#include <utility>

namespace shardc {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

// A buffer the primitive reads or writes: the plain layout shardc keeps, and the layout the
// primitive chose, with a reorder between them when they differ. A `fixed` input (a
// parameter no run writes) is reordered once per buffer: the copy is kept between runs.
struct Operand {
  int64_t id = -1;
  memory::desc plain, chosen;
  memory scratch; // in the chosen layout, when it differs
  bool reordered = false;
  bool fixed = false;
  const uint8_t* keptFrom = nullptr; // the buffer `scratch` holds a fixed input of

  void choose(const memory::desc& c, const dnnl::engine& eng) {
    chosen = c;
    reordered = c != plain;
    if (reordered) scratch = memory(c, eng);
  }
  memory bind(ExecContext& ctx, bool input) {
    uint8_t* bytes = ctx.ptr[static_cast<size_t>(id)];
    memory user(plain, ctx.dnnl->engine, bytes);
    if (!reordered) return user;
    if (input && !(fixed && keptFrom == bytes)) {
      dnnl::reorder(user, scratch).execute(ctx.dnnl->stream, user, scratch);
      keptFrom = bytes;
    }
    return scratch;
  }
  void writeBack(ExecContext& ctx) {
    if (!reordered) return;
    memory user(plain, ctx.dnnl->engine, ctx.ptr[static_cast<size_t>(id)]);
    dnnl::reorder(scratch, user).execute(ctx.dnnl->stream, scratch, user);
  }
};

// A parameter the program never updates (no result is tied to it: an inference program's
// weights). CompiledFunction::run takes such an argument as read-only between runs.
// Reordering ResNet-50's weights on every forward took a fifth of its step.
bool fixedParameter(const Value* v, const Function& f) {
  if (!v->isArgument() || v->argKind() != ArgKind::Param) return false;
  return std::none_of(f.results().begin(), f.results().end(), [&](const FuncResult& r) {
    return r.tiedArg == static_cast<int64_t>(v->index());
  });
}

class ConvKernel : public Kernel {
public:
  // `bf16`: compute in bf16 (a bf16 step on a CPU with bf16 instructions).
  ConvKernel(const BindArgs& a, bool bf16) {
    const Op& op = a.anchor();
    kind_ = op.name();
    const AttrDict& at = op.attrs();
    Shape xs, ws, ys;
    if (kind_ == opname::kConv2d) {
      xs = op.operand(0)->type().shape;
      ws = op.operand(1)->type().shape;
      ys = op.result(0)->type().shape;
    } else if (kind_ == opname::kConv2dBackwardInput) {
      ys = op.operand(0)->type().shape;
      ws = op.operand(1)->type().shape;
      xs = op.result(0)->type().shape;
    } else {
      xs = op.operand(0)->type().shape;
      ys = op.operand(1)->type().shape;
      ws = op.result(0)->type().shape;
    }
    ops::Window w;
    ops::readWindow(at, ws[2], ws[3], w);
    int64_t g = at.getInt("groups");
    memory::dims xd = dnnl_glue::toDims(xs), yd = dnnl_glue::toDims(ys);
    memory::dims wd =
        g == 1 ? dnnl_glue::toDims(ws) : memory::dims{g, ws[0] / g, ws[1], ws[2], ws[3]};
    memory::dims strides{w.sh, w.sw}, dil{w.dh - 1, w.dw - 1}, pl{w.pt, w.pl}, pr{w.pb, w.pr};
    memory::data_type stored = op.result(0)->type().dtype == DType::BF16 ? memory::data_type::bf16
                                                                         : memory::data_type::f32;
    memory::data_type compute = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    auto anyDesc = [&](const memory::dims& d) { return memory::desc(d, compute, tag::any); };
    x_.plain = memory::desc(xd, stored, tag::nchw);
    y_.plain = memory::desc(yd, stored, tag::nchw);
    w_.plain = memory::desc(wd, stored, g == 1 ? tag::oihw : tag::goihw);
    const dnnl::engine& eng = a.dnnl->engine;
    bool bias = kind_ == opname::kConv2d && op.numOperands() > 2;
    memory::desc biasDesc({ws[0]}, compute, tag::x);
    if (bias) {
      b_.plain = memory::desc({ws[0]}, stored, tag::x);
      b_.id = a.num.id(op.operand(2));
      b_.choose(biasDesc, eng);
    }
    try {
      auto fwdDesc =
          bias ? dnnl::convolution_forward::desc(
                     dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                     anyDesc(xd), anyDesc(wd), biasDesc, anyDesc(yd), strides, dil, pl, pr)
               : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                                 dnnl::algorithm::convolution_direct, anyDesc(xd),
                                                 anyDesc(wd), anyDesc(yd), strides, dil, pl, pr);
      dnnl::convolution_forward::primitive_desc fwd(fwdDesc, eng);
      if (kind_ == opname::kConv2d) {
        x_.choose(fwd.src_desc(), eng);
        w_.choose(fwd.weights_desc(), eng);
        y_.choose(fwd.dst_desc(), eng);
        prim_ = dnnl::convolution_forward(fwd);
        x_.id = a.num.id(op.operand(0));
        w_.id = a.num.id(op.operand(1));
        w_.fixed = fixedParameter(op.operand(1), *op.parent());
        y_.id = a.num.id(op.result(0));
      } else if (kind_ == opname::kConv2dBackwardInput) {
        dnnl::convolution_backward_data::primitive_desc bwd(
            dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, anyDesc(xd),
                                                  anyDesc(wd), anyDesc(yd), strides, dil, pl, pr),
            eng, fwd);
        x_.choose(bwd.diff_src_desc(), eng);
        w_.choose(bwd.weights_desc(), eng);
        y_.choose(bwd.diff_dst_desc(), eng);
        prim_ = dnnl::convolution_backward_data(bwd);
        y_.id = a.num.id(op.operand(0));
        w_.id = a.num.id(op.operand(1));
        x_.id = a.num.id(op.result(0));
      } else {
        dnnl::convolution_backward_weights::primitive_desc bwd(
            dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct,
                                                     anyDesc(xd), anyDesc(wd), anyDesc(yd), strides,
                                                     dil, pl, pr),
            eng, fwd);
        x_.choose(bwd.src_desc(), eng);
        w_.choose(bwd.diff_weights_desc(), eng);
        y_.choose(bwd.diff_dst_desc(), eng);
        prim_ = dnnl::convolution_backward_weights(bwd);
        x_.id = a.num.id(op.operand(0));
        y_.id = a.num.id(op.operand(1));
        w_.id = a.num.id(op.result(0));
      }
    } catch (const dnnl::error& e) {
      throw Error("oneDNN has no " + kind_ + " for this step: " + e.what());
    }
  }

  // Seconds per run on zeroed buffers of the step's sizes.
  double seconds(const BindArgs& a) {
    std::vector<std::vector<uint8_t>> bytes;
    ExecContext ctx;
    ctx.ptr.assign(static_cast<size_t>(a.num.count()), nullptr);
    ctx.dnnl = a.dnnl;
    ctx.threads = omp_get_max_threads();
    for (const Operand* o : {&x_, &w_, &y_, &b_})
      if (o->id >= 0) {
        bytes.emplace_back(o->plain.get_size(), 0);
        ctx.ptr[static_cast<size_t>(o->id)] = bytes.back().data();
      }
    return leastSeconds(3, [&] { run(ctx); });
  }

  void run(ExecContext& ctx) override {
    auto& s = ctx.dnnl->stream;
    if (kind_ == opname::kConv2d) {
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, x_.bind(ctx, true)},
                                           {DNNL_ARG_WEIGHTS, w_.bind(ctx, true)},
                                           {DNNL_ARG_DST, y_.bind(ctx, false)}};
      if (b_.id >= 0) args.emplace(DNNL_ARG_BIAS, b_.bind(ctx, true));
      prim_.execute(s, args);
      y_.writeBack(ctx);
    } else if (kind_ == opname::kConv2dBackwardInput) {
      prim_.execute(s, {{DNNL_ARG_DIFF_DST, y_.bind(ctx, true)},
                        {DNNL_ARG_WEIGHTS, w_.bind(ctx, true)},
                        {DNNL_ARG_DIFF_SRC, x_.bind(ctx, false)}});
      x_.writeBack(ctx);
    } else {
      prim_.execute(s, {{DNNL_ARG_SRC, x_.bind(ctx, true)},
                        {DNNL_ARG_DIFF_DST, y_.bind(ctx, true)},
                        {DNNL_ARG_DIFF_WEIGHTS, w_.bind(ctx, false)}});
      w_.writeBack(ctx);
    }
    s.wait();
  }

private:
  std::string kind_;
  Operand x_, w_, y_, b_;
  dnnl::primitive prim_;
};

} // namespace

// The step's shapes and window, as the choice of bf16 or f32 names it.
std::string convKey(const Op& op) {
  std::ostringstream key;
  key << "conv-" << op.name() << ":";
  for (const Value* v : op.operands())
    key << v->type().str() << ",";
  key << op.result(0)->type().str();
  for (const char* name : {"strides", "pads", "dilations"})
    for (int64_t x : op.attrs().getInts(name))
      key << "," << x;
  key << ",g" << op.attrs().getInt("groups") << ",threads" << omp_get_max_threads();
  return key.str();
}

std::unique_ptr<Kernel> bindConv(const BindArgs& a) {
  const Op& op = a.anchor();
  if (op.result(0)->type().dtype != DType::BF16 || !dnnl_glue::bf16Hardware())
    return std::make_unique<ConvKernel>(a, false);
  try {
    ConvKernel probe(a, true);
  } catch (const Error&) { // oneDNN has no bf16 primitive for this step
    noteBf16Step("convolution", "f32, no bf16 kernel");
    return std::make_unique<ConvKernel>(a, false);
  }
  bool bf16 = firstWayFaster(convKey(op), "bf16", "f32", [&] {
    return std::make_pair(ConvKernel(a, true).seconds(a), ConvKernel(a, false).seconds(a));
  });
  noteBf16Step("convolution", bf16 ? "bf16" : "f32, timed faster here");
  return std::make_unique<ConvKernel>(a, bf16);
}

} // namespace shardc
