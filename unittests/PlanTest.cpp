// The executable plan: kernel groups, where values live, the arena from liveness, and the
// checks that refuse a plan that does not fit its program.
#include "PlanTestUtil.h"

#include "shardc/exec/CompiledFunction.h"
#include "shardc/exec/ExecPlan.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace shardc;
using namespace shardc::testing;

namespace {

// A layer: matmul + bias + tanh (one kernel), a reshape (a view), an elementwise chain whose
// input dies (in place), and an SGD-style update tied to its parameter.
const char* kLayer = R"(
func @layer(input %x: f32[4,8], param %w: f32[8,16], param %b: f32[16]) -> (y: f32[64], w2: f32[8,16] tied %w) {
  %h = matmul(%x, %w) : f32[4,16]
  %bb = broadcast(%b) {shape = [4, 16]} : f32[4,16]
  %z = add(%h, %bb) : f32[4,16]
  %a = tanh(%z) : f32[4,16]
  %e = neg(%a) : f32[4,16]
  %n = exp(%e) : f32[4,16]
  %y = reshape(%n) {shape = [64]} : f32[64]
  %c = constant() {value = dense<f32[], [0.5]>} : f32[]
  %s = mul(%w, %c) : f32[8,16]
  %w2 = sub(%w, %s) : f32[8,16]
  return %y, %w2
}
)";

TEST(PlanTest, FusesViewsAndPlacesValues) {
  Planned p = plan(kLayer);
  ASSERT_TRUE(p.m);
  EXPECT_EQ(checkPlan(p.plan, p.f()), "");
  // matmul with its bias and tanh epilogue in one kernel; the rest of the chain in another.
  const PlanStep* mm = p.stepOf("matmul");
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->ops.size(), 4u); // matmul, broadcast, add, tanh
  EXPECT_EQ(p.value("h").home, ValueHome::Fused);
  EXPECT_EQ(p.value("z").home, ValueHome::Fused);
  EXPECT_EQ(p.value("a").home, ValueHome::Arena);
  // neg and exp: one loop; a's buffer dies there and exp writes over it.
  EXPECT_EQ(p.value("e").home, ValueHome::Fused);
  EXPECT_EQ(p.value("n").home, ValueHome::Arena);
  EXPECT_EQ(p.value("n").offset, p.value("a").offset);
  EXPECT_EQ(p.value("y").home, ValueHome::View);
  EXPECT_EQ(p.value("c").home, ValueHome::Constant);
  // The update is written into the parameter's own buffer.
  EXPECT_EQ(p.value("w2").home, ValueHome::Argument);
  EXPECT_EQ(p.value("w2").base, 1);
  EXPECT_TRUE(p.plan.referenceOps().empty());
  EXPECT_LE(p.plan.arenaBytes, 4 * 16 * 4 + 64);
}

TEST(PlanTest, ValuesNeverLiveAtOnceShareTheArena) {
  // a and c both die before d is made: d reuses one of their buffers.
  Planned p = plan(R"(
func @f(input %x: f32[64,64]) -> (r: f32[64,64]) {
  %a = matmul(%x, %x) : f32[64,64]
  %b = matmul(%a, %x) : f32[64,64]
  %c = matmul(%b, %x) : f32[64,64]
  %d = matmul(%c, %x) : f32[64,64]
  return %d
}
)");
  ASSERT_TRUE(p.m);
  int64_t one = 64 * 64 * 4;
  EXPECT_EQ(p.plan.arenaBytes, 2 * one) << describePlan(p.plan, p.f());
  EXPECT_NE(p.value("a").offset, p.value("b").offset);
  EXPECT_NE(p.value("b").offset, p.value("c").offset);
  // The result goes straight into its output buffer, outside the arena.
  EXPECT_EQ(p.value("d").home, ValueHome::Result);
}

