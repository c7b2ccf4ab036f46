#include "shardc/ir/IR.h"

#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <algorithm>

namespace shardc {

std::string_view argKindName(ArgKind k) {
  switch (k) {
  case ArgKind::Input:
    return "input";
  case ArgKind::Param:
    return "param";
  case ArgKind::OptState:
    return "opt_state";
  }
  return "?";
}

void Value::removeUse(Use u) {
  auto it = std::find(uses_.begin(), uses_.end(), u);
  SHARDC_CHECK(it != uses_.end(), "use list out of sync");
  uses_.erase(it);
}

void Value::replaceAllUsesWith(Value* other) {
  SHARDC_CHECK(other != this, "a value replaced by itself");
  std::vector<Use> uses = uses_;
  for (const Use& u : uses) {
    if (u.user) {
      u.user->setOperand(u.index, other);
    } else {
      Function* f = def_ ? def_->parent() : func_;
      f->setResultValue(u.index, other);
    }
  }
}

Op::Op(const OpDef* def, std::vector<Value*> operands, std::vector<TensorType> resultTypes,
       AttrDict attrs, Loc loc)
    : def_(def), operands_(std::move(operands)), attrs_(std::move(attrs)), loc_(loc) {
  for (size_t i = 0; i < operands_.size(); ++i)
    operands_[i]->addUse({this, i});
  for (size_t i = 0; i < resultTypes.size(); ++i)
    results_.push_back(std::unique_ptr<Value>(new Value(std::move(resultTypes[i]), this, i)));
}

Op::~Op() = default;

const std::string& Op::name() const {
  return def_->name;
}

void Op::setOperand(size_t i, Value* v) {
  operands_[i]->removeUse({this, i});
  operands_[i] = v;
  v->addUse({this, i});
}

bool Op::hasUses() const {
  return std::any_of(results_.begin(), results_.end(), [](auto& r) { return r->hasUses(); });
}

void Op::dropOperands() {
  for (size_t i = 0; i < operands_.size(); ++i)
    operands_[i]->removeUse({this, i});
  operands_.clear();
}

Function::~Function() {
  // Drop uses first so that destruction order does not matter.
  for (auto& op : ops_)
    op->operands_.clear();
}

Value* Function::addArgument(std::string name, TensorType type, ArgKind kind) {
  auto v = std::unique_ptr<Value>(new Value(std::move(type), nullptr, args_.size()));
  v->setName(std::move(name));
  v->argKind_ = kind;
  v->func_ = this;
  args_.push_back(std::move(v));
  return args_.back().get();
}

Value* Function::findArgument(std::string_view name) const {
  for (auto& a : args_)
    if (a->name() == name) return a.get();
  return nullptr;
}

void Function::addResult(std::string name, Value* v, int64_t tiedArg) {
  v->addUse({nullptr, results_.size()});
  results_.push_back({std::move(name), v, tiedArg});
}

void Function::clearResults() {
  for (size_t i = 0; i < results_.size(); ++i)
    results_[i].value->removeUse({nullptr, i});
  results_.clear();
}

void Function::setResultValue(size_t i, Value* v) {
  results_[i].value->removeUse({nullptr, i});
  results_[i].value = v;
  v->addUse({nullptr, i});
}

Op* Function::insertOp(OpList::iterator pos, const OpDef* def, std::vector<Value*> operands,
                       std::vector<TensorType> resultTypes, AttrDict attrs, Loc loc) {
  auto op = std::unique_ptr<Op>(
      new Op(def, std::move(operands), std::move(resultTypes), std::move(attrs), loc));
  Op* raw = op.get();
  raw->parent_ = this;
  raw->self_ = ops_.insert(pos, std::move(op));
  return raw;
}

void Function::eraseOp(Op* op) {
  SHARDC_CHECK(!op->hasUses(), "erasing an op whose results are still used");
  op->dropOperands();
  ops_.erase(op->self_);
}

Function* Module::addFunction(std::string name, Loc loc) {
  funcs_.push_back(std::make_unique<Function>(std::move(name), loc));
  funcs_.back()->module_ = this;
  return funcs_.back().get();
}

const Function* Module::callee(const Op& call) const {
  const Attr* a = call.attrs().find("callee");
  return a && a->kind() == AttrKind::String ? findFunction(a->asString()) : nullptr;
}

void Module::eraseFunction(const Function* f) {
  std::erase_if(funcs_, [&](const std::unique_ptr<Function>& g) { return g.get() == f; });
}

Function* Module::findFunction(std::string_view name) const {
  for (auto& f : funcs_)
    if (f->name() == name) return f.get();
  return nullptr;
}

} // namespace shardc
