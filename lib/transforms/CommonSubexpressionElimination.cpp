#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/transforms/Passes.h"

#include <functional>
#include <unordered_map>

namespace shardc {
namespace {

size_t mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

// Cheap hash of an op's identity; tensors contribute their type and a sample of bytes.
size_t hashOp(const Op& op) {
  size_t h = std::hash<const void*>()(&op.def());
  for (Value* v : op.operands())
    h = mix(h, std::hash<const void*>()(v));
  for (const auto& [name, attr] : op.attrs().entries()) {
    h = mix(h, std::hash<std::string>()(name));
    if (attr.kind() == AttrKind::Tensor) {
      const Tensor& t = attr.asTensor();
      h = mix(h, std::hash<std::string>()(t.type().str()));
      size_t step = t.byteSize() / 64 + 1;
      for (size_t i = 0; i < t.byteSize(); i += step)
        h = mix(h, t.data()[i]);
    }
  }
  return h;
}

bool sameOp(const Op& a, const Op& b) {
  if (&a.def() != &b.def() || a.operands() != b.operands() || !(a.attrs() == b.attrs()) ||
      a.numResults() != b.numResults())
    return false;
  for (size_t i = 0; i < a.numResults(); ++i)
    if (a.result(i)->type() != b.result(i)->type()) return false;
  return true;
}

} // namespace

bool eliminateCommonSubexpressions(Function& f) {
  bool changed = false;
  std::unordered_multimap<size_t, Op*> seen;
  for (auto it = f.ops().begin(); it != f.ops().end();) {
    Op* op = (it++)->get();
    size_t h = hashOp(*op);
    Op* match = nullptr;
    auto [b, e] = seen.equal_range(h);
    for (auto s = b; s != e && !match; ++s)
      if (sameOp(*s->second, *op)) match = s->second;
    if (!match) {
      seen.emplace(h, op);
      continue;
    }
    for (size_t i = 0; i < op->numResults(); ++i)
      op->result(i)->replaceAllUsesWith(match->result(i));
    f.eraseOp(op);
    changed = true;
  }
  return changed;
}

} // namespace shardc
