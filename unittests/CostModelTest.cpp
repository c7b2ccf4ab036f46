#include "shardc/cost/CostModel.h"
#include "shardc/cost/Memory.h"

#include "TestUtil.h"
#include "shardc/ir/IR.h"

#include <gtest/gtest.h>

namespace shardc {
namespace {

// Round figures so that every expected time below is worked out by hand.
Target testTarget() {
  Target t;
  t.name = "test";
  t.peakFlops = {{DType::F32, 1e12}};
  t.memoryBandwidth = 1e11;
  t.memoryCapacity = 1e9;
  t.computeEfficiency = 0.5;
  t.memoryEfficiency = 0.5;
  t.opOverhead = 1e-6;
  t.devicesPerNode = 4;
  t.intraNode = {100e9, 1e-6};
  t.interNode = {10e9, 1e-5};
  return t;
}

// On data=2,model=4 with 4 devices per node, a `model` group is one node and a `data` group
// spans two (devices 0 and 4).
TEST(CostModelTest, CollectivesOnTwoAxisMeshFollowAlphaBeta) {
  Target t = testTarget();
  Mesh mesh = Mesh::parse("data=2,model=4");
  double n = 1e6;
  // Ring: 2(g-1) steps of n/g; the tree (4 steps of n) is slower for 1 MB.
  CollectiveCost ar = collectiveCost(t, mesh, "all_reduce", {"model"}, n);
  EXPECT_NEAR(ar.seconds, 6 * (1e-6 + 2.5e5 / 100e9), 1e-12);
  EXPECT_DOUBLE_EQ(ar.bytes, 1.5e6);
  EXPECT_FALSE(ar.crossesNodes);
  // For 1 KB the latency dominates and the tree wins: 2 log2(4) = 4 steps of n.
  EXPECT_NEAR(collectiveCost(t, mesh, "all_reduce", {"model"}, 1e3).seconds,
              4 * (1e-6 + 1e3 / 100e9), 1e-12);
  // Across nodes, one device per node: ring over the slow link.
  CollectiveCost across = collectiveCost(t, mesh, "all_reduce", {"data"}, n);
  EXPECT_TRUE(across.crossesNodes);
  EXPECT_NEAR(across.seconds, 2 * (1e-5 + 5e5 / 10e9), 1e-12);
  EXPECT_NEAR(collectiveCost(t, mesh, "all_gather", {"model"}, n).seconds, 3 * (1e-6 + 1e6 / 100e9),
              1e-12);
  EXPECT_NEAR(collectiveCost(t, mesh, "reduce_scatter", {"model"}, n).seconds,
              3 * (1e-6 + 2.5e5 / 100e9), 1e-12);
  // All eight devices: hierarchical gather, 3 steps in the node, then 1 step of 4n across.
  EXPECT_NEAR(collectiveCost(t, mesh, "all_gather", {"data", "model"}, n).seconds,
              3 * (1e-6 + 1e6 / 100e9) + (1e-5 + 4e6 / 10e9), 1e-12);
  EXPECT_NEAR(collectiveCost(t, mesh, "all_to_all", {"data", "model"}, n).seconds,
              7 * (1e-5 + 1.25e5 / 10e9), 1e-12);
  EXPECT_NEAR(collectiveCost(t, mesh, "collective_permute", {"model"}, n).seconds,
              1e-6 + 1e6 / 100e9, 1e-12);
  EXPECT_EQ(collectiveCost(t, Mesh::parse("data=1"), "all_reduce", {"data"}, n).seconds, 0);
}

TEST(CostModelTest, ComputeIsARooflinePerOp) {
  auto m = testing::parseIR(R"(
func @f(input %a: f32[64,128], input %b: f32[128,256]) -> (c: f32[64,256], d: f32[64,256]) {
  %c = matmul(%a, %b) : f32[64,256]
  %d = relu(%c) : f32[64,256]
  return %c, %d
})");
  ASSERT_TRUE(m);
  CostReport r = makeAnalyticCostModel(testTarget())->evaluate(*m->functions()[0], Mesh());
  double mmFlops = 2.0 * 64 * 128 * 256;
  double mmBytes = 4.0 * (64 * 128 + 128 * 256 + 64 * 256);
  double reluBytes = 4.0 * 2 * 64 * 256;
  EXPECT_DOUBLE_EQ(r.flops, mmFlops + 64 * 256);
  // matmul is compute-bound here, relu memory-bound; each pays the op overhead.
  double want = std::max(mmFlops / 0.5e12, mmBytes / 0.5e11) + 1e-6 +
                std::max(64 * 256 / 0.5e12, reluBytes / 0.5e11) + 1e-6;
  EXPECT_NEAR(r.computeSeconds, want, 1e-12);
  EXPECT_EQ(r.commSeconds, 0);
  EXPECT_NEAR(r.stepSeconds, want, 1e-12);
  // A GEMM pays the library call's cost on top; the relu does not.
  Target t = testTarget();
  t.gemmOverhead = 5e-6;
  CostReport g = makeAnalyticCostModel(t)->evaluate(*m->functions()[0], Mesh());
  EXPECT_NEAR(g.computeSeconds, want + 5e-6, 1e-12);
}

// Thread devices on a 2-core host whose figures were measured with both cores: each of d
// devices gets 2/d cores, so a roofline term stretches by d, and the fixed costs stretch only
// once the devices outnumber the cores.
TEST(CostModelTest, DevicesSharingCoresSplitThroughputAndTakeTurnsForFixedCosts) {
  auto m = testing::parseIR(R"(
func @f(input %a: f32[64,128], input %b: f32[128,256]) -> (c: f32[64,256]) {
  %c = matmul(%a, %b) : f32[64,256]
  return %c
})");
  ASSERT_TRUE(m);
  Target t = testTarget();
  t.gemmOverhead = 5e-6;
  t.computeUnits = 2;
  t.deviceComputeUnits = 2;
  double roofline = 2.0 * 64 * 128 * 256 / 0.5e12, fixed = 1e-6 + 5e-6;
  auto seconds = [&](const char* mesh) {
    return makeAnalyticCostModel(t)->evaluate(*m->functions()[0], Mesh::parse(mesh)).computeSeconds;
  };
  EXPECT_NEAR(seconds("data=1"), roofline + fixed, 1e-12);
  EXPECT_NEAR(seconds("data=2"), 2 * roofline + fixed, 1e-12);
  EXPECT_NEAR(seconds("data=4"), 4 * roofline + 2 * fixed, 1e-12);
  // Figures of one core each (MPI ranks of one thread): two devices fit side by side.
  t.deviceComputeUnits = 1;
  EXPECT_NEAR(seconds("data=2"), roofline + fixed, 1e-12);
  EXPECT_NEAR(seconds("data=4"), 2 * roofline + 2 * fixed, 1e-12);
}

// Attention's batched products pay per matrix of the batch; a batch on the left operand alone
// (activations times a weight) is one GEMM of more rows and pays once.
TEST(CostModelTest, BatchedMatmulsPayPerMatrix) {
  auto m = testing::parseIR(R"(
func @f(input %a: f32[4,3,8,8], input %b: f32[4,3,8,8], input %w: f32[8,8]) -> (c: f32[4,3,8,8], d: f32[4,3,8,8]) {
  %c = matmul(%a, %b) : f32[4,3,8,8]
  %d = matmul(%a, %w) : f32[4,3,8,8]
  return %c, %d
})");
  ASSERT_TRUE(m);
  Target t = testTarget();
  t.opOverhead = 0;
  t.gemmOverhead = 5e-6;
  t.gemmBatchOverhead = 1e-6;
  CostReport r = makeAnalyticCostModel(t)->evaluate(*m->functions()[0], Mesh());
  double flops = 2.0 * 12 * 8 * 8 * 8;
  double batched = 4.0 * 3 * (12 * 8 * 8), weight = 4.0 * (2 * 12 * 8 * 8 + 8 * 8);
  EXPECT_NEAR(r.computeSeconds,
              std::max(flops / 0.5e12, batched / 0.5e11) + 5e-6 + 11 * 1e-6 +
                  std::max(flops / 0.5e12, weight / 0.5e11) + 5e-6,
              1e-12);
}

TEST(CostModelTest, ConvFlopsComeFromTheRegistry) {
  // 2 * Cin * Kh * Kw per output element: 2 * 3 * 3 * 3 * (1 * 4 * 8 * 8).
  auto m = testing::parseIR(R"(
func @f(input %x: f32[1,3,8,8], input %w: f32[4,3,3,3]) -> (y: f32[1,4,8,8]) {
  %y = conv2d(%x, %w) {pads = [1, 1, 1, 1]} : f32[1,4,8,8]
  return %y
})");
  ASSERT_TRUE(m);
  CostReport r = makeAnalyticCostModel(testTarget())->evaluate(*m->functions()[0], Mesh());
  EXPECT_DOUBLE_EQ(r.flops, 2.0 * 3 * 3 * 3 * 4 * 8 * 8);
}

// A small training step whose liveness is worked out by hand in the comments (bytes of the
// op results alive after each op).
TEST(CostModelTest, MemoryOfATrainingStepByHand) {
  auto m = testing::parseIR(R"(
func @step(input %x: f32[4,8], param %w: f32[8,2], opt_state %v: f32[8,2]) -> (loss: f32[], w2: f32[8,2] tied %w, v2: f32[8,2] tied %v) {
  %y = matmul(%x, %w) : f32[4,2]
  %loss = reduce_sum(%y) {axes = [0, 1]} : f32[]
  %xt = transpose(%x) {perm = [1, 0]} : f32[8,4]
  %ones = constant() {value = dense<f32[4,2], 1.0>} : f32[4,2]
  %gw = matmul(%xt, %ones) : f32[8,2]
  %v2 = add(%v, %gw) : f32[8,2]
  %lr = constant() {value = dense<f32[], 0.1>} : f32[]
  %step = mul(%v2, %lr) : f32[8,2]
  %w2 = sub(%w, %step) : f32[8,2]
  return %loss, %w2, %v2
})");
  // The constants ones (32) and lr (4) stay for the whole step: 36. Beside them: y 32 |
  // y+loss 36, y dies | loss+xt 132 | +gw 196, xt dies: 68 | v2 into v's buffer, gw dies: 4 |
  // +step 68 | w2 into w's buffer.
  ASSERT_TRUE(m);
  CostReport r = makeAnalyticCostModel(testTarget())->evaluate(*m->functions()[0], Mesh());
  EXPECT_EQ(r.memory.activations, 36 + 196);
  EXPECT_EQ(r.memory.inputs, 128);
  EXPECT_EQ(r.memory.parameters, 64);
  EXPECT_EQ(r.memory.optimizerState, 64);
  EXPECT_EQ(r.memory.peak(), 36 + 196 + 128 + 64 + 64);
  EXPECT_TRUE(r.fits());
}

// An update goes into its argument's buffer when nothing reads the argument after it.
TEST(CostModelTest, UpdatesTakeTheirArgumentsBuffers) {
  auto m = testing::parseIR(R"(
func @inPlace(input %x: f32[16], param %w: f32[16]) -> (loss: f32[], w2: f32[16] tied %w) {
  %w2 = sub(%w, %x) : f32[16]
  %loss = reduce_sum(%x) {axes = [0]} : f32[]
  return %loss, %w2
}
func @readAfter(input %x: f32[16], param %w: f32[16]) -> (loss: f32[], w2: f32[16] tied %w) {
  %w2 = sub(%w, %x) : f32[16]
  %late = add(%w, %x) : f32[16]
  %loss = reduce_sum(%late) {axes = [0]} : f32[]
  return %loss, %w2
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(peakActivationBytes(*m->functions()[0]), 4);
  EXPECT_EQ(peakActivationBytes(*m->functions()[1]), 64 + 64 + 4);
}

TEST(CostModelTest, CollectivesInAProgramAreCounted) {
  auto m = testing::parseIR(R"(
func @f(input %x: f32[1000]) -> (y: f32[1000]) {
  %y = all_reduce(%x) {axes = "model", group = 4} : f32[1000]
  return %y
})");
  ASSERT_TRUE(m);
  Mesh mesh = Mesh::parse("data=2,model=4");
  CostReport r = makeAnalyticCostModel(testTarget())->evaluate(*m->functions()[0], mesh);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].group, 4);
  EXPECT_DOUBLE_EQ(r.commSeconds,
                   collectiveCost(testTarget(), mesh, "all_reduce", {"model"}, 4000).seconds);
  EXPECT_EQ(r.computeSeconds, 0);
  EXPECT_NE(r.str().find("all_reduce"), std::string::npos);
  // Eight devices sharing two compute units take turns: compute and the waits in
  // collectives both stretch fourfold.
  Target shared = testTarget();
  shared.computeUnits = 2;
  CostReport s = makeAnalyticCostModel(shared)->evaluate(*m->functions()[0], mesh);
  EXPECT_DOUBLE_EQ(s.commSeconds, 4 * r.commSeconds);
  EXPECT_DOUBLE_EQ(s.collectives[0].seconds, 4 * r.collectives[0].seconds);
  // And each collective waits for its descheduled peers: 3 devices per core past the first.
  shared.intraNode.oversubscribedWait = 2e-5;
  CostReport w = makeAnalyticCostModel(shared)->evaluate(*m->functions()[0], mesh);
  EXPECT_DOUBLE_EQ(w.commSeconds, 4 * r.commSeconds + 3 * 2e-5);
  // Devices that fit the cores never wait so.
  shared.computeUnits = 8;
  CostReport fit = makeAnalyticCostModel(shared)->evaluate(*m->functions()[0], mesh);
  EXPECT_DOUBLE_EQ(fit.commSeconds, r.commSeconds);
}

// The overlap hides its fraction of the shorter side: here compute (an add of 1000 values,
// 12 KB at 5e10 B/s plus the op overhead) under the all-reduce.
TEST(CostModelTest, OverlapHidesPartOfTheShorterSide) {
  auto m = testing::parseIR(R"(
func @f(input %x: f32[1000]) -> (y: f32[1000]) {
  %s = add(%x, %x) : f32[1000]
  %y = all_reduce(%s) {axes = "model", group = 4} : f32[1000]
  return %y
})");
  ASSERT_TRUE(m);
  Mesh mesh = Mesh::parse("data=2,model=4");
  CostReport none = makeAnalyticCostModel(testTarget())->evaluate(*m->functions()[0], mesh);
  EXPECT_EQ(none.overlapSeconds, 0);
  EXPECT_DOUBLE_EQ(none.stepSeconds, none.computeSeconds + none.commSeconds);
  Target t = testTarget();
  t.commOverlap = 0.5;
  CostReport half = makeAnalyticCostModel(t)->evaluate(*m->functions()[0], mesh);
  ASSERT_LT(half.computeSeconds, half.commSeconds);
  EXPECT_DOUBLE_EQ(half.overlapSeconds, 0.5 * half.computeSeconds);
  EXPECT_DOUBLE_EQ(half.stepSeconds, half.commSeconds + 0.5 * half.computeSeconds);
  EXPECT_NE(half.str().find("- overlapped"), std::string::npos);
}

} // namespace
} // namespace shardc
