// `scan`: the compiled kernel (slices read and written in place, carried values through the
// kernel's buffers or the saved stack) and the unrolled program compute what the reference
// interpreter does, forwards and in reverse, over odd and even lengths.
#include "TestUtil.h"

#include "shardc/exec/CompiledFunction.h"
#include "shardc/exec/ExecPlan.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/ir/IR.h"
#include "shardc/transforms/Passes.h"

#include <gtest/gtest.h>

#include <string>

using namespace shardc;
using namespace shardc::testing;

namespace {

// Two carried values, a shared scale, two stacked operands and two stacked results.
std::string scanProgram(int length, bool reverse, bool save) {
  std::string L = std::to_string(length);
  std::string results = "f32[3,5], f32[5], f32[" + L + ",3,5], f32[" + L + ",5]";
  std::string declared = "ta: f32[3,5], tb: f32[5], y1: f32[" + L + ",3,5], y2: f32[" + L + ",5]";
  std::string names = std::string("%ta, %tb, %y1, %y2") + (save ? ", %sa, %sb" : "");
  if (save) {
    results += ", f32[" + L + ",3,5], f32[" + L + ",5]";
    declared += ", sa: f32[" + L + ",3,5], sb: f32[" + L + ",5]";
  }
  return "func @f(input %a: f32[3,5], input %b: f32[5], input %k: f32[], input %xs: f32[" + L +
         ",3,5], input %zs: f32[" + L + ",5]) -> (" + declared + ") {\n" + "  " + names +
         " = scan(%a, %b, %k, %xs, %zs) {callee = \"g\", length = " + L +
         ", carried = 2, shared = 1, reverse = " + (reverse ? "true" : "false") +
         ", save_carries = " + (save ? "true" : "false") + "} : " + results + "\n  return " +
         names + "\n}\n" +
         "func @g(input %a: f32[3,5], input %b: f32[5], input %k: f32[], input %x: f32[3,5], "
         "input %z: f32[5]) -> (a: f32[3,5], b: f32[5], y1: f32[3,5], y2: f32[5]) {\n"
         "  %ak = mul(%a, %k) : f32[3,5]\n"
         "  %s = add(%ak, %x) : f32[3,5]\n"
         "  %a2 = tanh(%s) : f32[3,5]\n"
         "  %zk = mul(%z, %k) : f32[5]\n"
         "  %b2 = add(%b, %zk) : f32[5]\n"
         "  %y1 = mul(%a2, %x) : f32[3,5]\n"
         "  %y2 = sub(%b2, %z) : f32[5]\n"
         "  return %a2, %b2, %y1, %y2\n}\n";
}

class ScanTest : public ::testing::TestWithParam<std::tuple<int, bool, bool>> {};

TEST_P(ScanTest, CompiledAndUnrolledMatchTheInterpreter) {
  auto [length, reverse, save] = GetParam();
  auto m = parseIR(scanProgram(length, reverse, save));
  ASSERT_TRUE(m);
  Function& f = *m->functions().front();
  std::vector<Tensor> args = patternArgs(f);
  std::vector<Tensor> want = interpret(f, args);
  std::vector<Tensor> mag = interpret(f, absoluteValues(args));

  const Function& body = *m->findFunction("g");
  CompiledFunction cf(f, buildPlan(f), 1, {BodyPlan{&body, buildPlan(body)}});
  std::vector<Tensor> in = args;
  const std::vector<Tensor>& got = cf.run(in);
  ASSERT_EQ(got.size(), want.size());
  for (int run = 0; run < 2; ++run) // the kernel's carry buffers are reused across runs
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_TRUE(nearReference(run ? cf.run(in)[i] : got[i], want[i], mag[i]))
          << f.results()[i].name << " run " << run;

  ASSERT_TRUE(inlineCalls(f));
  EXPECT_EQ(m->functions().size(), 1u);
  std::vector<Tensor> unrolled = runCompiled(f, args);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(nearReference(unrolled[i], want[i], mag[i])) << f.results()[i].name;
}

INSTANTIATE_TEST_SUITE_P(LengthsAndDirections, ScanTest,
                         ::testing::Combine(::testing::Values(1, 4, 5), ::testing::Bool(),
                                            ::testing::Bool()));

} // namespace
