// The executable plan's library steps: matmuls with their transposes read or written as
// strides, batch-summed weight gradients and single GEMMs (oneDNN or OpenBLAS), and
// convolutions, each checked against the interpreter.
#include "PlanTestUtil.h"

#include "shardc/exec/CompiledFunction.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace shardc;
using namespace shardc::testing;

namespace {

// Attention scores with a relative position bias broadcast over the batch (Swin): oneDNN
// 2.6 has only its reference loop for a strided K^T with that binary post-op, so the bias
// add runs as a lane program over the product; the numbers stay the interpreter's.
TEST(PlanTest, ScoresWithABatchBroadcastBiasMatchTheInterpreter) {
  Planned p = plan(R"(
func @scores(input %q: f32[4,3,49,32], input %k: f32[4,3,49,32], input %bias: f32[1,3,49,49]) -> (y: f32[4,3,49,49]) {
  %kt = transpose(%k) {perm = [0, 1, 3, 2]} : f32[4,3,32,49]
  %s = matmul(%q, %kt) : f32[4,3,49,49]
  %y = add(%s, %bias) : f32[4,3,49,49]
  return %y
}
)");
  ASSERT_TRUE(p.m);
  ASSERT_NE(p.stepOf("matmul"), nullptr);
  EXPECT_EQ(p.stepOf("matmul")->ops.size(), 3u); // transpose, matmul and add: one step
  expectCompiledNearReference(p, patternedArgs(p.f(), 7, 23, 0.01, -0.1));
}

// A weight gradient summed over a batch whose other operand is itself a folded transpose
// (multi-head attention's [seq, batch, dim] layout): one GEMM over every row, the second
// operand first copied into the first's row order; nothing of the batch's size is stored.
TEST(PlanTest, BatchSumsOfTwoTransposedOperandsMatchTheInterpreter) {
  Planned p = plan(R"(
func @wg(input %x: f32[5,2,6], input %h: f32[2,5,4]) -> (dw: f32[1,6,4]) {
  %a = transpose(%h) {perm = [1, 2, 0]} : f32[5,4,2]
  %b = transpose(%a) {perm = [0, 2, 1]} : f32[5,2,4]
  %xt = transpose(%x) {perm = [0, 2, 1]} : f32[5,6,2]
  %p = matmul(%xt, %b) : f32[5,6,4]
  %dw = reduce_sum(%p) {axes = [0], keepdims = true} : f32[1,6,4]
  return %dw
}
)");
  ASSERT_TRUE(p.m);
  const PlanStep* gemm = p.stepOf("matmul");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->ops.size(), 4u) << describePlan(p.plan, p.f()); // %b, %xt, %p, %dw
  expectCompiledNearReference(p, patternedArgs(p.f(), 5, 13, 0.1, -0.6));
}

// Attention's head permutes: the matmuls read q, k and v through permuted strides and store
// the heads merged back, so no transpose runs as a step of its own.
TEST(PlanTest, MatmulsReadAndWritePermutedHeads) {
  Planned p = plan(R"(
func @heads(input %q: f32[2,16,4,8], input %k: f32[2,16,4,8], input %v: f32[2,16,4,8]) -> (y: f32[2,16,4,8]) {
  %qt = transpose(%q) {perm = [0, 2, 1, 3]} : f32[2,4,16,8]
  %kt = transpose(%k) {perm = [0, 2, 3, 1]} : f32[2,4,8,16]
  %s = matmul(%qt, %kt) : f32[2,4,16,16]
  %vt = transpose(%v) {perm = [0, 2, 1, 3]} : f32[2,4,16,8]
  %o = matmul(%s, %vt) : f32[2,4,16,8]
  %y = transpose(%o) {perm = [0, 2, 1, 3]} : f32[2,16,4,8]
  return %y
}
)");
  ASSERT_TRUE(p.m);
  EXPECT_EQ(checkPlan(p.plan, p.f()), "");
  ASSERT_EQ(p.plan.steps.size(), 2u) << describePlan(p.plan, p.f());
  EXPECT_EQ(p.plan.steps[0].ops.size(), 3u);
  EXPECT_EQ(p.plan.steps[1].ops.size(), 3u);
  std::vector<Tensor> args;
  for (size_t a = 0; a < 3; ++a) {
    args.emplace_back(p.f().argument(a)->type());
    for (int64_t i = 0; i < args.back().numel(); ++i)
      args.back().setDouble(i, 0.1 * static_cast<double>((i * (5 + 2 * a)) % 23) - 1);
  }
  std::vector<Tensor> want = interpret(p.f(), args);
  std::vector<Tensor> got = runCompiled(p.f(), args);
  EXPECT_TRUE(nearReference(got[0], want[0], interpret(p.f(), absoluteValues(args))[0]));
}

