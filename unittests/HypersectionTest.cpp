// Hypersections: repeated runs found per phase, outlined into bodies run by `call`, and the
// outlined program computing what the flat one does, through the interpreter and the plan.
#include "TestUtil.h"

#include "shardc/cost/Target.h"
#include "shardc/dataflow/Sections.h"
#include "shardc/exec/CompiledFunction.h"
#include "shardc/exec/ExecPlan.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"
#include "shardc/ir/Verifier.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace shardc;
using namespace shardc::testing;

namespace {

// Three layers of one shape, a loss-like output, and an update of each layer's weight tied to
// it: a forward body and an optimizer body, three instances each.
std::string threeLayers() {
  std::ostringstream s;
  s << "func @f(input %x: f32[4,8]";
  for (int i = 0; i < 3; ++i)
    s << ", param %w" << i << ": f32[8,8]";
  s << ") -> (y: f32[4,8]";
  for (int i = 0; i < 3; ++i)
    s << ", n" << i << ": f32[8,8] tied %w" << i;
  s << ") {\n  %h0 = neg(%x) : f32[4,8]\n";
  for (int i = 0; i < 3; ++i) {
    std::string h = "%h" + std::to_string(i), w = "%w" + std::to_string(i),
                p = "%l" + std::to_string(i) + "_";
    s << "  " << p << "m = matmul(" << h << ", " << w << ") : f32[4,8]\n"
      << "  " << p << "a = add(" << p << "m, " << h << ") : f32[4,8]\n"
      << "  " << p << "t = tanh(" << p << "a) : f32[4,8]\n"
      << "  " << p << "s = mul(" << p << "t, " << p << "t) : f32[4,8]\n"
      << "  " << p << "u = sub(" << p << "s, " << p << "a) : f32[4,8]\n"
      << "  " << p << "r = relu(" << p << "u) : f32[4,8]\n"
      << "  " << p << "e = neg(" << p << "r) : f32[4,8]\n"
      << "  " << p << "x = exp(" << p << "e) : f32[4,8]\n"
      << "  %h" << i + 1 << " = add(" << p << "x, " << p << "t) : f32[4,8]\n";
  }
  for (int i = 0; i < 3; ++i) {
    std::string w = "%w" + std::to_string(i), p = "%o" + std::to_string(i) + "_";
    s << "  " << p << "a = mul(" << w << ", " << w << ") : f32[8,8]\n"
      << "  " << p << "b = tanh(" << p << "a) : f32[8,8]\n"
      << "  " << p << "c = mul(" << p << "b, " << w << ") : f32[8,8]\n"
      << "  " << p << "d = sub(" << w << ", " << p << "c) : f32[8,8]\n"
      << "  " << p << "e = exp(" << p << "d) : f32[8,8]\n"
      << "  " << p << "f = neg(" << p << "e) : f32[8,8]\n"
      << "  " << p << "g = add(" << p << "f, " << p << "d) : f32[8,8]\n"
      << "  %n" << i << " = mul(" << p << "g, " << p << "b) : f32[8,8]\n";
  }
  s << "  return %h3, %n0, %n1, %n2\n}\n";
  return s.str();
}

struct Outlined {
  std::unique_ptr<Module> m;
  std::vector<HyperInstance> instances;
  std::vector<Section> sections;
  std::vector<HypersectionBody> bodies;
  std::vector<std::string> log;
};

Outlined outline(const std::string& ir) {
  Outlined o;
  o.m = parseIR(ir);
  Function& f = *o.m->functions().front();
  Target t = loadTarget("cpu");
  SectionOptions so;
  so.hypersections = true;
  o.sections = formSections(
      f, t, so, [&](const std::string& s) { o.log.push_back(s); }, &o.instances);
  o.bodies = outlineHypersections(f, t, o.instances, o.sections);
  return o;
}

TEST(HypersectionTest, FindsTheLayersAndTheirUpdates) {
  Outlined o = outline(threeLayers());
  ASSERT_EQ(o.instances.size(), 6u);
  ASSERT_EQ(o.bodies.size(), 2u);
  EXPECT_EQ(o.bodies[0].phase, Phase::Forward);
  EXPECT_EQ(o.bodies[1].phase, Phase::Optimizer);
  for (const HypersectionBody& b : o.bodies)
    EXPECT_EQ(b.instances, 3);
  EXPECT_EQ(o.instances[0].numOps, 9);
  EXPECT_EQ(o.instances[3].numOps, 8);
  DiagEngine diags("<test>");
  ASSERT_TRUE(verifyModule(*o.m, diags)) << diags.format(diags.diagnostics()[0]);
  // The caller: the first neg and six calls; one section per call, naming its body.
  const Function& f = *o.m->functions().front();
  EXPECT_EQ(f.ops().size(), 7u);
  std::vector<std::string> names;
  for (const HypersectionBody& b : o.bodies)
    names.push_back(b.function);
  EXPECT_EQ(checkSections(o.sections, f, names), "");
  for (const HypersectionBody& b : o.bodies)
    EXPECT_EQ(checkSections(b.sections, *o.m->findFunction(b.function), {}, b.phase), "");
  // The update body writes each weight over the one it reads.
  const Function& update = *o.m->findFunction(o.bodies[1].function);
  ASSERT_EQ(update.results().size(), 1u);
  EXPECT_GE(update.results()[0].tiedArg, 0);
  bool logged = false;
  for (const std::string& line : o.log)
    logged |= line.find("3 instances share it") != std::string::npos;
  EXPECT_TRUE(logged);
}

TEST(HypersectionTest, OutlinedProgramComputesWhatTheFlatOneDoes) {
  auto flat = parseIR(threeLayers());
  Outlined o = outline(threeLayers());
  const Function& f = *o.m->functions().front();
  std::vector<Tensor> args = patternArgs(f);
  std::vector<Tensor> want = interpret(*flat->functions().front(), args);
  std::vector<Tensor> got = interpret(f, args);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(got[i].identical(want[i])) << f.results()[i].name;

  // Compiled: the caller's plan and each body's; updated weights land in their arguments.
  std::vector<BodyPlan> bodies;
  for (const HypersectionBody& b : o.bodies) {
    const Function* fn = o.m->findFunction(b.function);
    bodies.push_back({fn, buildPlan(*fn, sectionOfOps(b.sections, fn->ops().size()))});
  }
  ExecPlan plan = buildPlan(f, sectionOfOps(o.sections, f.ops().size()));
  ASSERT_EQ(checkPlan(plan, f), "");
  CompiledFunction cf(f, plan, 1, bodies);
  std::vector<Tensor> inout = args;
  const std::vector<Tensor>& outs = cf.run(inout);
  std::vector<Tensor> mag = interpret(f, absoluteValues(args));
  EXPECT_TRUE(nearReference(outs[0], want[0], mag[0]));
  for (size_t i = 1; i < want.size(); ++i)
    EXPECT_TRUE(nearReference(inout[static_cast<size_t>(f.results()[i].tiedArg)], want[i], mag[i]))
        << f.results()[i].name;
}

TEST(HypersectionTest, TheVerifierChecksCalls) {
  auto check = [](const std::string& ir) {
    DiagEngine diags("<test>");
    auto m = parseModule(ir, diags);
    if (m) verifyModule(*m, diags);
    return diags.hasErrors() ? diags.format(diags.diagnostics()[0]) : std::string();
  };
  const std::string body = "func @b(input %a: f32[2]) -> (r: f32[2]) {\n"
                           "  %r = neg(%a) : f32[2]\n  return %r\n}\n";
  EXPECT_EQ(check(body + "func @f(input %x: f32[2]) -> (y: f32[2]) {\n"
                         "  %y = call(%x) {callee = \"b\"} : f32[2]\n  return %y\n}\n"),
            "");
  EXPECT_NE(check("func @f(input %x: f32[2]) -> (y: f32[2]) {\n"
                  "  %y = call(%x) {callee = \"nowhere\"} : f32[2]\n  return %y\n}\n")
                .find("which the module does not define"),
            std::string::npos);
  EXPECT_NE(check(body + "func @f(input %x: f32[3]) -> (y: f32[2]) {\n"
                         "  %y = call(%x) {callee = \"b\"} : f32[2]\n  return %y\n}\n")
                .find("operand 0 is f32[3], but @b takes f32[2]"),
            std::string::npos);
  EXPECT_NE(check(body + "func @f(input %x: f32[2]) -> (y: f32[4]) {\n"
                         "  %y = call(%x) {callee = \"b\"} : f32[4]\n  return %y\n}\n")
                .find("result 0 is declared f32[4], but @b returns f32[2]"),
            std::string::npos);
  EXPECT_NE(check("func @f(input %x: f32[2]) -> (y: f32[2]) {\n"
                  "  %y = call(%x) {callee = \"f\"} : f32[2]\n  return %y\n}\n")
                .find("calls its own function"),
            std::string::npos);
  EXPECT_NE(check(body +
                  "func @g(input %x: f32[2]) -> (y: f32[2]) {\n"
                  "  %y = call(%x) {callee = \"b\"} : f32[2]\n  return %y\n}\n" +
                  "func @f(input %x: f32[2]) -> (y: f32[2]) {\n"
                  "  %y = call(%x) {callee = \"g\"} : f32[2]\n  return %y\n}\n")
                .find("which makes calls itself"),
            std::string::npos);
}

TEST(HypersectionTest, APlanMustLeaveInPlaceUpdatesInTheirArguments) {
  Outlined o = outline(threeLayers());
  const Function& f = *o.m->functions().front();
  ExecPlan plan = buildPlan(f, sectionOfOps(o.sections, f.ops().size()));
  ASSERT_EQ(checkPlan(plan, f), "");
  // The last call updates w2 in place; a plan that puts its result in the arena is refused.
  PlanValue& last = plan.values.back();
  ASSERT_EQ(last.home, ValueHome::Argument);
  last = {ValueHome::Arena, 0, -1};
  plan.arenaBytes = std::max<int64_t>(plan.arenaBytes, 256);
  EXPECT_NE(checkPlan(plan, f).find("updates in place, outside the argument it updates"),
            std::string::npos);
}

} // namespace
