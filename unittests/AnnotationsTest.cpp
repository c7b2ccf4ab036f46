#include "shardc/sharding/Annotations.h"

#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Printer.h"

#include <gtest/gtest.h>

using namespace shardc;

namespace {

const char* kAnnotated = R"(mesh data=2, model=2

func @f(input %x: f32[8,16] sharding [{data}, {}], param %w: f32[16,32]) -> (y: f32[8,32] sharding [{data}, {}] tied %w, z: f32[8,32]) {
  %y = matmul(%x, %w) : f32[8,32] sharding [{data}, {model}]
  %a, %b = split(%y) {axis = 1, sizes = [8, 24]} : f32[8,8], f32[8,24] sharding [{}, {model}:3] partial{data}
  return %y, %y
}
)";

} // namespace

TEST(AnnotationsTest, ParserCollectsAnnotations) {
  DiagEngine diags("a.ir");
  ParsedAnnotations a;
  auto m = parseModule(kAnnotated, diags, a);
  ASSERT_TRUE(m);
  const Function& f = *m->functions()[0];
  EXPECT_EQ(a.mesh, "data=2,model=2");
  EXPECT_EQ(a.meshLoc.line, 1u);
  ASSERT_EQ(a.shardings.size(), 4u);
  EXPECT_EQ(a.shardings[0].value, f.argument(0));
  EXPECT_EQ(a.shardings[0].text, "[{data}, {}]");
  EXPECT_EQ(a.shardings[0].loc.line, 3u);
  EXPECT_EQ(a.shardings[0].loc.col, 29u);
  EXPECT_EQ(a.shardings[1].value, f.ops().front()->result());
  EXPECT_EQ(a.shardings[2].text, "[{}, {model}:3] partial{data}");
  EXPECT_EQ(a.shardings[2].value->name(), "b");
  // Function results come last: they are known once the return is parsed.
  EXPECT_EQ(a.shardings[3].value, nullptr);
  EXPECT_EQ(a.shardings[3].func, &f);
  EXPECT_EQ(a.shardings[3].result, 0u);

  // The plain parser reads annotated IR and drops the annotations.
  DiagEngine plain("a.ir");
  auto m2 = parseModule(kAnnotated, plain);
  ASSERT_TRUE(m2);
  EXPECT_EQ(printModule(*m2), printModule(*m));
}

TEST(AnnotationsTest, PlanRoundTrips) {
  DiagEngine diags("a.ir");
  ParsedAnnotations a;
  auto m = parseModule(kAnnotated, diags, a);
  ASSERT_TRUE(m);
  ShardingPlan plan = planFromAnnotations(a, diags);
  ASSERT_FALSE(diags.hasErrors()) << diags.format(diags.diagnostics()[0]);
  const Function& f = *m->functions()[0];
  EXPECT_EQ(plan.size(), 3u);
  ASSERT_TRUE(plan.findResult(f, 0));
  EXPECT_EQ(plan.findResult(f, 0)->origin.kind, OriginKind::User);
  EXPECT_FALSE(plan.findResult(f, 1));
  EXPECT_EQ(printShardedModule(*m, plan), kAnnotated);
}

TEST(AnnotationsTest, OriginsInProgramOrder) {
  DiagEngine diags("a.ir");
  ParsedAnnotations a;
  auto m = parseModule(kAnnotated, diags, a);
  ASSERT_TRUE(m);
  ShardingPlan plan = planFromAnnotations(a, diags);
  const Function& f = *m->functions()[0];
  plan.set(f.argument(1), parseSharding("[{}, {model}]"),
           {OriginKind::Propagated, "matmul %y (operand 1)"});
  EXPECT_EQ(printShardingOrigins(f, plan), "%x: [{data}, {}]  <- user\n"
                                           "%w: [{}, {model}]  <- propagated from matmul %y "
                                           "(operand 1)\n"
                                           "%y: [{data}, {model}]  <- user\n"
                                           "%b: [{}, {model}:3] partial{data}  <- user\n"
                                           "result y: [{data}, {}]  <- user\n");
}

TEST(AnnotationsTest, ErrorsAreLocatedAndNameTheValue) {
  DiagEngine diags("a.ir");
  ParsedAnnotations a;
  auto m = parseModule("mesh data=2\nfunc @f(input %x: f32[3] sharding [{data}]) -> (r: f32[3] "
                       "sharding [{model}]) {\n  return %x\n}\n",
                       diags, a);
  ASSERT_TRUE(m);
  planFromAnnotations(a, diags);
  ASSERT_EQ(diags.diagnostics().size(), 2u);
  EXPECT_EQ(diags.format(diags.diagnostics()[0]),
            "a.ir:2:26: error: sharding of %x: dimension 0 of f32[3] (size 3) does not divide "
            "evenly over {data} (2 devices)");
  EXPECT_EQ(diags.format(diags.diagnostics()[1]),
            "a.ir:2:59: error: sharding of result r of @f: axis 'model' is not in the mesh data=2");
}