// Every transpose the fusion folds into a matmul, rank 4: operands permuted in any way that
// keeps their inner dim among the last two, results in any way that keeps the last dim. Each
// gets oneDNN's GEMM (the kernel refuses its reference loop) and the interpreter's numbers.
TEST(PlanTest, EveryFoldedTransposeRunsAsAGemm) {
  std::vector<int64_t> perm = {0, 1, 2, 3};
  const Shape dims = {2, 3, 4, 5};
  int folded = 0;
  do {
    auto str = [](const std::vector<int64_t>& v) {
      std::string s;
      for (int64_t x : v)
        s += (s.empty() ? "" : ", ") + std::to_string(x);
      return s;
    };
    Shape t(4);
    for (size_t i = 0; i < 4; ++i)
      t[i] = dims[static_cast<size_t>(perm[i])];
    std::string ty = "f32[" + str(std::vector<int64_t>(t.begin(), t.end())) + "]";
    std::string yt = "f32[" + str({t[0], t[1], t[2], t[2]}) + "]";
    if (perm[3] != 3 && perm[2] != 3) continue; // the inner dim leaves the last two
    // An operand times the transpose of its last two dims: both read through strides.
    std::string ir =
        "func @f(input %x: f32[2,3,4,5]) -> (y: " + yt + ") {\n  %a = transpose(%x) {perm = [" +
        str(perm) + "]} : " + ty + "\n  %b = transpose(%x) {perm = [" +
        str({perm[0], perm[1], perm[3], perm[2]}) + "]} : f32[" + str({t[0], t[1], t[3], t[2]}) +
        "]\n  %y = matmul(%a, %b) : " + yt + "\n  return %y\n}\n";
    SCOPED_TRACE(ir);
    Planned p = plan(ir);
    ASSERT_TRUE(p.m);
    ASSERT_EQ(p.plan.steps.size(), 1u) << describePlan(p.plan, p.f());
    ++folded;
    std::vector<Tensor> args{Tensor(p.f().argument(0)->type())};
    for (int64_t i = 0; i < args[0].numel(); ++i)
      args[0].setDouble(i, 0.1 * static_cast<double>((i * 7) % 19) - 0.9);
    EXPECT_TRUE(nearReference(runCompiled(p.f(), args)[0], interpret(p.f(), args)[0],
                              interpret(p.f(), absoluteValues(args))[0]));
    if (perm[3] != 3) continue;
    // The product of plain operands stored permuted.
    Shape z = {2, 3, 4, 4}, zt(4);
    for (size_t i = 0; i < 4; ++i)
      zt[i] = z[static_cast<size_t>(perm[i])];
    std::string ir2 = "func @g(input %x: f32[2,3,4,5], input %w: f32[2,3,5,4]) -> (y: f32[" +
                      str(std::vector<int64_t>(zt.begin(), zt.end())) +
                      "]) {\n  %m = matmul(%x, %w) : f32[2,3,4,4]\n  %y = transpose(%m) {perm = [" +
                      str(perm) + "]} : f32[" + str(std::vector<int64_t>(zt.begin(), zt.end())) +
                      "]\n  return %y\n}\n";
    SCOPED_TRACE(ir2);
    Planned q = plan(ir2);
    ASSERT_TRUE(q.m);
    ASSERT_EQ(q.plan.steps.size(), 1u) << describePlan(q.plan, q.f());
    std::vector<Tensor> args2{Tensor(q.f().argument(0)->type()), Tensor(q.f().argument(1)->type())};
    for (Tensor& a : args2)
      for (int64_t i = 0; i < a.numel(); ++i)
        a.setDouble(i, 0.1 * static_cast<double>((i * 5) % 17) - 0.8);
    EXPECT_TRUE(nearReference(runCompiled(q.f(), args2)[0], interpret(q.f(), args2)[0],
                              interpret(q.f(), absoluteValues(args2))[0]));
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(folded, 12);
}

// The GEMMs that run on OpenBLAS where it is available: batch rows joined into one GEMM with
// its bias, residual and relu applied to each thread's rows, both operands read transposed
// with a tanh after, and a weight gradient summed over the batch. Each is over the
// kernel's 2^24 FLOPs for OpenBLAS.
TEST(PlanTest, SingleGemmsMatchTheInterpreter) {
  Planned p = plan(R"(
func @f(input %x: f32[8,64,128], input %w: f32[128,256], input %b: f32[256], input %r: f32[8,64,256], input %a: f32[512,160], input %c: f32[128,512], input %g: f32[8,64,256]) -> (y: f32[8,64,256], t: f32[160,128], dw: f32[1,128,256]) {
  %p = matmul(%x, %w) : f32[8,64,256]
  %bb = broadcast(%b) {shape = [8, 64, 256]} : f32[8,64,256]
  %h = add(%p, %bb) : f32[8,64,256]
  %s = add(%r, %h) : f32[8,64,256]
  %y = relu(%s) : f32[8,64,256]
  %at = transpose(%a) {perm = [1, 0]} : f32[160,512]
  %ct = transpose(%c) {perm = [1, 0]} : f32[512,128]
  %m = matmul(%at, %ct) : f32[160,128]
  %t = tanh(%m) : f32[160,128]
  %xt = transpose(%x) {perm = [0, 2, 1]} : f32[8,128,64]
  %d = matmul(%xt, %g) : f32[8,128,256]
  %dw = reduce_sum(%d) {axes = [0], keepdims = true} : f32[1,128,256]
  return %y, %t, %dw
}
)");
  expectStepsMatchingTheInterpreter(p, 3);
}

// A matmul by a weight shared over the batch whose rows come through a transpose that keeps
// the last dim ([seq, batch] read from [batch, seq]): the GEMM walks the rows in the stored
// order and writes the product through permuted strides, with a bias (run as a lane program
// then), an activation, or nothing after it; a product stored through such a transpose
// walks them in the store's order; and the weight gradient of those sizes, large enough
// for OpenBLAS; on 1 and 2 threads.
TEST(PlanTest, RowsOfASharedWeightFollowTheStoredOrder) {
  Planned p = plan(R"(
func @proj(input %x: f32[8,128,64], input %w: f32[64,128], input %b: f32[128], input %g: f32[128,8,128], input %x2: f32[8,128,64]) -> (y: f32[128,8,128], r: f32[128,8,128], z: f32[128,8,128], dw: f32[1,128,64], dx: f32[8,128,64]) {
  %xs = transpose(%x) {perm = [1, 0, 2]} : f32[128,8,64]
  %p = matmul(%xs, %w) : f32[128,8,128]
  %bb = broadcast(%b) {shape = [128, 8, 128]} : f32[128,8,128]
  %y = add(%p, %bb) : f32[128,8,128]
  %xr = transpose(%x) {perm = [1, 0, 2]} : f32[128,8,64]
  %q = matmul(%xr, %w) : f32[128,8,128]
  %r = relu(%q) : f32[128,8,128]
  %xz = transpose(%x2) {perm = [1, 0, 2]} : f32[128,8,64]
  %z = matmul(%xz, %w) : f32[128,8,128]
  %gt = transpose(%g) {perm = [0, 2, 1]} : f32[128,128,8]
  %xd = transpose(%x2) {perm = [1, 0, 2]} : f32[128,8,64]
  %d = matmul(%gt, %xd) : f32[128,128,64]
  %dw = reduce_sum(%d) {axes = [0], keepdims = true} : f32[1,128,64]
  %wt = transpose(%w) {perm = [1, 0]} : f32[128,64]
  %o = matmul(%g, %wt) : f32[128,8,64]
  %dx = transpose(%o) {perm = [1, 0, 2]} : f32[8,128,64]
  return %y, %r, %z, %dw, %dx
}
)");
  expectStepsMatchingTheInterpreter(p, 5);
}

// A convolution's weight in the primitive's own layout: kept between runs when it is a
// parameter no result is tied to (a new tensor, a new buffer, is reordered again), and
// reordered every run when the program updates it in place.
TEST(PlanTest, ConvolutionWeightsKeptOnlyWhileUnchanged) {
  auto check = [](const char* ir, bool updated) {
    Planned p = plan(ir);
    ASSERT_TRUE(p.m);
    CompiledFunction cf(p.f(), p.plan, 2);
    std::vector<Tensor> args = patternedArgs(p.f(), 7, 19, 0.05, -0.4);
    for (int run = 0; run < 3; ++run) {
      SCOPED_TRACE("run " + std::to_string(run));
      if (run == 2) args[1] = patternedArgs(p.f(), 5, 17, 0.03, -0.2)[1]; // a new weight
      std::vector<Tensor> before = args;
      std::vector<Tensor> want = interpret(p.f(), before),
                          bound = interpret(p.f(), absoluteValues(before));
      const std::vector<Tensor>& got = cf.run(args);
      EXPECT_TRUE(nearReference(got[0], want[0], bound[0]));
      if (updated) {
        EXPECT_TRUE(nearReference(args[1], want[1], bound[1]));
      }
    }
  };
  check(R"(
func @infer(input %x: f32[1,16,12,12], param %w: f32[32,16,3,3]) -> (y: f32[1,32,12,12]) {
  %y = conv2d(%x, %w) {dilations = [1, 1], groups = 1, pads = [1, 1, 1, 1], strides = [1, 1]} : f32[1,32,12,12]
  return %y
}
)",
        false);
  check(R"(
func @train(input %x: f32[1,16,12,12], param %w: f32[32,16,3,3]) -> (y: f32[1,32,12,12], w2: f32[32,16,3,3] tied %w) {
  %y = conv2d(%x, %w) {dilations = [1, 1], groups = 1, pads = [1, 1, 1, 1], strides = [1, 1]} : f32[1,32,12,12]
  %c = constant() {value = dense<f32[], [0.5]>} : f32[]
  %s = mul(%w, %c) : f32[32,16,3,3]
  %w2 = sub(%w, %s) : f32[32,16,3,3]
  return %y, %w2
}
)",
        true);
}

} // namespace