TEST(PlanTest, TiedResultReadLaterStaysInTheArena) {
  // w is read by a later kernel than its update's: the update cannot overwrite it in place.
  // (Read in the update's own elementwise loop, it could: stores follow every read there.)
  Planned p = plan(R"(
func @f(param %w: f32[4], input %x: f32[4]) -> (w2: f32[4] tied %w, r: f32[]) {
  %w2 = add(%w, %x) : f32[4]
  %r = reduce_sum(%w) {axes = [0]} : f32[]
  return %w2, %r
}
)");
  ASSERT_TRUE(p.m);
  EXPECT_NE(p.value("w2").home, ValueHome::Argument);
  std::vector<Tensor> args{f32({4}, {1, 2, 3, 4}), f32({4}, {1, 1, 1, 1})};
  std::vector<Tensor> want = interpret(p.f(), args);
  std::vector<Tensor> got = runCompiled(p.f(), args);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(allClose(got[i], want[i], 0, 0)) << i;
}

TEST(PlanTest, RefusesPlansThatDoNotFit) {
  Planned p = plan(kLayer);
  ASSERT_TRUE(p.m);
  auto refuse = [&](const char* what, auto mutate, const std::string& message) {
    ExecPlan bad = p.plan;
    mutate(bad);
    std::string err = checkPlan(bad, p.f());
    EXPECT_NE(err.find(message), std::string::npos) << what << ": " << err;
    EXPECT_THROW(CompiledFunction(p.f(), bad, 1), Error) << what;
  };
  refuse(
      "unordered step", [](ExecPlan& b) { std::swap(b.steps[0].ops[0], b.steps[0].ops[1]); },
      "out of program order");
  refuse(
      "result never stored",
      [&](ExecPlan& b) {
        for (PlanStep& st : b.steps)
          if (st.kernel == "matmul") // value ids: 3 arguments, then op i's result is 3 + i
            b.values[static_cast<size_t>(3 + st.ops.back())] = {ValueHome::Fused, 0, -1};
      },
      "never stores its result");
  refuse(
      "arena overflow", [](ExecPlan& b) { b.arenaBytes = 8; }, "outside the arena");
  refuse(
      "missing value", [](ExecPlan& b) { b.values.pop_back(); }, "values");
  refuse(
      "op twice", [](ExecPlan& b) { b.steps.push_back(b.steps.front()); }, "two steps");
  refuse(
      "op dropped", [](ExecPlan& b) { b.steps.pop_back(); }, "runs in no step");
  refuse(
      "reversed steps", [](ExecPlan& b) { std::reverse(b.steps.begin(), b.steps.end()); },
      "before it is made");
  refuse(
      "bad op index", [](ExecPlan& b) { b.steps.front().ops.push_back(999); }, "lacks");
  refuse(
      "argument elsewhere",
      [](ExecPlan& b) {
        b.values[0] = {ValueHome::Arena, 0, -1};
      },
      "its own buffer");
  refuse(
      "reference flag flipped", [](ExecPlan& b) { b.steps.front().reference ^= true; },
      "is not native, but it is");
}

// Arena values live at once never share bytes; the one handover allowed is an elementwise
// step writing over an input that dies in it.
TEST(PlanTest, RefusesArenaValuesLiveAtOnceThatOverlap) {
  Planned p = plan(R"(
func @f(input %x: f32[64,64]) -> (r: f32[64,64]) {
  %a = matmul(%x, %x) : f32[64,64]
  %b = matmul(%a, %x) : f32[64,64]
  %c = matmul(%b, %a) : f32[64,64]
  %n = neg(%c) : f32[64,64]
  %d = matmul(%n, %x) : f32[64,64]
  return %d
}
)");
  ASSERT_TRUE(p.m);
  ASSERT_EQ(checkPlan(p.plan, p.f()), "");
  ASSERT_EQ(p.value("n").offset, p.value("c").offset); // neg takes c's buffer over
  // a is read by c's step, after b is made: a and b may not share bytes.
  ExecPlan bad = p.plan;
  ASSERT_EQ(p.value("b").home, ValueHome::Arena);
  bad.values[2].offset = p.value("a").offset; // value ids: %x, then the ops' results
  EXPECT_NE(checkPlan(bad, p.f()).find("share arena bytes while both are live"), std::string::npos);
  EXPECT_THROW(CompiledFunction(p.f(), bad, 1), Error);
}

