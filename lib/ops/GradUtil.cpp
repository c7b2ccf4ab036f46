#include "GradUtil.h"

#include "shardc/ir/IR.h"

namespace shardc::ops {

Value* scalar(Builder& b, DType t, double v) {
  Tensor s(TensorType{t, {}});
  s.setDouble(0, v);
  return b.value("constant", {}, {{"value", TensorRef(std::make_shared<Tensor>(std::move(s)))}});
}

// A broadcast scalar, not a dense constant: an attention gradient's zeros would otherwise be
// gigabytes of IR to build, compare (CSE) and store.
Value* zeros(Builder& b, const TensorType& t) {
  Value* z = scalar(b, t.dtype, 0);
  return t.rank() == 0 ? z : b.value("broadcast", {z}, {{"shape", t.shape}});
}

Value* sumToShape(Builder& b, Value* g, const Shape& target) {
  const Shape& s = g->type().shape;
  if (s == target) return g;
  size_t lead = s.size() - target.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < s.size(); ++i)
    if (i < lead || (target[i - lead] == 1 && s[i] != 1)) axes.push_back(static_cast<int64_t>(i));
  Value* r = axes.empty() ? g : b.value("reduce_sum", {g}, {{"axes", axes}, {"keepdims", true}});
  return b.value("reshape", {r}, {{"shape", target}});
}

Value* broadcastBack(Builder& b, Value* v, const std::vector<int64_t>& axes, const Shape& shape) {
  Shape kept = shape;
  for (int64_t a : axes)
    kept[static_cast<size_t>(a)] = 1;
  Value* r = v->type().shape == kept ? v : b.value("reshape", {v}, {{"shape", kept}});
  return r->type().shape == shape ? r : b.value("broadcast", {r}, {{"shape", shape}});
}

Value* gradOrZero(const GradArgs& a, size_t i) {
  return a.resultGrads[i] ? a.resultGrads[i] : zeros(a.b, a.op.result(i)->type());
}

} // namespace shardc::ops