namespace {

// `ir` with its element type `T` spelled `t`.
std::string typed(std::string ir, const std::string& t) {
  for (size_t at; (at = ir.find(": T[")) != std::string::npos;)
    ir.replace(at + 2, 1, t);
  for (size_t at; (at = ir.find(" T[")) != std::string::npos;)
    ir.replace(at + 1, 1, t);
  return ir;
}

// The bf16 plan `p` of `ir` (typed bf16) run compiled against the interpreter's f32 run of
// `ir` (typed f32) on the same values, rounded to bf16: within one bf16 rounding.
void expectNearF32Twin(const Planned& p, const char* ir) {
  std::unique_ptr<Module> twin = parseIR(typed(ir, "f32"));
  ASSERT_TRUE(twin);
  std::vector<Tensor> args = patternedArgs(p.f(), 7, 23, 0.05, -0.5), wide;
  for (const Tensor& a : args) {
    wide.emplace_back(TensorType{DType::F32, a.type().shape});
    for (int64_t i = 0; i < a.numel(); ++i)
      wide.back().setDouble(i, a.getDouble(i));
  }
  const Function& f32 = *twin->functions().front();
  std::vector<Tensor> want = interpret(f32, wide), mag = interpret(f32, absoluteValues(wide)),
                      got = runCompiled(p.f(), args);
  for (size_t r = 0; r < got.size(); ++r) {
    Tensor rounded(got[r].type()), bound(got[r].type());
    for (int64_t i = 0; i < got[r].numel(); ++i) {
      rounded.setDouble(i, want[r].getDouble(i));
      bound.setDouble(i, mag[r].getDouble(i));
    }
    EXPECT_TRUE(nearReference(got[r], rounded, bound)) << p.f().results()[r].name << " of\n" << ir;
  }
}

// bf16 matmul steps (--precision bf16): oneDNN's bf16 GEMM where the CPU has AVX512-BF16 or
// AMX, else widened to f32 in the kernel. Each keeps the f32 kernel's folded transposes: an
// operand's, a result stored permuted, a weight gradient's batch sum (with G through a
// transpose too, always widened). The sums run in f32 and round once, also a batch sum's,
// where the program's letter (the interpreter) rounds each batch element's product first: the
// step is checked against the interpreter's f32 twin of the program (`T` is bf16 or f32)
// rounded to bf16, within one bf16 rounding.
TEST(PlanTest, Bf16MatmulStepsMatchTheirF32Twin) {
  struct Case {
    const char* ir;
    size_t ops; // in the matmul step
  };
  const Case cases[] = {
      {R"(
func @lin(input %x: T[2,8,16], input %w: T[24,16]) -> (y: T[8,2,24]) {
  %wt = transpose(%w) {perm = [1, 0]} : T[16,24]
  %p = matmul(%x, %wt) : T[2,8,24]
  %y = transpose(%p) {perm = [1, 0, 2]} : T[8,2,24]
  return %y
}
)",
       3},
      {R"(
func @heads(input %q: T[2,16,4,8], input %k: T[2,16,4,8]) -> (s: T[2,4,16,16]) {
  %qh = transpose(%q) {perm = [0, 2, 1, 3]} : T[2,4,16,8]
  %kh = transpose(%k) {perm = [0, 2, 3, 1]} : T[2,4,8,16]
  %s = matmul(%qh, %kh) : T[2,4,16,16]
  return %s
}
)",
       3},
      {R"(
func @wg(input %x: T[3,10,6], input %g: T[3,10,4]) -> (dw: T[1,6,4]) {
  %xt = transpose(%x) {perm = [0, 2, 1]} : T[3,6,10]
  %p = matmul(%xt, %g) : T[3,6,4]
  %dw = reduce_sum(%p) {axes = [0], keepdims = true} : T[1,6,4]
  return %dw
}
)",
       3},
      {R"(
func @wg2(input %x: T[5,2,6], input %h: T[2,5,4]) -> (dw: T[1,6,4]) {
  %a = transpose(%h) {perm = [1, 2, 0]} : T[5,4,2]
  %b = transpose(%a) {perm = [0, 2, 1]} : T[5,2,4]
  %xt = transpose(%x) {perm = [0, 2, 1]} : T[5,6,2]
  %p = matmul(%xt, %b) : T[5,6,4]
  %dw = reduce_sum(%p) {axes = [0], keepdims = true} : T[1,6,4]
  return %dw
}
)",
       4},
  };
  for (const Case& c : cases) {
    Planned p = plan(typed(c.ir, "bf16"));
    ASSERT_TRUE(p.m);
    const PlanStep* gemm = p.stepOf("matmul");
    ASSERT_NE(gemm, nullptr) << describePlan(p.plan, p.f());
    EXPECT_EQ(gemm->ops.size(), c.ops) << describePlan(p.plan, p.f());
    EXPECT_FALSE(gemm->reference);
    expectNearF32Twin(p, c.ir);
  }
}

