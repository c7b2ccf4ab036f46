// Training-mode BatchNormalization as the importer decomposes it, in float64: the forward
// against the formula (batch statistics, biased variance for normalizing, unbiased for the
// running update), and the gradients with respect to X, scale and bias against central finite
// differences, for BatchNorm1d on [N, C] and [N, C, L] and BatchNorm2d on [N, C, H, W].
#include "shardc/exec/Interpreter.h"
#include "shardc/import/OnnxImporter.h"
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/train/Autodiff.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

using namespace shardc;

namespace {

constexpr double kMomentum = 0.9, kEpsilon = 1e-5;

onnx::ValueInfoProto doubleInput(const std::string& name, const Shape& shape) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::DOUBLE);
  for (int64_t d : shape)
    t->mutable_shape()->add_dim()->set_dim_value(d);
  return v;
}

// A model of one BatchNormalization node in training mode (opset 15) over X of `shape`, with
// the running statistics as graph inputs and the updated ones as graph outputs (ONNX's own
// training-mode cases look so), written to a temporary file and imported for training.
ImportedModel importBatchNorm(const Shape& shape) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("bn");
  Shape channel{shape[1]};
  *g.add_input() = doubleInput("x", shape);
  for (const char* n : {"scale", "bias", "mean", "var"})
    *g.add_input() = doubleInput(n, channel);
  onnx::NodeProto& node = *g.add_node();
  node.set_op_type("BatchNormalization");
  for (const char* n : {"x", "scale", "bias", "mean", "var"})
    node.add_input(n);
  for (const char* n : {"y", "running_mean", "running_var"})
    node.add_output(n);
  auto attr = [&](const char* name, double f) {
    onnx::AttributeProto& a = *node.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::FLOAT);
    a.set_f(static_cast<float>(f));
  };
  attr("epsilon", kEpsilon);
  attr("momentum", kMomentum);
  onnx::AttributeProto& mode = *node.add_attribute();
  mode.set_name("training_mode");
  mode.set_type(onnx::AttributeProto::INT);
  mode.set_i(1);
  *g.add_output() = doubleInput("y", shape);
  *g.add_output() = doubleInput("running_mean", channel);
  *g.add_output() = doubleInput("running_var", channel);
  std::string path =
      (std::filesystem::temp_directory_path() / ("shardc-bn-" + std::to_string(getpid()) + ".onnx"))
          .string();
  {
    std::ofstream out(path, std::ios::binary);
    m.SerializeToOstream(&out);
  }
  ImportOptions options;
  options.training = true;
  ImportedModel imported = importOnnx(path, options);
  std::filesystem::remove(path);
  return imported;
}

Tensor randomTensor(const Shape& shape, std::mt19937_64& gen, double lo, double hi) {
  Tensor t(TensorType{DType::F64, shape});
  std::uniform_real_distribution<double> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.setDouble(i, d(gen));
  return t;
}

class BatchNormTraining : public ::testing::TestWithParam<Shape> {};

