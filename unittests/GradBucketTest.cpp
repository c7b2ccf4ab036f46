// bucketGradientReductions: the gradient sums of a data-parallel step merged in program order
// into buckets of at most the given bytes, kept apart by the axes they sum over, the program
// still valid; sums outside the gradient reduction (the loss's) left alone.
#include "TestUtil.h"

#include "shardc/dataflow/Sections.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Verifier.h"

#include <gtest/gtest.h>

#include <map>

using namespace shardc;
using namespace shardc::testing;

namespace {

// Gradients of 4, 8, 2 and 4 floats summed over `data`, the last over `model` too, each
// applied by an SGD update; the loss summed over `data` as an output.
const char* kStep = R"(
func @f(input %x: f32[4], param %w1: f32[4], param %w2: f32[8], param %w3: f32[2], param %w4: f32[4]) -> (loss: f32[], n1: f32[4] tied %w1, n2: f32[8] tied %w2, n3: f32[2] tied %w3, n4: f32[4] tied %w4) {
  %p = mul(%x, %w1) : f32[4]
  %l = reduce_sum(%p) {axes = [0]} : f32[]
  %loss = all_reduce(%l) {axes = "data", group = 2} : f32[]
  %g1 = mul(%x, %x) : f32[4]
  %s1 = all_reduce(%g1) {axes = "data", group = 2} : f32[4]
  %g2 = concat(%g1, %x) {axis = 0} : f32[8]
  %s2 = all_reduce(%g2) {axes = "data", group = 2} : f32[8]
  %g3 = slice(%x) {start = [0], limit = [2], stride = [1]} : f32[2]
  %s3 = all_reduce(%g3) {axes = "data", group = 2} : f32[2]
  %g4 = add(%x, %x) : f32[4]
  %s4 = all_reduce(%g4) {axes = "data,model", group = 4} : f32[4]
  %lr = constant() {value = dense<f32[], 0.1>} : f32[]
  %u1 = mul(%s1, %lr) : f32[4]
  %n1 = sub(%w1, %u1) : f32[4]
  %u2 = mul(%s2, %lr) : f32[8]
  %n2 = sub(%w2, %u2) : f32[8]
  %u3 = mul(%s3, %lr) : f32[2]
  %n3 = sub(%w3, %u3) : f32[2]
  %u4 = mul(%s4, %lr) : f32[4]
  %n4 = sub(%w4, %u4) : f32[4]
  return %loss, %n1, %n2, %n3, %n4
}
)";

std::map<std::string, int> allReduces(const Function& f) {
  std::map<std::string, int> n;
  for (const auto& op : f.ops())
    if (op->name() == "all_reduce")
      ++n[op->attrs().getString("axes") + "[" + std::to_string(op->operand(0)->type().numel()) +
          "]"];
  return n;
}

TEST(GradBucketTest, MergesInOrderUpToTheBucketSize) {
  // 48 bytes: the 4- and 8-float gradients fill a bucket; the 2-float one stays alone.
  auto m = parseIR(kStep);
  ASSERT_TRUE(m);
  Function& f = *m->functions().front();
  EXPECT_EQ(bucketGradientReductions(f, 48), 2);
  DiagEngine diags("<test>");
  EXPECT_TRUE(verifyModule(*m, diags));
  std::map<std::string, int> want{
      {"data[1]", 1}, {"data[12]", 1}, {"data[2]", 1}, {"data,model[4]", 1}};
  EXPECT_EQ(allReduces(f), want);

  auto all = parseIR(kStep);
  Function& g = *all->functions().front();
  EXPECT_EQ(bucketGradientReductions(g, 25 << 20), 3);
  std::map<std::string, int> one{{"data[1]", 1}, {"data[14]", 1}, {"data,model[4]", 1}};
  EXPECT_EQ(allReduces(g), one);
  EXPECT_TRUE(verifyModule(*all, diags));
}

} // namespace
