#include "shardc/sharding/Strategy.h"

#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"
#include "shardc/support/Error.h"

#include <gtest/gtest.h>

using namespace shardc;

namespace {

std::unique_ptr<Module> parse(const std::string& text) {
  DiagEngine diags("test.ir");
  std::unique_ptr<Module> m = parseModule(text, diags);
  EXPECT_TRUE(m) << (diags.hasErrors() ? diags.format(diags.diagnostics()[0]) : "");
  return m;
}

const char* kModel =
    R"(func @f(input %ids: i64[8,16], param %wte: f32[64,32], param %"h0/w": f32[32,96]) -> (y: f32[8,16,96]) {
  %e = gather(%wte, %ids) {axis = 0} : f32[8,16,32]
  %y = matmul(%e, %"h0/w") : f32[8,16,96]
  return %y
})";

std::string parseError(const std::string& text) {
  try {
    parseStrategy(text, "s.txt");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string applyError(const std::string& text, const std::string& ir = kModel) {
  auto m = parse(ir);
  ShardingPlan plan;
  try {
    applyStrategy(parseStrategy(text, "s.txt"), *m->functions()[0], plan, "s.txt");
  } catch (const Error& e) {
    EXPECT_EQ(plan.size(), 0u) << "a failed strategy must leave the plan alone";
    return e.what();
  }
  return "";
}

} // namespace

TEST(StrategyTest, Parses) {
  Strategy s = parseStrategy(R"(# a comment
mesh data=2, model=2

wte: [{}, {model}]   # trailing comment
"h0/w": [{}, {model}:3]
"has # and \" in it": [{data}]
mesh: [{}]
)",
                             "s.txt");
  ASSERT_TRUE(s.mesh);
  EXPECT_EQ(s.mesh->str(), "data=2,model=2");
  EXPECT_EQ(s.meshLine, 2);
  ASSERT_EQ(s.entries.size(), 4u);
  EXPECT_EQ(s.entries[0].name, "wte");
  EXPECT_EQ(s.entries[0].line, 4);
  EXPECT_EQ(s.entries[1].name, "h0/w");
  EXPECT_EQ(s.entries[1].sharding.str(), "[{}, {model}:3]");
  EXPECT_EQ(s.entries[2].name, "has # and \" in it");
  EXPECT_EQ(s.entries[3].name, "mesh"); // an argument may be called mesh
}

TEST(StrategyTest, ParseErrorsNameTheLine) {
  EXPECT_EQ(parseError("mesh data=2\nmesh data=2"),
            "s.txt:2: the mesh is given twice (first on line 1)");
  EXPECT_EQ(parseError("mesh data=2, data=4"),
            "s.txt:1: mesh 'data=2, data=4': axis 'data' appears twice");
  EXPECT_EQ(parseError("x: [{a}]\n\nx: [{b}]"),
            "s.txt:3: argument 'x' is given twice (first on line 1)");
  EXPECT_EQ(parseError("x [{a}]"), "s.txt:1: expected ':' after 'x'");
  EXPECT_EQ(parseError(": [{a}]"),
            "s.txt:1: expected 'NAME: [sharding]' or 'mesh AXIS=N, ...', got ': [{a}]'");
  EXPECT_EQ(parseError("\"x: [{a}]"), "s.txt:1: unterminated name");
  EXPECT_EQ(parseError("\"\\t\": [{a}]"), "s.txt:1: unknown escape sequence in a name");
  EXPECT_EQ(
      parseError("x: [{a}:0]"),
      "s.txt:1: argument 'x': sharding '[{a}:0]': chunk count '0' must be a positive integer");
  EXPECT_EQ(parseError("x: [{a}] partial"),
            "s.txt:1: argument 'x': sharding '[{a}] partial': expected {axis, ...}, got ''");
}

TEST(StrategyTest, AppliesAsUserShardings) {
  auto m = parse(kModel);
  const Function& f = *m->functions()[0];
  ShardingPlan plan;
  applyStrategy(
      parseStrategy("mesh data=2, model=2\nwte: [{}, {model}]\n\"h0/w\": [{}, {model}:3]", "s.txt"),
      f, plan, "s.txt");
  EXPECT_EQ(plan.mesh().str(), "data=2,model=2");
  EXPECT_EQ(plan.size(), 2u);
  const ValueSharding* w = plan.find(f.findArgument("h0/w"));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->sharding.str(), "[{}, {model}:3]");
  EXPECT_EQ(w->origin.kind, OriginKind::User);
  EXPECT_FALSE(plan.find(f.findArgument("ids")));
}