// Two elementwise chains that meet (merged into one kernel), summed over the trailing axis
// and averaged over the leading one without storing what is summed, and a value of the
// first prologue read later.
const char* kReductions = R"(
func @red(input %x: f32[128,512], input %y: f32[128,512]) -> (r: f32[128], c: f32[1,512], q: f32[128,512]) {
  %a = mul(%x, %x) : f32[128,512]
  %b = neg(%y) : f32[128,512]
  %s = add(%a, %b) : f32[128,512]
  %r = reduce_sum(%s) {axes = [1], keepdims = false} : f32[128]
  %p = mul(%x, %y) : f32[128,512]
  %e = exp(%p) : f32[128,512]
  %c = reduce_mean(%e) {axes = [0], keepdims = true} : f32[1,512]
  %q = sub(%b, %x) : f32[128,512]
  return %r, %c, %q
}
)";

TEST(PlanTest, ReductionsTakeTheirElementwiseProducers) {
  Planned p = plan(kReductions);
  ASSERT_TRUE(p.m);
  EXPECT_EQ(checkPlan(p.plan, p.f()), "");
  EXPECT_EQ(p.plan.steps.size(), 3u) << describePlan(p.plan, p.f());
  const PlanStep* rows = p.stepOf("reduce_sum");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->ops.size(), 4u); // mul, neg, add, reduce_sum
  const PlanStep* cols = p.stepOf("reduce_mean");
  ASSERT_TRUE(cols);
  EXPECT_EQ(cols->ops.size(), 3u); // mul, exp, reduce_mean
  for (const char* v : {"a", "s", "p", "e"})
    EXPECT_EQ(p.value(v).home, ValueHome::Fused) << v;
  EXPECT_EQ(p.value("b").home, ValueHome::Arena); // read by the last kernel
}

TEST(PlanTest, CompiledMatchesTheInterpreter) {
  for (const char* ir : {kLayer, kReductions}) {
    Planned p = plan(ir);
    ASSERT_TRUE(p.m);
    expectCompiledNearReference(p, patternedArgs(p.f(), 7, 11, 0.1, -0.5));
  }
}

// A value read early through a view (the reshape of a batch norm's scale) keeps its group
// from taking later members of its shape (the backward pass's uses of the same rsqrt): the
// group would run after the read.
TEST(PlanTest, AReadThroughAViewClosesTheGroup) {
  Planned p = plan(R"(
func @f(input %a: f32[8], input %x: f32[3,8,2]) -> (y: f32[3,8,2], z: f32[8]) {
  %r = rsqrt(%a) : f32[8]
  %v = reshape(%r) {shape = [8, 1]} : f32[8,1]
  %y = mul(%x, %v) : f32[3,8,2]
  %s = reduce_sum(%y) {axes = [0, 2]} : f32[8]
  %z = mul(%s, %r) : f32[8]
  return %y, %z
}
)");
  ASSERT_TRUE(p.m);
  EXPECT_EQ(checkPlan(p.plan, p.f()), "");
  std::vector<Tensor> args{f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), Tensor(p.f().argument(1)->type())};
  for (int64_t k = 0; k < args[1].numel(); ++k)
    args[1].setDouble(k, 0.1 * static_cast<double>(k));
  expectCompiledNearReference(p, args);
}

// Reversals are strided copies read backwards: along the last axis of rows long enough for
// the tiled copy, along a middle axis, along several at once, of i64, and fused into a
// slice's input (a negative-step slice). Copies are exact.
// Sums over 2^16 elements in every reduction mode (rows, columns, the general walk of a batch
// norm's N, H and W, and with an elementwise prologue) keep float's precision: a running
// float sum would be off by ~1e-5 there.
TEST(PlanTest, LongSumsKeepFloatPrecision) {
  Planned p = plan(R"(
func @sums(input %x: f32[16,4,64,64], input %r: f32[2,65536], input %c: f32[65536,3]) -> (bn: f32[4], rows: f32[2], cols: f32[3], sq: f32[3], sqrows: f32[2]) {
  %bn = reduce_mean(%x) {axes = [0, 2, 3]} : f32[4]
  %rows = reduce_sum(%r) {axes = [1]} : f32[2]
  %cols = reduce_sum(%c) {axes = [0]} : f32[3]
  %c2 = mul(%c, %c) : f32[65536,3]
  %sq = reduce_sum(%c2) {axes = [0]} : f32[3]
  %r2 = mul(%r, %r) : f32[2,65536]
  %sqrows = reduce_sum(%r2) {axes = [1]} : f32[2]
  return %bn, %rows, %cols, %sq, %sqrows
}
)");
  ASSERT_TRUE(p.m);
  std::vector<Tensor> args = patternedArgs(p.f(), 7, 1000, 0.001, 1.0);
  std::vector<Tensor> want = interpret(p.f(), args), got = runCompiled(p.f(), args);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(allClose(got[i], want[i], 2e-7, 0.0)) << p.f().results()[i].name;
  EXPECT_TRUE(p.plan.referenceOps().empty());
}

