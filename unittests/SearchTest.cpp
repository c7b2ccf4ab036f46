#include "shardc/search/Search.h"

#include "TestUtil.h"

#include "shardc/cost/CostModel.h"
#include "shardc/cost/Target.h"
#include "shardc/ir/IR.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/sharding/Tactics.h"

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

namespace {

// One attention layer of 2 heads (fused q|k|v, as GPT-2) and an MLP.
const char* kAttention =
    R"(func @f(input %x: f32[2,4,8], param %w: f32[8,24], param %b: f32[24], param %p: f32[8,8], param %fc: f32[8,32]) -> (y: f32[2,4,32]) {
  %qkv0 = matmul(%x, %w) : f32[2,4,24]
  %qkv = add(%qkv0, %b) : f32[2,4,24]
  %q, %k, %v = split(%qkv) {axis = 2, sizes = [8, 8, 8]} : f32[2,4,8], f32[2,4,8], f32[2,4,8]
  %q4 = reshape(%q) {shape = [2, 4, 2, 4]} : f32[2,4,2,4]
  %k4 = reshape(%k) {shape = [2, 4, 2, 4]} : f32[2,4,2,4]
  %v4 = reshape(%v) {shape = [2, 4, 2, 4]} : f32[2,4,2,4]
  %qt = transpose(%q4) {perm = [0, 2, 1, 3]} : f32[2,2,4,4]
  %kt = transpose(%k4) {perm = [0, 2, 3, 1]} : f32[2,2,4,4]
  %vt = transpose(%v4) {perm = [0, 2, 1, 3]} : f32[2,2,4,4]
  %s = matmul(%qt, %kt) : f32[2,2,4,4]
  %pr = softmax(%s) {axis = -1} : f32[2,2,4,4]
  %c = matmul(%pr, %vt) : f32[2,2,4,4]
  %ct = transpose(%c) {perm = [0, 2, 1, 3]} : f32[2,4,2,4]
  %c2 = reshape(%ct) {shape = [2, 4, 8]} : f32[2,4,8]
  %o = matmul(%c2, %p) : f32[2,4,8]
  %h = matmul(%o, %fc) : f32[2,4,32]
  %y = relu(%h) : f32[2,4,32]
  return %y
}
)";

} // namespace

// The heads are read from the reshapes: the projection's columns per piece of q|k|v, its
// bias, and the output projection's rows; the MLP weight holds none.
TEST(SearchTest, AttentionHeadsFromTheGraph) {
  auto m = parseIR(kAttention);
  ASSERT_TRUE(m);
  const Function& f = *m->functions()[0];
  auto heads = [&](size_t arg) {
    HeadSplit h = attentionHeads(f.argument(arg));
    return std::vector<int64_t>{h.dim, h.heads, h.pieces};
  };
  EXPECT_EQ(heads(1), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(heads(2), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(heads(3), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(heads(4), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(heads(0), (std::vector<int64_t>{-1, 0, 1})); // an input
}

// Head-aware, the search never cuts a head: over 4 devices the 2-head dimensions stay whole,
// and the space shrinks.
TEST(SearchTest, HeadAwareSearchKeepsHeadsWhole) {
  auto m = parseIR(kAttention);
  ASSERT_TRUE(m);
  const Function& f = *m->functions()[0];
  auto model = makeAnalyticCostModel(loadTarget("cpu"));
  SearchParams p = quiet(60);
  p.baselines = false;
  ShardingPlan four(Mesh::parse("model=4"));
  SearchResult plain = searchPartition(f, four, *model, p);
  p.headAware = true;
  SearchResult aware = searchPartition(f, four, *model, p);
  EXPECT_LT(aware.planSpace, plain.planSpace);
  EXPECT_EQ(aware.headGroups.size(), 3u);
  ASSERT_TRUE(aware.exhaustive); // every plan of the space was scored
  for (const std::string& split : aware.searchSplits)
    for (const char* name : {"w: ", "b: ", "p: "})
      if (split.rfind(name, 0) == 0) ADD_FAILURE() << "head cut: " << split;
}