TEST(StrategyTest, ApplyErrorsNameArgumentDimensionAndAxis) {
  const std::string mesh = "mesh data=2, model=2\n";
  EXPECT_EQ(applyError(mesh + "wtf: [{}]"),
            "s.txt:2: unknown argument 'wtf'; the arguments of @f are: ids, wte, \"h0/w\"");
  EXPECT_EQ(applyError(mesh + "wte: [{}, {seq}]"),
            "s.txt:2: argument 'wte' (f32[64,32]): axis 'seq' is not in the mesh data=2,model=2");
  EXPECT_EQ(applyError(mesh + "wte: [{model}, {model}]"),
            "s.txt:2: argument 'wte' (f32[64,32]): axis 'model' is used twice in "
            "[{model}, {model}]");
  EXPECT_EQ(applyError(mesh + "wte: [{}]"),
            "s.txt:2: argument 'wte' (f32[64,32]): sharding [{}] has 1 dimensions, the tensor "
            "f32[64,32] has 2");
  EXPECT_EQ(applyError(mesh + "\"h0/w\": [{}, {model}:5]"),
            "s.txt:2: argument 'h0/w' (f32[32,96]): dimension 1 of f32[32,96] (size 96) does not "
            "divide evenly over {model} (2 devices per chunk of 5)");
  // The first entries are fine; nothing is applied when a later one fails.
  EXPECT_EQ(applyError(mesh + "wte: [{}, {model}]\nids: [{data}, {model}, {}]"),
            "s.txt:3: argument 'ids' (i64[8,16]): sharding [{data}, {model}, {}] has 3 "
            "dimensions, the tensor i64[8,16] has 2");
  EXPECT_EQ(applyError("wte: [{}, {}]"), "s.txt: no mesh: add a line like 'mesh data=2, model=2' "
                                         "to the strategy or declare one in the IR");
}

TEST(StrategyTest, UnknownArgumentListIsShort) {
  std::string ir = "func @big(";
  for (int i = 0; i < 13; ++i)
    ir += (i ? ", " : "") + std::string("input %a") + std::to_string(i) + ": f32[2]";
  ir += ") -> (r: f32[2]) {\n  return %a0\n}\n";
  EXPECT_EQ(applyError("mesh x=2\nb: [{x}]", ir),
            "s.txt:2: unknown argument 'b'; the arguments of @big are: a0, a1, a2, a3, a4, a5, "
            "a6, a7, a8, a9, ... (3 more)");
}

TEST(StrategyTest, StrategyMeshMustMatchThePlans) {
  auto m = parse(kModel);
  ShardingPlan plan(Mesh::parse("data=4"));
  try {
    applyStrategy(parseStrategy("\nmesh data=2", "s.txt"), *m->functions()[0], plan, "s.txt");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "s.txt:2: the strategy's mesh data=2 differs from the IR's mesh data=4");
  }
  // The same mesh, spelled differently, is fine.
  applyStrategy(parseStrategy("mesh data = 4\nids: [{data}, {}]", "s.txt"), *m->functions()[0],
                plan, "s.txt");
  EXPECT_EQ(plan.size(), 1u);
}

TEST(StrategyTest, WrittenStrategyReproducesThePlan) {
  auto m = parse(kModel);
  const Function& f = *m->functions()[0];
  ShardingPlan plan;
  applyStrategy(
      parseStrategy("mesh data=2,model=2\n\"h0/w\": [{}, {model}:3]\nids: [{data}, {}]", "s.txt"),
      f, plan, "s.txt");
  std::string written = writeStrategy(f, plan);
  EXPECT_EQ(written, "# sharding strategy for @f\n"
                     "mesh data=2, model=2\n"
                     "ids: [{data}, {}]\n"
                     "wte: [{}, {}]\n"
                     "\"h0/w\": [{}, {model}:3]\n");
  ShardingPlan again;
  applyStrategy(parseStrategy(written, "w.txt"), f, again, "w.txt");
  EXPECT_EQ(again.mesh(), plan.mesh());
  for (size_t i = 0; i < f.numArguments(); ++i)
    EXPECT_EQ(again.shardingOf(f.argument(i)), plan.shardingOf(f.argument(i)));
  EXPECT_EQ(writeStrategy(f, again), written);
}