TEST(PlanTest, ReversalsMatchTheInterpreter) {
  Planned p = plan(R"(
func @rev(input %x: f32[3,20,40], input %i: i64[5,7]) -> (a: f32[3,20,40], b: f32[3,20,40], c: f32[3,20,40], d: i64[5,7], e: f32[3,7,40]) {
  %a = reverse(%x) {axes = [2]} : f32[3,20,40]
  %b = reverse(%x) {axes = [1]} : f32[3,20,40]
  %c = reverse(%x) {axes = [0, 2]} : f32[3,20,40]
  %d = reverse(%i) {axes = [0, 1]} : i64[5,7]
  %e = slice(%b) {start = [0, 1, 0], limit = [3, 20, 40], stride = [1, 3, 1]} : f32[3,7,40]
  return %a, %b, %c, %d, %e
}
)");
  ASSERT_TRUE(p.m);
  std::vector<Tensor> args;
  for (size_t i = 0; i < p.f().numArguments(); ++i) {
    Tensor t(p.f().argument(i)->type());
    for (int64_t k = 0; k < t.numel(); ++k)
      t.setDouble(k, static_cast<double>(k));
    args.push_back(std::move(t));
  }
  std::vector<Tensor> want = interpret(p.f(), args), got = runCompiled(p.f(), args);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(allClose(got[i], want[i], 0.0, 0.0)) << p.f().results()[i].name;
  EXPECT_TRUE(p.plan.referenceOps().empty());
}

// Float64 elementwise ops run on the wide kernels: neighbouring dims every operand walks alike
// merge into longer rows, and large ops split their rows over threads. Each element still goes
// through the reference's own element function: bitwise equal on 1 and 2 threads.
TEST(PlanTest, Float64ElementwiseMatchesTheInterpreterBitwise) {
  Planned p = plan(R"(
func @wide(input %x: f64[8,24,16,16], input %c: f64[1,24,1,1], input %n: f64[8,24,1,1], input %w: f64[16], input %t: f64[8,16,24,16]) -> (a: f64[8,24,16,16], b: f64[8,24,16,16], c: f64[8,24,16,16], d: f64[8,24,16,16], e: i1[8,24,16,16]) {
  %a = mul(%x, %c) : f64[8,24,16,16]
  %b = sub(%x, %n) : f64[8,24,16,16]
  %c1 = add(%x, %w) : f64[8,24,16,16]
  %tt = transpose(%t) {perm = [0, 2, 1, 3]} : f64[8,24,16,16]
  %d = div(%x, %tt) : f64[8,24,16,16]
  %s = sigmoid(%a) : f64[8,24,16,16]
  %e = compare(%s, %b) {direction = "lt"} : i1[8,24,16,16]
  return %a, %b, %c1, %d, %e
}
)");
  ASSERT_TRUE(p.m);
  EXPECT_TRUE(p.plan.referenceOps().empty());
  std::vector<Tensor> args = patternedArgs(p.f(), 7, 23, 0.25, 0.5);
  std::vector<Tensor> want = interpret(p.f(), args);
  for (int threads : {1, 2}) {
    std::vector<Tensor> got = runCompiled(p.f(), args, nullptr, threads);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_TRUE(allClose(got[i], want[i], 0.0, 0.0))
          << p.f().results()[i].name << ", " << threads << " threads";
  }
}

