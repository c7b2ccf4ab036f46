#include "shardc/search/Search.h"

#include "TestUtil.h"

#include "shardc/cost/CostModel.h"
#include "shardc/cost/Target.h"
#include "shardc/ir/IR.h"
#include "shardc/sharding/Propagate.h"

#include <gtest/gtest.h>

using namespace shardc;
using shardc::testing::parseIR;

namespace {

// Three identical layers, their weights named so that names say nothing of the role.
const char* kLayers =
    R"(func @f(input %x: f32[256,64], param %a: f32[64,64], param %zz: f32[64,64], param %q: f32[64,64], param %b0: f32[64], param %b1: f32[64], param %b2: f32[64]) -> (y: f32[256,64]) {
  %h0 = matmul(%x, %a) : f32[256,64]
  %g0 = add(%h0, %b0) : f32[256,64]
  %r0 = relu(%g0) : f32[256,64]
  %h1 = matmul(%r0, %zz) : f32[256,64]
  %g1 = add(%h1, %b1) : f32[256,64]
  %r1 = relu(%g1) : f32[256,64]
  %h2 = matmul(%r1, %q) : f32[256,64]
  %g2 = add(%h2, %b2) : f32[256,64]
  %r2 = relu(%g2) : f32[256,64]
  return %r2
}
)";

std::vector<std::string> names(const ArgumentGroup& g) {
  std::vector<std::string> out;
  for (const Value* v : g.args)
    out.push_back(v->name());
  return out;
}

std::string planText(const Function& f, const ShardingPlan& plan) {
  std::string s;
  for (size_t i = 0; i < f.numArguments(); ++i)
    s += f.argument(i)->name() + ": " + plan.shardingOf(f.argument(i)).str() + "\n";
  return s;
}

SearchParams quiet(int64_t episodes) {
  SearchParams p;
  p.episodes = episodes;
  p.progressEvery = 0;
  return p;
}

} // namespace

TEST(SearchTest, GroupsFollowStructureNotNames) {
  auto m = parseIR(kLayers);
  ASSERT_TRUE(m);
  const Function& f = *m->functions()[0];
  ShardingPlan none(Mesh::parse("data=2"));
  // One op deep, every layer's weight plays the same role, and so does every bias.
  std::vector<ArgumentGroup> shallow = groupArguments(f, none, 1);
  ASSERT_EQ(shallow.size(), 3u);
  EXPECT_EQ(names(shallow[0]), std::vector<std::string>{"x"}); // inputs first
  EXPECT_EQ(names(shallow[1]), (std::vector<std::string>{"a", "zz", "q"}));
  EXPECT_EQ(names(shallow[2]), (std::vector<std::string>{"b0", "b1", "b2"}));
  // Three ops deep, the last bias (its layer's result is returned two ops on) differs from the
  // others; the weights' uses look alike for three ops. Larger groups come first.
  std::vector<ArgumentGroup> deep = groupArguments(f, none, 3);
  ASSERT_EQ(deep.size(), 4u);
  EXPECT_EQ(names(deep[1]), (std::vector<std::string>{"a", "zz", "q"}));
  EXPECT_EQ(names(deep[2]), (std::vector<std::string>{"b0", "b1"}));
  EXPECT_EQ(names(deep[3]), std::vector<std::string>{"b2"});
}

TEST(SearchTest, UserShardingsStayAndLeaveTheWorklist) {
  auto m = parseIR(kLayers);
  ASSERT_TRUE(m);
  const Function& f = *m->functions()[0];
  ShardingPlan fixed(Mesh::parse("data=2,model=2"));
  TensorSharding column = TensorSharding::replicated(2);
  column.dims[1] = {"model"};
  fixed.set(f.argument(2), column, {OriginKind::User, ""});
  for (const ArgumentGroup& g : groupArguments(f, fixed, 1))
    for (const Value* v : g.args)
      EXPECT_NE(v, f.argument(2));
  auto model = makeAnalyticCostModel(loadTarget("cpu"));
  SearchResult r = searchPartition(f, fixed, *model, quiet(30));
  EXPECT_EQ(r.plan.shardingOf(f.argument(2)), column);
  EXPECT_TRUE(r.cost.feasible);
}

TEST(SearchTest, SameSeedSamePlan) {
  auto m = parseIR(kLayers);
  ASSERT_TRUE(m);
  const Function& f = *m->functions()[0];
  ShardingPlan fixed(Mesh::parse("data=2,model=2"));
  auto model = makeAnalyticCostModel(loadTarget("cpu"));
  SearchParams p = quiet(40);
  p.baselines = false; // the tree search's own plan
  p.exhaustiveLimit = 0;
  SearchResult a = searchPartition(f, fixed, *model, p);
  SearchResult b = searchPartition(f, fixed, *model, p);
  EXPECT_EQ(a.source, "search");
  EXPECT_EQ(planText(f, a.plan), planText(f, b.plan));
  EXPECT_EQ(a.decisions, b.decisions);
  EXPECT_EQ(a.cost.stepSeconds, b.cost.stepSeconds);
}

TEST(SearchTest, LargeBatchIsSplit) {
  auto m = parseIR(kLayers);
  ASSERT_TRUE(m);
  const Function& f = *m->functions()[0];
  ShardingPlan fixed(Mesh::parse("data=4"));
  auto model = makeAnalyticCostModel(loadTarget("cpu"));
  SearchParams p = quiet(60);
  p.baselines = false;
  SearchResult r = searchPartition(f, fixed, *model, p);
  TensorSharding batch = TensorSharding::replicated(2);
  batch.dims[0] = {"data"};
  EXPECT_EQ(r.plan.shardingOf(f.argument(0)), batch) << planText(f, r.plan);
  // Where the space is small enough, it is enumerated and the search does as well.
  ASSERT_TRUE(r.exhaustive);
  EXPECT_LE(r.searchCost.stepSeconds, r.exhaustive->stepSeconds * 1.01);
}

// Continuing from a propagated plan with one more decision gives what propagating everything
// at once gives, when the decisions do not compete.
TEST(SearchTest, IncrementalPropagationMatchesFull) {
  auto m = parseIR(kLayers);
  ASSERT_TRUE(m);
  const Function& f = *m->functions()[0];
  ShardingPlan base(Mesh::parse("data=2,model=2"));
  TensorSharding batch = TensorSharding::replicated(2);
  batch.dims[0] = {"data"};
  base.set(f.argument(0), batch, {OriginKind::User, ""});
  ShardingPropagator propagator(f);
  ShardingPlan step = base;
  propagator.propagate(step);
  TensorSharding column = TensorSharding::replicated(2);
  column.dims[1] = {"model"};
  step.set(f.argument(1), column, {OriginKind::User, ""});
  propagator.propagateFrom(step, {f.argument(1)});

  ShardingPlan all = base;
  all.set(f.argument(1), column, {OriginKind::User, ""});
  propagateShardings(f, all);
  for (const auto& op : f.ops())
    EXPECT_EQ(step.shardingOf(op->result()).str(), all.shardingOf(op->result()).str())
        << op->result()->name();
  EXPECT_EQ(step.shardingOf(f.ops().front()->result()).str(), "[{data}, {model}]");
}
