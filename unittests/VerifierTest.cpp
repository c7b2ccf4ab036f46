// The verifier checks that only IR built in C++ can fail (the parser rejects the same
// mistakes in text before the verifier sees them), each checked by its exact message.
#include "shardc/ir/Verifier.h"
#include "shardc/ir/Builder.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"

#include <gtest/gtest.h>

using namespace shardc;

namespace {

const TensorType kF32x2{DType::F32, {2}};

std::vector<std::string> messages(const DiagEngine& d) {
  std::vector<std::string> out;
  for (const auto& diag : d.diagnostics())
    out.push_back(diag.message);
  return out;
}

std::vector<std::string> verify(const Function& f) {
  DiagEngine diags("<memory>");
  bool ok = verifyFunction(f, diags);
  EXPECT_EQ(ok, !diags.hasErrors());
  return messages(diags);
}

using Msgs = std::vector<std::string>;

TEST(VerifierTest, ValidFunctionPasses) {
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  Builder b(f);
  f.addResult("r", b.value("neg", {x}));
  EXPECT_EQ(verify(f), Msgs{});
}

TEST(VerifierTest, ArgumentWithoutName) {
  Function f("f");
  Value* x = f.addArgument("", kF32x2, ArgKind::Input);
  f.addResult("r", x);
  EXPECT_EQ(verify(f), Msgs{"argument 0 of @f has no name"});
}

TEST(VerifierTest, ArgumentNameUsedTwice) {
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  f.addArgument("x", kF32x2, ArgKind::Param);
  f.addResult("r", x);
  EXPECT_EQ(verify(f), Msgs{"argument name 'x' is used twice in @f"});
}

TEST(VerifierTest, ArgumentWithInvalidShape) {
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  f.addArgument("neg", TensorType{DType::F32, {-1}}, ArgKind::Input);
  f.addArgument("big", TensorType{DType::F32, {int64_t(1) << 40, int64_t(1) << 40}},
                ArgKind::Input);
  f.addResult("r", x);
  EXPECT_EQ(verify(f),
            (Msgs{"argument 'neg' has an invalid shape", "argument 'big' has an invalid shape"}));
}

TEST(VerifierTest, OperandUsedBeforeDefinition) {
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  Builder b(f);
  Op* first = b.create("neg", {x});
  b.setInsertionPoint(first);
  // Inserted before `first`, but uses it: the order is wrong although the types are right.
  Op* user = b.create("add", {x, first->result()});
  f.addResult("r", user->result());
  EXPECT_EQ(verify(f), Msgs{"'add' op operand 1 is used before it is defined"});
}

TEST(VerifierTest, OperandFromAnotherFunction) {
  Function g("g");
  Value* y = g.addArgument("y", kF32x2, ArgKind::Input);
  g.addResult("r", y);
  Function f("f");
  Builder b(f);
  f.addResult("r", b.value("neg", {y}));
  EXPECT_EQ(verify(f), Msgs{"'neg' op operand 0 is used before it is defined"});
}

TEST(VerifierTest, OpDisagreesWithShapeRule) {
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  const OpDef* neg = OpRegistry::get().lookup("neg");
  Op* op = f.insertOp(f.ops().end(), neg, {x}, {TensorType{DType::F32, {3}}}, {}, {});
  f.addResult("r", op->result());
  EXPECT_EQ(verify(f),
            Msgs{"'neg' op result 0 is declared f32[3], but the shape rule gives f32[2]"});
}

TEST(VerifierTest, OpWithWrongResultCount) {
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  const OpDef* neg = OpRegistry::get().lookup("neg");
  Op* op = f.insertOp(f.ops().end(), neg, {x}, {kF32x2, kF32x2}, {}, {});
  f.addResult("r", op->result());
  EXPECT_EQ(verify(f), Msgs{"'neg' op has 1 result, but 2 are declared"});
}

TEST(VerifierTest, OpWithWrongArityOrAttributes) {
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  const OpRegistry& reg = OpRegistry::get();
  Op* add = f.insertOp(f.ops().end(), reg.lookup("add"), {x}, {kF32x2}, {}, {});
  Op* neg = f.insertOp(f.ops().end(), reg.lookup("neg"), {x}, {kF32x2}, {{"axis", 0}}, {});
  Op* tr = f.insertOp(f.ops().end(), reg.lookup("transpose"), {x}, {kF32x2}, {}, {});
  f.addResult("a", add->result());
  f.addResult("b", neg->result());
  f.addResult("c", tr->result());
  EXPECT_EQ(verify(f),
            (Msgs{"'add' op expects 2 operands, got 1", "'neg' op has no attribute 'axis'",
                  "'transpose' op requires attribute 'perm'"}));
}

TEST(VerifierTest, OpMissingDefaultedAttribute) {
  // Builder and parser fill defaults; an op made directly without them is incomplete.
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  Op* op = f.insertOp(f.ops().end(), OpRegistry::get().lookup("softmax"), {x}, {kF32x2}, {}, {});
  f.addResult("r", op->result());
  EXPECT_EQ(verify(f), Msgs{"'softmax' op is missing defaulted attributes"});
}

TEST(VerifierTest, FunctionReturnsNothing) {
  Function f("f");
  f.addArgument("x", kF32x2, ArgKind::Input);
  EXPECT_EQ(verify(f), Msgs{"@f returns nothing"});
}

TEST(VerifierTest, ResultWithoutName) {
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  f.addResult("", x);
  EXPECT_EQ(verify(f), Msgs{"a result of @f has no name"});
}

TEST(VerifierTest, ResultNameUsedTwice) {
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  f.addResult("r", x);
  f.addResult("r", x);
  EXPECT_EQ(verify(f), Msgs{"result name 'r' is used twice in @f"});
}

TEST(VerifierTest, ResultNotDefined) {
  Function g("g");
  Value* y = g.addArgument("y", kF32x2, ArgKind::Input);
  g.addResult("r", y);
  Function f("f");
  f.addArgument("x", kF32x2, ArgKind::Input);
  f.addResult("out", y);
  EXPECT_EQ(verify(f), Msgs{"result 'out' of @f is not defined"});
}

TEST(VerifierTest, ResultTiedToMissingArgument) {
  Function f("f");
  Value* w = f.addArgument("w", kF32x2, ArgKind::Param);
  f.addResult("r", w, 1);
  EXPECT_EQ(verify(f), Msgs{"result 'r' is tied to a missing argument"});
}

TEST(VerifierTest, TiedResultChecks) {
  Function f("f");
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  Value* w = f.addArgument("w", TensorType{DType::F32, {3}}, ArgKind::Param);
  Value* m = f.addArgument("m", kF32x2, ArgKind::OptState);
  f.addResult("a", x, 0);
  f.addResult("b", x, 1);
  f.addResult("c", m, 2);
  f.addResult("d", m, 2);
  f.addResult("e", w, 1);
  EXPECT_EQ(verify(f), (Msgs{"result 'a' is tied to input 'x'; only param and opt_state arguments "
                             "are updated in place",
                             "result 'b' has type f32[2] but is tied to 'w' of type f32[3]",
                             "argument 'm' is tied to more than one result",
                             "argument 'w' is tied to more than one result"}));
}

TEST(VerifierTest, ReportsEveryProblemAtItsLocation) {
  Function f("f", Loc{3, 1});
  Value* x = f.addArgument("x", kF32x2, ArgKind::Input);
  f.addArgument("x", kF32x2, ArgKind::Input);
  Op* op = f.insertOp(f.ops().end(), OpRegistry::get().lookup("neg"), {x},
                      {TensorType{DType::F32, {3}}}, {}, Loc{5, 7});
  f.addResult("r", op->result());
  DiagEngine diags("m.ir");
  EXPECT_FALSE(verifyFunction(f, diags));
  ASSERT_EQ(diags.diagnostics().size(), 2u);
  EXPECT_EQ(diags.format(diags.diagnostics()[0]),
            "m.ir:3:1: error: argument name 'x' is used twice in @f");
  EXPECT_EQ(
      diags.format(diags.diagnostics()[1]),
      "m.ir:5:7: error: 'neg' op result 0 is declared f32[3], but the shape rule gives f32[2]");
}

TEST(VerifierTest, BuiltInMemoryHasNoPosition) {
  Function f("f");
  f.addArgument("x", kF32x2, ArgKind::Input);
  DiagEngine diags("<memory>");
  verifyFunction(f, diags);
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.format(diags.diagnostics()[0]), "<memory>: error: @f returns nothing");
}

TEST(VerifierTest, FunctionDefinedTwiceInModule) {
  Module m;
  for (int i = 0; i < 2; ++i) {
    Function* f = m.addFunction("main", Loc{static_cast<uint32_t>(1 + 4 * i), 1});
    f->addResult("r", f->addArgument("x", kF32x2, ArgKind::Input));
  }
  DiagEngine diags("m.ir");
  EXPECT_FALSE(verifyModule(m, diags));
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.format(diags.diagnostics()[0]),
            "m.ir:5:1: error: function @main is defined twice");
}

TEST(VerifierTest, ModuleCollectsErrorsOfEveryFunction) {
  Module m;
  m.addFunction("a")->addArgument("x", kF32x2, ArgKind::Input);
  m.addFunction("b")->addArgument("x", kF32x2, ArgKind::Input);
  DiagEngine diags("<memory>");
  EXPECT_FALSE(verifyModule(m, diags));
  EXPECT_EQ(messages(diags), (Msgs{"@a returns nothing", "@b returns nothing"}));
}

} // namespace