// The native dropout kernel draws the interpreter's mask: a rank-3 tensor whose index
// operands start past 0 (a device's block of a larger tensor) and an odd inner size.
TEST(PlanTest, DropoutMatchesTheInterpreter) {
  Planned p = plan(R"(
func @drop(input %x: f32[4,33,37], input %ratio: f64[], opt_state %rng: i64[2]) -> (y: f32[4,33,37]) {
  %i0 = iota() {shape = [4, 1, 1], axis = 0} : i64[4,1,1]
  %c = constant() {value = dense<i64[], [4]>} : i64[]
  %j0 = add(%i0, %c) : i64[4,1,1]
  %i1 = iota() {shape = [1, 33, 1], axis = 1} : i64[1,33,1]
  %i2 = iota() {shape = [1, 1, 37], axis = 2} : i64[1,1,37]
  %y = dropout(%x, %ratio, %rng, %j0, %i1, %i2) {strides = [1221, 37, 1], stream = 3} : f32[4,33,37]
  return %y
}
)");
  ASSERT_TRUE(p.m);
  for (double ratio : {0.0, 0.25, 1.0}) {
    Tensor x(p.f().argument(0)->type());
    for (int64_t k = 0; k < x.numel(); ++k)
      x.setDouble(k, 0.01 * static_cast<double>(k % 101) - 0.5);
    std::vector<Tensor> args{x, f64({}, {ratio}), i64({2}, {12345, 6})};
    std::vector<Tensor> want = interpret(p.f(), args), got = runCompiled(p.f(), args);
    EXPECT_TRUE(allClose(got[0], want[0], 1e-6, 0.0)) << ratio;
  }
  EXPECT_TRUE(p.plan.referenceOps().empty());
}

// A causal mask (a kept prefix per row: the fast path) and the same program with a mask that
// is not one (the general path): both as the interpreter computes them.
TEST(PlanTest, MaskedSoftmaxMatchesTheInterpreter) {
  Planned p = plan(R"(
func @attn(input %s: f32[2,3,16,16], input %m: i1[1,1,16,16]) -> (y: f32[2,3,16,16]) {
  %inf = constant() {value = dense<f32[], [-inf]>} : f32[]
  %w = where(%m, %inf, %s) : f32[2,3,16,16]
  %y = softmax(%w) {axis = 3} : f32[2,3,16,16]
  return %y
}
)");
  ASSERT_TRUE(p.m);
  ASSERT_EQ(p.plan.steps.size(), 1u) << describePlan(p.plan, p.f());
  Tensor s(p.f().argument(0)->type());
  for (int64_t k = 0; k < s.numel(); ++k)
    s.setDouble(k, 0.37 * static_cast<double>((k * 13) % 17) - 3);
  for (bool causal : {true, false}) {
    SCOPED_TRACE(causal ? "causal" : "not a prefix");
    Tensor m(p.f().argument(1)->type());
    for (int64_t i = 0; i < 16; ++i)
      for (int64_t j = 0; j < 16; ++j)
        m.setDouble(i * 16 + j, causal ? j > i : (i + j) % 3 == 1);
    std::vector<Tensor> args{s, m};
    std::vector<Tensor> want = interpret(p.f(), args);
    std::vector<Tensor> got = runCompiled(p.f(), args);
    EXPECT_TRUE(nearReference(got[0], want[0], interpret(p.f(), absoluteValues(args))[0]));
  }
}

