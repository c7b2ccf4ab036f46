#include "shardc/sharding/Plan.h"

#include "shardc/ir/IR.h"

namespace shardc {

namespace {

// "matmul %y (operand 1)".
std::string describe(const Op& op, size_t tensor) {
  std::string who = op.numResults() && !op.result(0)->name().empty()
                        ? "%" + op.result(0)->name()
                        : "at line " + std::to_string(op.loc().line);
  std::string from = tensor < op.numOperands()
                         ? "operand " + std::to_string(tensor)
                         : "result " + std::to_string(tensor - op.numOperands());
  return op.name() + " " + who + " (" + from + ")";
}

} // namespace

std::string ShardingOrigin::str() const {
  switch (kind) {
  case OriginKind::User:
    return "user";
  case OriginKind::Tactic:
    return "tactic " + detail;
  case OriginKind::Propagated:
    return "propagated from " + (op ? describe(*op, tensor) : detail);
  case OriginKind::Default:
    break;
  }
  return "default";
}

const ValueSharding* ShardingPlan::find(const Value* v) const {
  auto it = values_.find(v);
  return it == values_.end() ? nullptr : &it->second;
}

TensorSharding ShardingPlan::shardingOf(const Value* v) const {
  const ValueSharding* s = find(v);
  return s ? s->sharding : TensorSharding::replicated(v->type().rank());
}

void ShardingPlan::set(const Value* v, TensorSharding s, ShardingOrigin origin) {
  values_[v] = {std::move(s), std::move(origin)};
}

const ValueSharding* ShardingPlan::findResult(const Function& f, size_t index) const {
  auto it = results_.find({&f, index});
  return it == results_.end() ? nullptr : &it->second;
}

void ShardingPlan::setResult(const Function& f, size_t index, TensorSharding s,
                             ShardingOrigin origin) {
  results_[{&f, index}] = {std::move(s), std::move(origin)};
}

} // namespace shardc
