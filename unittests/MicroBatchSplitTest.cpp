// Micro-batches the compiler chooses (splitBatch + the training step's accumulation): where the
// samples of the batch meet in a sum, the step over the split batch still equals the step over
// the whole batch, checked with the interpreter; and where it could not, the split is refused.
#include "TestUtil.h"

#include "shardc/exec/Interpreter.h"
#include "shardc/ir/IR.h"
#include "shardc/sharding/SplitBatch.h"
#include "shardc/support/Error.h"
#include "shardc/train/TrainStep.h"

#include <gtest/gtest.h>

#include <map>

namespace shardc {
namespace {

using testing::allClose;
using testing::parseIR;

// The training step (SGD) of the model in `text`, its batch split into `pieces` micro-batches
// (1: not split), run once on `values` (by argument name; the rest get patternArgs): each
// result by name.
std::map<std::string, Tensor> step(const std::string& text, int64_t pieces,
                                   const std::map<std::string, Tensor>& values) {
  std::unique_ptr<Module> m = parseIR(text);
  if (!m) return {};
  if (pieces > 1) m = splitBatch(*m->functions()[0], pieces);
  Function& f = *m->functions()[0];
  TrainOptions o;
  o.learningRate = 0.5;
  o.microBatches = pieces;
  buildTrainStep(f, o);
  std::vector<Tensor> args = testing::patternArgs(f);
  for (size_t i = 0; i < f.numArguments(); ++i)
    if (auto it = values.find(f.argument(i)->name()); it != values.end()) args[i] = it->second;
  std::vector<Tensor> out = interpret(f, args);
  std::map<std::string, Tensor> byName;
  for (size_t i = 0; i < out.size(); ++i)
    byName.emplace(f.results()[i].name, out[i]);
  return byName;
}

void expectSameStep(const std::string& text, const std::map<std::string, Tensor>& values) {
  std::map<std::string, Tensor> whole = step(text, 1, values);
  ASSERT_FALSE(whole.empty());
  for (int64_t pieces : {2, 4}) {
    std::map<std::string, Tensor> split = step(text, pieces, values);
    ASSERT_EQ(split.size(), whole.size());
    for (const auto& [name, want] : whole)
      EXPECT_TRUE(allClose(split.at(name), want, 1e-6, 1e-7)) << name << ", " << pieces;
  }
}

Tensor ramp(Shape shape, double scale) {
  Tensor t(TensorType{DType::F32, shape});
  for (int64_t i = 0; i < t.numel(); ++i)
    t.setDouble(i, scale * static_cast<double>((i * 37) % 23 - 11));
  return t;
}

// A loss inside the model that is the sum of the valid samples' losses over their count (what
// PyTorch exports for cross-entropy with ignore_index): the micro-batches hold different counts,
// so the mean of their ratios would not be the batch's ratio.
TEST(MicroBatchSplitTest, RatioOfSumsEqualsTheWholeBatch) {
  const std::string text = R"(
func @ratio(input %x: f32[16,8], input %valid: f32[16], param %w: f32[8,8], param %v: f32[8,1]) -> (loss: f32[]) {
  %h = matmul(%x, %w) : f32[16,8]
  %t = tanh(%h) : f32[16,8]
  %s = matmul(%t, %v) : f32[16,1]
  %r = reshape(%s) {shape = [16]} : f32[16]
  %e = mul(%r, %r) : f32[16]
  %kept = mul(%e, %valid) : f32[16]
  %num = reduce_sum(%kept) {axes = [0], keepdims = false} : f32[]
  %den = reduce_sum(%valid) {axes = [0], keepdims = false} : f32[]
  %loss = div(%num, %den) : f32[]
  return %loss
})";
  // Micro-batch i of 4 holds samples i, i + 4, ...: counts 1, 3, 4 and 2.
  Tensor valid = testing::f32({16}, {1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0});
  expectSameStep(text, {{"x", ramp({16, 8}, 0.05)}, {"valid", valid}});
}

// Inputs centred on the whole batch's mean (a sum no parameter reaches, feeding every
// sample's activations), a mean loss, and a term of the parameters alone.
TEST(MicroBatchSplitTest, WholeBatchStatisticsOfTheInputsAndAMeanLoss) {
  const std::string text = R"(
func @centered(input %x: f32[16,8], param %w: f32[8,8]) -> (loss: f32[]) {
  %m = reduce_mean(%x) {axes = [0], keepdims = true} : f32[1,8]
  %c = sub(%x, %m) : f32[16,8]
  %h = matmul(%c, %w) : f32[16,8]
  %sq = mul(%h, %h) : f32[16,8]
  %mean = reduce_mean(%sq) {axes = [0, 1], keepdims = false} : f32[]
  %ww = mul(%w, %w) : f32[8,8]
  %decay = reduce_sum(%ww) {axes = [0, 1], keepdims = false} : f32[]
  %loss = add(%mean, %decay) : f32[]
  return %loss
})";
  expectSameStep(text, {{"x", ramp({16, 8}, 0.1)}});
}

void expectRefused(const std::string& text, const std::string& why) {
  std::unique_ptr<Module> m = parseIR(text);
  ASSERT_TRUE(m);
  try {
    splitBatch(*m->functions()[0], 2);
    ADD_FAILURE() << "split";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(MicroBatchSplitTest, RefusedWhereTheMicroBatchesCannotStandForTheBatch) {
  // The square of a mean over the batch is not the mean of the micro-batches' squares.
  expectRefused(R"(
func @square(input %x: f32[8,4], param %w: f32[4,4]) -> (loss: f32[]) {
  %h = matmul(%x, %w) : f32[8,4]
  %m = reduce_mean(%h) {axes = [0, 1], keepdims = false} : f32[]
  %l = mul(%m, %m) : f32[]
  return %l
})",
                "reaches mul");
  // Batch statistics of the activations feed every sample.
  expectRefused(R"(
func @mix(input %x: f32[8,4], param %w: f32[4,4]) -> (y: f32[8,4]) {
  %h = matmul(%x, %w) : f32[8,4]
  %m = reduce_mean(%h) {axes = [0], keepdims = true} : f32[1,4]
  %y = sub(%h, %m) : f32[8,4]
  return %y
})",
                "reaches sub");
  // A sum over the batch kept as an output is the micro-batch's, not the batch's.
  expectRefused(R"(
func @total(input %x: f32[8,4], param %w: f32[4,4]) -> (s: f32[4]) {
  %h = matmul(%x, %w) : f32[8,4]
  %s = reduce_sum(%h) {axes = [0], keepdims = false} : f32[4]
  return %s
})",
                "result 's' holds a sum over the batch");
}

} // namespace
} // namespace shardc