// Rows shorter than a vector run 16 to a block, a row per lane, and what is left row by row:
// a causal-masked softmax over 8 keys (40 rows: two blocks and 8 rows), softmax and
// log_softmax over rows of 5 (37 rows), one row with a -inf score and one with scores of
// 1e4, as the interpreter computes them.
TEST(PlanTest, ShortRowSoftmaxMatchesTheInterpreter) {
  Planned p = plan(R"(
func @short(input %s: f32[1,5,8,8], input %m: i1[1,1,8,8], input %x: f32[37,5]) -> (y: f32[1,5,8,8], l: f32[37,5], z: f32[37,5]) {
  %inf = constant() {value = dense<f32[], [-inf]>} : f32[]
  %w = where(%m, %inf, %s) : f32[1,5,8,8]
  %y = softmax(%w) {axis = 3} : f32[1,5,8,8]
  %l = log_softmax(%x) {axis = 1} : f32[37,5]
  %z = softmax(%x) {axis = -1} : f32[37,5]
  return %y, %l, %z
}
)");
  ASSERT_TRUE(p.m);
  Tensor s(p.f().argument(0)->type()), m(p.f().argument(1)->type()), x(p.f().argument(2)->type());
  for (int64_t k = 0; k < s.numel(); ++k)
    s.setDouble(k, 0.37 * static_cast<double>((k * 13) % 17) - 3);
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 8; ++j)
      m.setDouble(i * 8 + j, j > i);
  for (int64_t k = 0; k < x.numel(); ++k)
    x.setDouble(k, k / 5 == 17 ? 1e4 : 0.29 * static_cast<double>((k * 7) % 11) - 1.5);
  x.setDouble(3 * 5 + 2, -std::numeric_limits<double>::infinity());
  std::vector<Tensor> args{s, m, x};
  std::vector<Tensor> want = interpret(p.f(), args), got = runCompiled(p.f(), args);
  std::vector<Tensor> size = interpret(p.f(), absoluteValues(args));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(nearReference(got[i], want[i], size[i])) << p.f().results()[i].name;
}

// A one-hot mask as cross-entropy builds it: iota compared with integer labels, counted in
// the loop that reads it (not a constant); labels outside the row, past 2^24 and negative
// included, match no index, as in the interpreter. A small iota is a constant read as
// integers; a large one that is also a result is stored as integers.
TEST(PlanTest, OneHotFromIotaMatchesTheInterpreter) {
  Planned p = plan(R"(
func @onehot(input %t: i64[64,1], input %u: i32[1,4096], input %x: f32[64,4096]) -> (s: f32[64], c: f32[4096], k: i64[64,4096]) {
  %i = iota() {axis = 1, dtype = i64, shape = [64, 4096]} : i64[64,4096]
  %m = compare(%i, %t) {direction = "eq"} : i1[64,4096]
  %z = constant() {value = dense<f32[], [0.0]>} : f32[]
  %w = where(%m, %x, %z) : f32[64,4096]
  %s = reduce_sum(%w) {axes = [1], keepdims = false} : f32[64]
  %j = iota() {axis = 0, dtype = i32, shape = [64, 4096]} : i32[64,4096]
  %l = compare(%u, %j) {direction = "lt"} : i1[64,4096]
  %v = where(%l, %x, %z) : f32[64,4096]
  %c = reduce_sum(%v) {axes = [0], keepdims = false} : f32[4096]
  %k = iota() {axis = 0, dtype = i64, shape = [64, 4096]} : i64[64,4096]
  return %s, %c, %k
}
)");
  ASSERT_TRUE(p.m);
  EXPECT_EQ(checkPlan(p.plan, p.f()), "");
  EXPECT_TRUE(p.plan.referenceOps().empty());
  for (const char* v : {"i", "m", "w", "l", "v"})
    EXPECT_EQ(p.value(v).home, ValueHome::Fused) << v;
  EXPECT_EQ(p.value("j").home, ValueHome::Constant); // 1 MiB of i32
  EXPECT_EQ(p.value("k").home, ValueHome::Result);
  std::vector<Tensor> args;
  for (size_t a = 0; a < 3; ++a)
    args.emplace_back(p.f().argument(a)->type());
  const int64_t odd[] = {-100, 4095, 0, (int64_t(1) << 40) + 3, (int64_t(1) << 24) + 1, 4096};
  for (int64_t r = 0; r < 64; ++r)
    args[0].setInt(r, r < 6 ? odd[r] : (r * 613) % 4096);
  for (int64_t k = 0; k < 4096; ++k)
    args[1].setInt(k, k % 7 == 0 ? -5 : (k * 31) % 70);
  for (int64_t k = 0; k < args[2].numel(); ++k)
    args[2].setDouble(k, 0.25 * static_cast<double>((k * 13) % 17) - 2);
  std::vector<Tensor> want = interpret(p.f(), args);
  std::vector<Tensor> got = runCompiled(p.f(), args);
  std::vector<Tensor> scale = interpret(p.f(), absoluteValues(args));
  EXPECT_TRUE(nearReference(got[0], want[0], scale[0]));
  EXPECT_TRUE(nearReference(got[1], want[1], scale[1]));
  EXPECT_TRUE(got[2].identical(want[2]));
}

} // namespace

