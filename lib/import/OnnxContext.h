// What the per-op import functions see: the node's inputs as IR values or compile-time
// constants, attribute readers, and op emission with folding of all-constant operands.
#pragma once

#include "shardc/ir/Attribute.h"
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

namespace shardc::onnximport {

// An ONNX value during import: a compile-time constant, an IR value, or both (a constant
// materialized as a `constant` op on first use as an operand).
struct Entry {
  Value* value = nullptr;
  TensorRef constant;
  // A weight's value: readable where ONNX needs a compile-time input, but never folded
  // into constants, so that the weight stays a parameter.
  TensorRef initializer;
};

// Converts an ONNX tensor with inline data (the importer inlines external data first) to
// a host tensor. `where` names the tensor in errors.
Tensor tensorFromProto(const onnx::TensorProto& t, const std::string& where);
DType dtypeFromOnnx(int32_t onnxType, const std::string& where);

class Context {
public:
  Context(Function& f, std::string file, int64_t opset)
      : f_(f), b_(f), file_(std::move(file)), opset_(opset) {}

  int64_t opset() const { return opset_; }
  Function& function() { return f_; }

  // Whether the model is imported for a training step (training-mode Dropout draws masks)
  // or for inference (it is the identity).
  bool training() const { return training_; }
  void setTraining(bool t) { training_ = t; }
  // The graph's output names: a node whose optional outputs the graph returns asks for them.
  std::set<std::string> graphOutputs;
  bool isGraphOutput(size_t i) const { return graphOutputs.count(outputName(i)) != 0; }
  // The training step's random-number state, made on first use: an opt_state argument
  // [seed, step] (kRngStateName) starting at [0, 0]; its value is in `initialState`.
  Value* rngState();
  // A new stream for each random op, so that no two draw the same numbers.
  int64_t nextRandomStream() { return streams_++; }
  // Model state (opt_state arguments) and its value after the step, tied in @main's results.
  std::map<std::string, TensorRef> initialState;
  void carry(Value* state, Entry next);
  std::vector<std::pair<Value*, Entry>> carried;

  void define(const std::string& name, Entry e) { values_[name] = std::move(e); }
  bool isDefined(const std::string& name) const { return values_.count(name) != 0; }
  const Entry* lookup(const std::string& name) const;

  // The node being imported; errors name it.
  void setNode(const onnx::NodeProto* node) {
    node_ = node;
    readAttrs_.clear();
  }
  [[noreturn]] void fail(const std::string& message) const;
  const onnx::NodeProto& node() const { return *node_; }

  size_t numInputs() const;
  size_t numOutputs() const { return static_cast<size_t>(node_->output_size()); }
  const std::string& outputName(size_t i) const { return node_->output(static_cast<int>(i)); }
  bool hasInput(size_t i) const; // present and not the empty name
  TensorType inputType(size_t i);
  // Input i as an IR value (materializing a constant).
  Value* input(size_t i);
  // Input i's compile-time value, or nullptr when it is only known at run time.
  const Tensor* constantInput(size_t i);
  // As constantInput, failing with a message that names `what` when not constant.
  const Tensor& requireConstant(size_t i, const std::string& what);
  std::vector<int64_t> constantInts(size_t i, const std::string& what);
  // `axis` normalized against `rank`, failing when it is out of range.
  int64_t axis(int64_t axis, int64_t rank) const;

  bool hasAttr(const std::string& name) const;
  // Marks an attribute as deliberately ignored (it cannot change the result). Every other
  // attribute of a node must be read, or the import fails: an attribute shardc does not
  // understand must never be dropped silently.
  void ignoreAttr(const std::string& name) const { readAttrs_.insert(name); }
  // Fails naming the first attribute of the current node that was neither read nor ignored.
  void checkAllAttrsRead() const;
  int64_t attrInt(const std::string& name, std::optional<int64_t> dflt = std::nullopt) const;
  float attrFloat(const std::string& name, std::optional<float> dflt = std::nullopt) const;
  // A float attribute as the shortest decimal that rounds to it: the value the exporter was
  // given (PyTorch writes BatchNorm's momentum 0.1 as 1 - 0.1, stored as the float nearest
  // 0.9), so that a float64 model computes with the user's number.
  double attrDecimal(const std::string& name, float dflt) const;
  std::string attrString(const std::string& name,
                         std::optional<std::string> dflt = std::nullopt) const;
  std::vector<int64_t> attrInts(const std::string& name,
                                std::optional<std::vector<int64_t>> dflt = std::nullopt) const;
  std::vector<std::string>
  attrStrings(const std::string& name,
              std::optional<std::vector<std::string>> dflt = std::nullopt) const;
  const onnx::TensorProto& attrTensor(const std::string& name) const;

  // Emits op `name`; when every operand is a constant (and the result is small) the op is
  // evaluated now and its results are constants. Invalid operands fail with the op's message.
  std::vector<Entry> emit(const std::string& name, const std::vector<Entry>& operands,
                          AttrDict attrs = {});
  Entry emit1(const std::string& name, const std::vector<Entry>& operands, AttrDict attrs = {}) {
    return emit(name, operands, std::move(attrs))[0];
  }
  Entry in(size_t i); // input i as an Entry (constant kept when known)
  Entry constant(Tensor t) {
    return Entry{nullptr, std::make_shared<Tensor>(std::move(t)), nullptr};
  }
  Entry scalar(DType t, double v);
  Value* materialize(Entry& e);
  TensorType typeOf(const Entry& e) const;

private:
  const onnx::AttributeProto* findAttr(const std::string& name) const;
  std::string nodeDesc() const;

  Function& f_;
  Builder b_;
  std::string file_;
  int64_t opset_;
  const onnx::NodeProto* node_ = nullptr;
  mutable std::set<std::string> readAttrs_;
  std::unordered_map<std::string, Entry> values_;
  bool training_ = false;
  Value* rng_ = nullptr;
  int64_t streams_ = 0;
};

using ImportFn = std::function<std::vector<Entry>(Context&)>;
using OpTable = std::map<std::string, ImportFn>;

void registerMathImports(OpTable& t);
void registerShapeImports(OpTable& t);
void registerNNImports(OpTable& t);
void registerReduceImports(OpTable& t);
void registerElementwiseImports(OpTable& t);
void registerIndexImports(OpTable& t);
void registerGatherImports(OpTable& t);
void registerEinsumImports(OpTable& t);
void registerNormImports(OpTable& t);
void registerConvImports(OpTable& t);
void registerRecurrentImports(OpTable& t);
void registerGridSampleImports(OpTable& t);
void registerSignalImports(OpTable& t);

// Whether a BatchNormalization node is in training mode (OnnxOpsNorm.cpp): its running
// statistics are then state in a training import.
bool batchNormTrains(const onnx::NodeProto& node, int64_t opset);

// Decompositions shared between op families.
Entry roundHalfToEven(Context& c, Entry x); // OnnxOpsElementwise.cpp
// Pads dim `axis` with `before` and `after` elements of `value`; negative amounts crop.
Entry padAxis(Context& c, Entry x, int64_t axis, int64_t before, int64_t after,
              double value = 0); // OnnxOpsIndex.cpp

} // namespace shardc::onnximport
