// The shardc IR: a module of functions; a function is a straight-line list of ops in SSA
// form over tensor values. Every value knows its uses, so use-def walks are cheap.
#pragma once

#include "shardc/ir/Attribute.h"
#include "shardc/ir/Types.h"

#include <list>
#include <memory>
#include <string>
#include <vector>

namespace shardc {

struct OpDef;
class Op;
class Function;
class Module;

// A position in the source text; line 0 means "no location" (built in memory).
struct Loc {
  uint32_t line = 0;
  uint32_t col = 0;
};

// What a function argument is, so that partitioning can treat them differently.
enum class ArgKind { Input, Param, OptState };
std::string_view argKindName(ArgKind k);

// A use of a value: operand `index` of `user`, or (user == nullptr) function result `index`.
struct Use {
  Op* user;
  size_t index;
  bool operator==(const Use&) const = default;
};

class Value {
public:
  const TensorType& type() const { return type_; }
  void setType(TensorType t) { type_ = std::move(t); }
  // Names come from the source (text IR, ONNX); empty means "print a number".
  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  // The op that defines this value, or nullptr for a function argument.
  Op* definingOp() const { return def_; }
  bool isArgument() const { return def_ == nullptr; }
  // Result index within the defining op, or argument index.
  size_t index() const { return index_; }
  ArgKind argKind() const { return argKind_; }

  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }
  void replaceAllUsesWith(Value* other);

private:
  friend class Op;
  friend class Function;
  Value(TensorType t, Op* def, size_t index) : type_(std::move(t)), def_(def), index_(index) {}
  void addUse(Use u) { uses_.push_back(u); }
  void removeUse(Use u);

  TensorType type_;
  std::string name_;
  Op* def_;
  size_t index_;
  ArgKind argKind_ = ArgKind::Input;
  Function* func_ = nullptr; // set for arguments
  std::vector<Use> uses_;
};

class Op {
public:
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;
  ~Op();

  const OpDef& def() const { return *def_; }
  const std::string& name() const;
  Loc loc() const { return loc_; }
  Function* parent() const { return parent_; }

  size_t numOperands() const { return operands_.size(); }
  Value* operand(size_t i) const { return operands_[i]; }
  const std::vector<Value*>& operands() const { return operands_; }
  void setOperand(size_t i, Value* v);

  size_t numResults() const { return results_.size(); }
  Value* result(size_t i = 0) const { return results_[i].get(); }
  bool hasUses() const;

  AttrDict& attrs() { return attrs_; }
  const AttrDict& attrs() const { return attrs_; }

private:
  friend class Function;
  Op(const OpDef* def, std::vector<Value*> operands, std::vector<TensorType> resultTypes,
     AttrDict attrs, Loc loc);
  void dropOperands();

  const OpDef* def_;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  AttrDict attrs_;
  Loc loc_;
  Function* parent_ = nullptr;
  std::list<std::unique_ptr<Op>>::iterator self_;
};

struct FuncResult {
  std::string name;
  Value* value;
  // Index of the argument this result replaces after each step (a parameter or optimizer
  // state updated in place), or -1. Printed as `name: type tied %arg`.
  int64_t tiedArg = -1;
};

class Function {
public:
  using OpList = std::list<std::unique_ptr<Op>>;
  explicit Function(std::string name, Loc loc = {}) : name_(std::move(name)), loc_(loc) {}
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;
  ~Function();

  const std::string& name() const { return name_; }
  Loc loc() const { return loc_; }
  // The module holding this function (null for one built alone); `call` ops look their
  // callee up in it.
  Module* module() const { return module_; }

  Value* addArgument(std::string name, TensorType type, ArgKind kind);
  size_t numArguments() const { return args_.size(); }
  Value* argument(size_t i) const { return args_[i].get(); }
  Value* findArgument(std::string_view name) const;

  // Results are the values returned, each with a name.
  void addResult(std::string name, Value* v, int64_t tiedArg = -1);
  void clearResults();
  void setResultValue(size_t i, Value* v);
  const std::vector<FuncResult>& results() const { return results_; }

  OpList& ops() { return ops_; }
  const OpList& ops() const { return ops_; }
  // Creates an op (types already inferred) and inserts it before `pos`.
  Op* insertOp(OpList::iterator pos, const OpDef* def, std::vector<Value*> operands,
               std::vector<TensorType> resultTypes, AttrDict attrs, Loc loc);
  OpList::iterator position(Op* op) const { return op->self_; }
  // Removes an op whose results have no uses.
  void eraseOp(Op* op);

private:
  friend class Value;
  friend class Module;
  std::string name_;
  Loc loc_;
  Module* module_ = nullptr;
  std::vector<std::unique_ptr<Value>> args_;
  std::vector<FuncResult> results_;
  OpList ops_;
};

class Module {
public:
  std::string filename; // for diagnostics; "<memory>" when built in code
  Function* addFunction(std::string name, Loc loc = {});
  Function* findFunction(std::string_view name) const;
  // Removes a function no `call` names any more.
  void eraseFunction(const Function* f);
  const std::vector<std::unique_ptr<Function>>& functions() const { return funcs_; }
  // The function a `call` op runs (its `callee` attribute), or null.
  const Function* callee(const Op& call) const;

private:
  std::vector<std::unique_ptr<Function>> funcs_;
};

} // namespace shardc
