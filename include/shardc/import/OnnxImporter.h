// Imports an ONNX model (as PyTorch's exporter writes it) into a shardc IR module.
#pragma once

#include "shardc/ir/Attribute.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace shardc {
class Module;
class Op;

// The random-number state of a model with training-mode dropout: an opt_state argument
// i64[2] = [seed, step], starting at [0, 0], that the forward advances by one step per step
// (a tied result); `shardc run --seed S` sets the seed.
inline constexpr const char* kRngStateName = "dropout.rng";

struct ImportOptions {
  // Size for dimension 0 of every graph input (the batch): replaces a symbolic dimension
  // or rebinds a fixed one. Required when an input has a symbolic dimension.
  std::optional<int64_t> batchSize;
  // Data-parallel replicas the batch is for: dimension 0 of every input is `batchSize` (or
  // the exported size) times this, all replicas' samples (--data-parallel -ws N: -b is one
  // replica's batch).
  int64_t batchReplicas = 1;
  // Give each parameter that the exporter merged into another (an Identity of an
  // initializer, named as the parameter) its own copy of the value.
  bool untieInitializers = false;
  // Import for a training step: training-mode Dropout draws masks and training-mode
  // BatchNormalization normalizes with the batch's statistics and carries its running ones
  // as state (else both are their inference forms).
  bool training = false;
};

struct ImportedModel {
  std::unique_ptr<Module> module;
  std::map<std::string, TensorRef> weights; // the value of every `param` argument
  // Initial values of the opt_state arguments the model itself carries from step to step
  // (BatchNormalization's running statistics, dropout's random-number state); @main ties a
  // result to each, its value after the step.
  std::map<std::string, TensorRef> state;
  // PyTorch's exporter outside training mode keeps one of several parameters with equal
  // values (fresh LayerNorms' ones and zeros, zero biases) and feeds the others' names from
  // it through Identity nodes: kept initializer -> the parameter names it stands for, in
  // graph order. Trained as imported, they are one parameter.
  std::map<std::string, std::vector<std::string>> mergedInitializers;
  // Float initializers imported as constants, not parameters, for holding an infinity or NaN
  // (attention-mask buffers hold infinities), in file order, each with the index of its first
  // NaN (-1: infinities only).
  std::vector<std::pair<std::string, int64_t>> constantInitializers;
  // The name of the ONNX node each op of @main was imported for (the exporter's module
  // scope, "/h.0/attn/MatMul"): what --hypersection-pattern matches.
  std::unordered_map<const Op*, std::string> opOrigins;
  ImportedModel();
  ImportedModel(ImportedModel&&);
  ImportedModel& operator=(ImportedModel&&);
  ~ImportedModel();
};

// Returns a module with one function @main: graph inputs become `input` arguments,
// floating-point initializers `param` arguments named as in the file (integer and bool
// initializers, and float ones holding an infinity or NaN, become constants), graph outputs the
// named results. Shape arithmetic (Shape, Gather on shapes, Concat, Range, ...) is folded at import
// time. Throws shardc::Error naming the file, and for op problems the node, op type and opset.
ImportedModel importOnnx(const std::string& path, const ImportOptions& options);

// Reads a serialized ONNX TensorProto (.pb file, as in ONNX's backend test data). That data
// holds bfloat16 tensors as UINT16 (numpy has no bfloat16): with `as` BF16, such a tensor is
// read as bfloat16 bits.
Tensor readOnnxTensor(const std::string& path, std::optional<DType> as = std::nullopt);

// The ONNX op types the importer maps, sorted.
std::vector<std::string> supportedOnnxOps();

} // namespace shardc