// A cross-entropy's one-hot selections: the row sums pick label[r]'s element, and a label
// out of range (ignored, -100, or past the classes) gives 0, as the full sum does. The second
// selects from a broadcast (the gradient's row sums), with i32 labels.
TEST(PlanTest, OneHotRowSumsMatchTheInterpreter) {
  Planned p = plan(R"(
func @f(input %x: f32[6,40], input %l: i64[6], input %g: f32[6,1], input %k: i32[6,1]) -> (loss: f32[6], s: f32[6,1]) {
  %lp = log_softmax(%x) {axis = 1} : f32[6,40]
  %l1 = reshape(%l) {shape = [6, 1]} : i64[6,1]
  %c = iota() {axis = 1, dtype = i64, shape = [6, 40]} : i64[6,40]
  %hit = compare(%c, %l1) {direction = "eq"} : i1[6,40]
  %zero = constant() {value = dense<f32[], [0.0]>} : f32[]
  %w = where(%hit, %lp, %zero) : f32[6,40]
  %loss = reduce_sum(%w) {axes = [1], keepdims = false} : f32[6]
  %gb = broadcast(%g) {shape = [6, 40]} : f32[6,40]
  %zb = broadcast(%zero) {shape = [6, 40]} : f32[6,40]
  %c2 = iota() {axis = 1, dtype = i32, shape = [6, 40]} : i32[6,40]
  %hit2 = compare(%k, %c2) {direction = "eq"} : i1[6,40]
  %w2 = where(%hit2, %gb, %zb) : f32[6,40]
  %s = reduce_sum(%w2) {axes = [1], keepdims = true} : f32[6,1]
  return %loss, %s
}
)");
  ASSERT_TRUE(p.m);
  const PlanStep* pick = p.stepOf("reduce_sum");
  ASSERT_TRUE(pick) << describePlan(p.plan, p.f());
  EXPECT_GE(pick->ops.size(), 3u) << describePlan(p.plan, p.f()); // compare, where, reduce_sum
  std::vector<Tensor> args;
  for (size_t a = 0; a < p.f().numArguments(); ++a)
    args.emplace_back(p.f().argument(a)->type());
  for (int64_t i = 0; i < 240; ++i)
    args[0].setDouble(i, 0.1 * static_cast<double>((i * 7) % 23) - 1);
  std::vector<int64_t> labels = {0, 39, 17, -100, 40, 5};
  for (int64_t i = 0; i < 6; ++i) {
    args[1].setInt(i, labels[static_cast<size_t>(i)]);
    args[2].setDouble(i, 0.5 + static_cast<double>(i));
    args[3].setInt(i, labels[static_cast<size_t>(5 - i)]);
  }
  std::vector<Tensor> want = interpret(p.f(), args);
  for (int threads : {1, 2}) {
    std::vector<Tensor> got = runCompiled(p.f(), args, nullptr, threads);
    for (size_t r = 0; r < want.size(); ++r)
      EXPECT_TRUE(nearReference(got[r], want[r], want[r])) << p.f().results()[r].name;
    EXPECT_EQ(got[0].getDouble(3), 0.0); // ignored
    EXPECT_EQ(got[0].getDouble(4), 0.0); // past the last class
    EXPECT_EQ(got[1].getDouble(0), 0.5); // label 5: g[0]
    EXPECT_EQ(got[1].getDouble(1), 0.0); // label 40, past the last class
  }
}

