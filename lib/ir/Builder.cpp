#include "shardc/ir/Builder.h"

#include "shardc/ops/OpRegistry.h"

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

Op* Builder::create(std::string_view opName, std::vector<Value*> operands, AttrDict attrs) {
  std::string error;
  Op* op = tryCreate(opName, std::move(operands), std::move(attrs), error);
  if (!op) {
    std::fprintf(stderr, "internal error: Builder::create: %s\n", error.c_str());
    std::abort();
  }
  return op;
}

} // namespace shardc
