// The op registry: one entry per op holding everything shardc knows about it.
// Adding an op means adding one OpDef (see lib/ops/*.cpp) plus its tests.
#pragma once

#include "shardc/ir/Attribute.h"
#include "shardc/ir/Tensor.h"
#include "shardc/ops/ShardingRule.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace shardc {
class Builder;
class Communicator;
class Op;
class Value;

struct AttrSpec {
  std::string name;
  AttrKind kind;
  std::optional<Attr> defaultValue; // nullopt: the attribute is required
};

// What shape rules and cost formulas see: operand types and attributes. The op itself
// need not exist yet, so the builder, parser and verifier all share one rule.
struct OpSig {
  const std::vector<TensorType>& operands;
  const AttrDict& attrs;
};

// Returns "" on success (filling `results`), or a message saying what is wrong.
using ShapeFn = std::function<std::string(const OpSig&, std::vector<TensorType>& results)>;
using CostFn = std::function<double(const OpSig&, const std::vector<TensorType>& results)>;

struct KernelArgs {
  const std::vector<const Tensor*>& inputs;
  const AttrDict& attrs;
  const std::vector<TensorType>& resultTypes;
  Communicator* comm = nullptr; // the device running a per-device program; null elsewhere
};
// Reference CPU kernel; throws shardc::Error for data-dependent failures.
using KernelFn = std::function<std::vector<Tensor>(const KernelArgs&)>;

struct GradArgs {
  Builder& b; // inserts after the forward program
  const Op& op;
  // Gradient of the loss with respect to each result; nullptr where none flows.
  const std::vector<Value*>& resultGrads;
};
// Reverse-mode rule: one gradient per operand, nullptr where none flows (an index, a
// condition, a piecewise-constant op).
using GradFn = std::function<std::vector<Value*>(const GradArgs&)>;
using ShardingRuleFn =
    std::function<ShardingRule(const OpSig&, const std::vector<TensorType>& results)>;

// Elementwise ops: the function of one element in the widest type of the dtype's family
// (double for floats, int64 for integers and i1). The reference kernel and the compiled
// runtime's kernels for dtypes other than f32 both apply it.
struct ElementFns {
  double (*unaryF)(double) = nullptr;
  int64_t (*unaryI)(int64_t) = nullptr;
  double (*binaryF)(double, double) = nullptr;
  int64_t (*binaryI)(int64_t, int64_t) = nullptr;
};

struct OpDef {
  std::string name;
  std::string summary;
  int minOperands = 1;
  int maxOperands = 1; // -1: any number
  std::vector<AttrSpec> attrs;
  ShapeFn inferTypes;
  CostFn flops; // floating-point operations; default 0
  CostFn bytes; // bytes moved; default: all operands read once, all results written once
  KernelFn kernel;
  GradFn gradient;             // empty: not differentiable (autodiff rejects it on a gradient path)
  ShardingRuleFn shardingRule; // factor-based rule; every op has one
  ElementFns element;          // unary and binary elementwise ops
  // A collective: its kernel talks to the other devices (KernelArgs::comm), so it is never
  // constant-folded.
  bool communicates = false;
  // Runs function `callee` of the op's module (a hypersection's body): its result types are
  // the callee's, checked by the verifier against the module, not by a shape rule; the
  // interpreter and the compiled runtime run the callee.
  bool callsFunction = false;

  double flopCount(const OpSig& sig, const std::vector<TensorType>& results) const;
  double byteCount(const OpSig& sig, const std::vector<TensorType>& results) const;
};

class OpRegistry {
public:
  static const OpRegistry& get();
  const OpDef* lookup(std::string_view name) const;
  const std::vector<std::unique_ptr<OpDef>>& all() const { return defs_; }
  void add(OpDef def);

private:
  std::vector<std::unique_ptr<OpDef>> defs_;
};

// Checks an op's arity and attributes against its schema, fills defaulted attributes,
// widens integer literals where a float is expected, and runs the shape rule.
// Returns "" on success, else a message naming what is wrong.
std::string checkOp(const OpDef& def, const std::vector<TensorType>& operands, AttrDict& attrs,
                    std::vector<TensorType>& results);

} // namespace shardc
