#include "shardc/ir/Builder.h"

#include "shardc/ir/Scan.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <cstdio>
#include <cstdlib>

namespace shardc {

Op* Builder::tryCreate(std::string_view opName, std::vector<Value*> operands, AttrDict attrs,
                       std::string& error) {
  const OpDef* def = OpRegistry::get().lookup(opName);
  if (!def) {
    error = "unknown op '" + std::string(opName) + "'";
    return nullptr;
  }
  std::vector<TensorType> operandTypes, resultTypes;
  for (Value* v : operands)
    operandTypes.push_back(v->type());
  std::string err = checkOp(*def, operandTypes, attrs, resultTypes);
  if (!err.empty()) {
    error = "'" + def->name + "' op " + err;
    return nullptr;
  }
  return f_.insertOp(pos_, def, std::move(operands), std::move(resultTypes), std::move(attrs),
                     loc_);
}

Op* Builder::call(const Function& callee, std::vector<Value*> operands) {
  std::vector<TensorType> types;
  for (const FuncResult& r : callee.results())
    types.push_back(r.value->type());
  AttrDict attrs;
  attrs.set("callee", callee.name());
  return f_.insertOp(pos_, OpRegistry::get().lookup("call"), std::move(operands), std::move(types),
                     std::move(attrs), loc_);
}

Op* Builder::scan(const Function& callee, std::vector<Value*> operands, int64_t length,
                  size_t carried, size_t shared, bool reverse, bool saveCarries) {
  std::vector<TensorType> types;
  for (size_t r = 0; r < callee.results().size(); ++r)
    types.push_back(r < carried ? callee.results()[r].value->type()
                                : stackedType(length, callee.results()[r].value->type()));
  for (size_t c = 0; saveCarries && c < carried; ++c)
    types.push_back(stackedType(length, callee.argument(c)->type()));
  AttrDict attrs;
  attrs.set("callee", callee.name());
  attrs.set("length", length);
  attrs.set("carried", static_cast<int64_t>(carried));
  attrs.set("shared", static_cast<int64_t>(shared));
  attrs.set("reverse", reverse);
  attrs.set("save_carries", saveCarries);
  return f_.insertOp(pos_, OpRegistry::get().lookup("scan"), std::move(operands), std::move(types),
                     std::move(attrs), loc_);
}

Op* Builder::clone(const Op& op, std::unordered_map<const Value*, Value*>& map) {
  std::vector<Value*> operands;
  std::vector<TensorType> types;
  for (Value* v : op.operands())
    operands.push_back(map.at(v));
  for (size_t r = 0; r < op.numResults(); ++r)
    types.push_back(op.result(r)->type());
  Op* copy =
      f_.insertOp(pos_, &op.def(), std::move(operands), std::move(types), op.attrs(), op.loc());
  for (size_t r = 0; r < op.numResults(); ++r) {
    copy->result(r)->setName(op.result(r)->name());
    map[op.result(r)] = copy->result(r);
  }
  return copy;
}

void Builder::cloneOps(const Function& from, std::unordered_map<const Value*, Value*>& map) {
  for (const auto& op : from.ops())
    clone(*op, map);
}

Op* Builder::create(std::string_view opName, std::vector<Value*> operands, AttrDict attrs) {
  std::string error;
  Op* op = tryCreate(opName, std::move(operands), std::move(attrs), error);
  if (!op) throw InternalError("Builder::create: " + error);
  return op;
}

std::unique_ptr<Module> cloneModule(const Module& m) {
  auto copy = std::make_unique<Module>();
  for (const auto& from : m.functions()) {
    Function* to = copy->addFunction(from->name(), from->loc());
    std::unordered_map<const Value*, Value*> map;
    for (size_t i = 0; i < from->numArguments(); ++i) {
      const Value* a = from->argument(i);
      map[a] = to->addArgument(a->name(), a->type(), a->argKind());
    }
    Builder(*to).cloneOps(*from, map);
    for (const FuncResult& r : from->results())
      to->addResult(r.name, map.at(r.value), r.tiedArg);
  }
  return copy;
}

} // namespace shardc