// bf16 convolutions and their gradients: oneDNN's in bf16 where the CPU has AVX512-BF16 or
// AMX, else in f32 with the reorders widening and rounding; against the f32 twin, as above.
TEST(PlanTest, Bf16ConvolutionStepsMatchTheirF32Twin) {
  const char* ir = R"(
func @conv(input %x: T[2,6,9,9], input %w: T[8,6,3,3], input %b: T[8], input %dy: T[2,8,5,5]) -> (y: T[2,8,5,5], dx: T[2,6,9,9], dw: T[8,6,3,3]) {
  %y = conv2d(%x, %w, %b) {dilations = [1, 1], groups = 1, pads = [1, 1, 1, 1], strides = [2, 2]} : T[2,8,5,5]
  %dx = conv2d_backward_input(%dy, %w) {dilations = [1, 1], groups = 1, input_shape = [2, 6, 9, 9], pads = [1, 1, 1, 1], strides = [2, 2]} : T[2,6,9,9]
  %dw = conv2d_backward_filter(%x, %dy) {dilations = [1, 1], filter_shape = [8, 6, 3, 3], groups = 1, pads = [1, 1, 1, 1], strides = [2, 2]} : T[8,6,3,3]
  return %y, %dx, %dw
}
)";
  Planned p = plan(typed(ir, "bf16"));
  ASSERT_TRUE(p.m);
  for (const PlanStep& s : p.plan.steps)
    EXPECT_FALSE(s.reference) << s.kernel;
  expectNearF32Twin(p, ir);
}