// When the step also stores values of its prologue (the mask, read again by a gradient, or
// here the selected values), the row sums read whole rows, so that those are written in full.
TEST(PlanTest, OneHotRowSumsKeepWhatTheStepStores) {
  Planned p = plan(R"(
func @f(input %x: f32[6,40], input %l: i64[6,1]) -> (loss: f32[6], hit: i1[6,40], nx: f32[6,40]) {
  %c = iota() {axis = 1, dtype = i64, shape = [6, 40]} : i64[6,40]
  %hit = compare(%c, %l) {direction = "eq"} : i1[6,40]
  %zero = constant() {value = dense<f32[], [0.0]>} : f32[]
  %nx = neg(%x) : f32[6,40]
  %w = where(%hit, %nx, %zero) : f32[6,40]
  %loss = reduce_sum(%w) {axes = [1], keepdims = false} : f32[6]
  return %loss, %hit, %nx
}
)");
  ASSERT_TRUE(p.m);
  std::vector<Tensor> args{Tensor(p.f().argument(0)->type()), Tensor(p.f().argument(1)->type())};
  for (int64_t i = 0; i < 240; ++i)
    args[0].setDouble(i, 0.1 * static_cast<double>(i % 17) - 0.8);
  for (int64_t i = 0; i < 6; ++i)
    args[1].setInt(i, (i * 13) % 45);
  std::vector<Tensor> want = interpret(p.f(), args);
  for (int threads : {1, 2}) {
    std::vector<Tensor> got = runCompiled(p.f(), args, nullptr, threads);
    for (size_t r = 0; r < want.size(); ++r)
      EXPECT_TRUE(nearReference(got[r], want[r], want[r])) << p.f().results()[r].name << "\n"
                                                           << describePlan(p.plan, p.f());
  }
}

// Multiplies that the lane program joins to the add or sub reading them (mul + x, x + mul,
// mul - x, x - mul, as in Adam's moments and update), next to ones it must keep apart: a
// mul read twice, and a mul that is itself stored.
TEST(PlanTest, MultiplyAddsMatchTheInterpreter) {
  Planned p = plan(R"(
func @f(input %a: f32[64,40], input %b: f32[64,40], input %c: f32[64,40]) -> (r: f32[64,40], q: f32[64,40], m: f32[64,40]) {
  %m1 = mul(%a, %b) : f32[64,40]
  %s1 = add(%m1, %c) : f32[64,40]
  %m2 = mul(%s1, %b) : f32[64,40]
  %s2 = add(%c, %m2) : f32[64,40]
  %m3 = mul(%s2, %a) : f32[64,40]
  %s3 = sub(%m3, %b) : f32[64,40]
  %m4 = mul(%s3, %c) : f32[64,40]
  %s4 = sub(%a, %m4) : f32[64,40]
  %m5 = mul(%s4, %s4) : f32[64,40]
  %s5 = add(%m5, %m5) : f32[64,40]
  %m = mul(%s5, %a) : f32[64,40]
  %r = sub(%m, %c) : f32[64,40]
  %q = add(%m, %s1) : f32[64,40]
  return %r, %q, %m
}
)");
  ASSERT_TRUE(p.m);
  ASSERT_EQ(p.plan.steps.size(), 1u) << describePlan(p.plan, p.f());
  expectInterpreterResults(p, 2);
}

// gelu and its gradient, both forms, over [-12, 12): the compiled sigmoid forms against the
// interpreter's tanh and erf, saturated ends included; the gradient as a lane op of a fused
// kernel too.
TEST(PlanTest, GeluAndItsGradientMatchTheInterpreter) {
  Planned p = plan(R"(
func @f(input %x: f32[3,1000], input %dy: f32[3,1000]) -> (y: f32[3,1000], yt: f32[3,1000], g: f32[3,1000], gt: f32[3,1000], r: f32[3,1000]) {
  %y = gelu(%x) : f32[3,1000]
  %yt = gelu(%x) {approximate = "tanh"} : f32[3,1000]
  %g = gelu_grad(%x, %dy) : f32[3,1000]
  %gt = gelu_grad(%x, %dy) {approximate = "tanh"} : f32[3,1000]
  %d = mul(%dy, %x) : f32[3,1000]
  %gd = gelu_grad(%x, %d) {approximate = "tanh"} : f32[3,1000]
  %r = add(%gd, %x) : f32[3,1000]
  return %y, %yt, %g, %gt, %r
}
)");
  ASSERT_TRUE(p.m);
  EXPECT_TRUE(p.plan.referenceOps().empty());
  const PlanStep* fused = p.stepOf("fused_elementwise");
  ASSERT_TRUE(fused);
  EXPECT_EQ(fused->ops.size(), 3u) << describePlan(p.plan, p.f());
  expectCompiledNearReference(p, patternedArgs(p.f(), 7, 997, 24.0 / 997, -12));
}