TEST_P(BatchNormTraining, ForwardMatchesTheFormula) {
  Shape shape = GetParam();
  ImportedModel m = importBatchNorm(shape);
  const Function& f = *m.module->functions()[0];
  std::mt19937_64 gen(7);
  Shape channel{shape[1]};
  std::vector<Tensor> args{randomTensor(shape, gen, -2, 3), randomTensor(channel, gen, 0.5, 2),
                           randomTensor(channel, gen, -1, 1), randomTensor(channel, gen, -1, 1),
                           randomTensor(channel, gen, 0.5, 2)};
  std::vector<Tensor> out = interpret(f, args);
  int64_t c = shape[1], inner = 1, n = 0;
  for (size_t i = 2; i < shape.size(); ++i)
    inner *= shape[i];
  n = shape[0] * inner;
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    auto at = [&](int64_t b, int64_t k) { return (b * c + ch) * inner + k; };
    for (int64_t b = 0; b < shape[0]; ++b)
      for (int64_t k = 0; k < inner; ++k)
        sum += args[0].getDouble(at(b, k));
    double mean = sum / static_cast<double>(n);
    for (int64_t b = 0; b < shape[0]; ++b)
      for (int64_t k = 0; k < inner; ++k)
        sq += std::pow(args[0].getDouble(at(b, k)) - mean, 2);
    double biased = sq / static_cast<double>(n);
    for (int64_t b = 0; b < shape[0]; ++b)
      for (int64_t k = 0; k < inner; ++k) {
        double want = (args[0].getDouble(at(b, k)) - mean) / std::sqrt(biased + kEpsilon) *
                          args[1].getDouble(ch) +
                      args[2].getDouble(ch);
        EXPECT_NEAR(out[0].getDouble(at(b, k)), want, 1e-10) << "y at " << at(b, k);
      }
    // ONNX's running outputs blend in the biased variance (PyTorch's buffers, carried as
    // state in a training import of its exports, take the unbiased one: test/train).
    EXPECT_NEAR(out[1].getDouble(ch), kMomentum * args[3].getDouble(ch) + (1 - kMomentum) * mean,
                1e-6);
    EXPECT_NEAR(out[2].getDouble(ch), kMomentum * args[4].getDouble(ch) + (1 - kMomentum) * biased,
                1e-6);
  }
}

TEST_P(BatchNormTraining, GradientsMatchFiniteDifferences) {
  Shape shape = GetParam();
  ImportedModel m = importBatchNorm(shape);
  Function& f = *m.module->functions()[0];
  std::mt19937_64 gen(11);
  Shape channel{shape[1]};
  std::vector<Tensor> args{randomTensor(shape, gen, -2, 3), randomTensor(channel, gen, 0.5, 2),
                           randomTensor(channel, gen, -1, 1), randomTensor(channel, gen, -1, 1),
                           randomTensor(channel, gen, 0.5, 2)};
  // loss = <y, R> for a fixed random R, so the incoming gradient is not uniform (a uniform
  // one meets a zero gradient with respect to x, the normalization removing any shift).
  Builder b(f);
  Value* y = f.results()[0].value;
  Tensor weights = randomTensor(shape, gen, -1, 1);
  Value* r = b.value("constant", {}, {{"value", TensorRef(std::make_shared<Tensor>(weights))}});
  std::vector<int64_t> all;
  for (size_t i = 0; i < shape.size(); ++i)
    all.push_back(static_cast<int64_t>(i));
  Value* loss = b.value("reduce_sum", {b.value("mul", {y, r})}, {{"axes", all}});
  std::vector<Value*> wrt{f.argument(0), f.argument(1), f.argument(2)};
  std::vector<Value*> grads = buildGradients(f, loss, wrt);
  f.addResult("loss", loss);
  for (size_t i = 0; i < grads.size(); ++i) {
    ASSERT_TRUE(grads[i]) << "no gradient for operand " << i;
    f.addResult("g" + std::to_string(i), grads[i]);
  }
  size_t lossIndex = f.results().size() - 1 - grads.size();
  std::vector<Tensor> out = interpret(f, args);
  auto lossAt = [&](const std::vector<Tensor>& v) {
    return interpret(f, v)[lossIndex].getDouble(0);
  };
  const double h = 1e-6;
  const char* names[] = {"x", "scale", "bias"};
  for (size_t i = 0; i < wrt.size(); ++i) {
    const Tensor& analytic = out[lossIndex + 1 + i];
    for (int64_t j = 0; j < args[i].numel(); ++j) {
      std::vector<Tensor> plus = args, minus = args;
      plus[i].setDouble(j, args[i].getDouble(j) + h);
      minus[i].setDouble(j, args[i].getDouble(j) - h);
      double fd = (lossAt(plus) - lossAt(minus)) / (2 * h);
      EXPECT_NEAR(analytic.getDouble(j), fd, 1e-6 * std::max(1.0, std::fabs(fd)))
          << names[i] << " element " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, BatchNormTraining,
                         ::testing::Values(Shape{6, 3}, Shape{4, 3, 5}, Shape{2, 3, 3, 4}));

} // namespace