// The widening and rounding around an op that computes in f32 in a bf16 program run inside
// the elementwise kernel, and so does a broadcast of bf16: bf16 read and stored converted,
// rounded where the program casts.
TEST(PlanTest, Bf16CastsRunInTheElementwiseKernel) {
  Planned p = plan(R"(
func @f(input %x: bf16[4,40], input %b: bf16[40]) -> (y: bf16[4,40]) {
  %x32 = cast(%x) {to = f32} : f32[4,40]
  %bb = broadcast(%b) {shape = [4, 40]} : bf16[4,40]
  %b32 = cast(%bb) {to = f32} : f32[4,40]
  %s = mul(%x32, %b32) : f32[4,40]
  %r = cast(%s) {to = bf16} : bf16[4,40]
  %r32 = cast(%r) {to = f32} : f32[4,40]
  %t = tanh(%r32) : f32[4,40]
  %y = cast(%t) {to = bf16} : bf16[4,40]
  return %y
}
)");
  ASSERT_TRUE(p.m);
  ASSERT_EQ(p.plan.steps.size(), 1u) << describePlan(p.plan, p.f());
  EXPECT_EQ(p.plan.steps[0].kernel, "fused_elementwise");
  std::vector<Tensor> args = patternedArgs(p.f(), 7, 23, 0.37, -4.1);
  EXPECT_TRUE(allClose(runCompiled(p.f(), args)[0], interpret(p.f(), args)[0], 0, 0));
}

} // namespace
