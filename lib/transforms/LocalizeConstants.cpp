#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/transforms/Passes.h"

#include <cstring>
#include <memory>

namespace shardc {
namespace {

// Whether every element of `t` equals its first.
bool isSplat(const Tensor& t) {
  size_t es = dtypeSize(t.dtype());
  for (int64_t i = 1; i < t.numel(); ++i)
    if (std::memcmp(t.data(), t.data() + static_cast<size_t>(i) * es, es) != 0) return false;
  return t.numel() > 0;
}

} // namespace

bool localizeConstants(Function& f) {
  bool changed = false;
  std::vector<Op*> slices;
  for (const auto& op : f.ops())
    if (op->name() == "shard_slice") slices.push_back(op.get());
  for (Op* op : slices) {
    Op* src = op->operand(0)->definingOp();
    if (!src) continue;
    const TensorType& local = op->result(0)->type();
    Builder b(f);
    b.setInsertionPoint(op);
    b.setLoc(op->loc());
    Value* made = nullptr;
    if (src->name() == "iota" && src->attrs().getInt("axis") != op->attrs().getInt("dim")) {
      // Every piece along another axis than the iota's is the same iota.
      made = b.value("iota", {},
                     {{"shape", local.shape},
                      {"axis", src->attrs().getInt("axis")},
                      {"dtype", src->attrs().getType("dtype")}});
    } else if (src->name() == "constant" && isSplat(src->attrs().getTensor("value"))) {
      const Tensor& whole = src->attrs().getTensor("value");
      auto piece = std::make_shared<Tensor>(local);
      size_t es = dtypeSize(local.dtype);
      for (int64_t i = 0; i < local.numel(); ++i)
        std::memcpy(piece->data() + static_cast<size_t>(i) * es, whole.data(), es);
      made = b.value("constant", {}, {{"value", TensorRef(std::move(piece))}});
    }
    if (!made) continue;
    op->result(0)->replaceAllUsesWith(made);
    changed = true;
  }
  if (changed) eliminateDeadCode(f);
  return changed;
}

} // namespace shardc
