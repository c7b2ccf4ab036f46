// Builds ops into a function; result types come from each op's shape rule.
#pragma once

#include "shardc/ir/IR.h"

#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>

namespace shardc {

class Builder {
public:
  explicit Builder(Function& f) : f_(f), pos_(f.ops().end()) {}

  void setInsertionPointToEnd() { pos_ = f_.ops().end(); }
  void setInsertionPoint(Op* before) { pos_ = f_.position(before); }
  void setInsertionPointAfter(Op* op) { pos_ = std::next(f_.position(op)); }
  void setLoc(Loc loc) { loc_ = loc; }
  Function& function() { return f_; }

  // Creates an op, filling default attributes and inferring result types. On invalid input
  // returns nullptr and sets `error` (for importers, whose input is the user's model).
  Op* tryCreate(std::string_view opName, std::vector<Value*> operands, AttrDict attrs,
                std::string& error);
  // As tryCreate, for callers that guarantee valid input: failure is a compiler bug.
  Op* create(std::string_view opName, std::vector<Value*> operands, AttrDict attrs = {});
  // A `call` of `callee` (a function of this function's module): its result types are the
  // callee's results'.
  Op* call(const Function& callee, std::vector<Value*> operands);
  // A `scan` of `callee` (layout in shardc/ir/Scan.h): result types from the callee's.
  Op* scan(const Function& callee, std::vector<Value*> operands, int64_t length, size_t carried,
           size_t shared, bool reverse, bool saveCarries);
  // Copies `op` at the insertion point, its operands read through `map`, and adds its
  // results to `map`.
  Op* clone(const Op& op, std::unordered_map<const Value*, Value*>& map);
  // Copies every op of `from` at the insertion point (see clone); `map` must hold from's
  // arguments.
  void cloneOps(const Function& from, std::unordered_map<const Value*, Value*>& map);
  // Single-result shorthand.
  Value* value(std::string_view opName, std::vector<Value*> operands, AttrDict attrs = {}) {
    return create(opName, std::move(operands), std::move(attrs))->result(0);
  }

private:
  Function& f_;
  Function::OpList::iterator pos_;
  Loc loc_;
};

// A copy of every function of `m`, op for op (for trying a rewrite on the side).
std::unique_ptr<Module> cloneModule(const Module& m);

} // namespace shardc
