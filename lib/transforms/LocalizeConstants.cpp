#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/transforms/Passes.h"

#include <cstring>
#include <memory>

namespace shardc {
namespace {

// The piece of `whole` that shard_slice along `dim` gives every device, when all devices get
// the same one (an all-equal constant, or one repeating along `dim`); null otherwise.
std::shared_ptr<Tensor> commonPiece(const Tensor& whole, int64_t dim, const TensorType& local) {
  const Shape& shape = whole.shape();
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size()) || local.rank() != whole.type().rank())
    return nullptr;
  size_t es = dtypeSize(whole.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i)
    outer *= shape[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(dim) + 1; i < shape.size(); ++i)
    inner *= shape[i];
  int64_t rows = shape[static_cast<size_t>(dim)], piece = local.shape[static_cast<size_t>(dim)];
  if (piece <= 0 || rows % piece) return nullptr;
  size_t pieceBytes = static_cast<size_t>(piece * inner) * es;
  size_t rowBytes = static_cast<size_t>(rows * inner) * es;
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* first = whole.data() + static_cast<size_t>(o) * rowBytes;
    for (int64_t k = 1; k < rows / piece; ++k)
      if (std::memcmp(first, first + static_cast<size_t>(k) * pieceBytes, pieceBytes) != 0)
        return nullptr;
  }
  auto out = std::make_shared<Tensor>(local);
  for (int64_t o = 0; o < outer; ++o)
    if (pieceBytes)
      std::memcpy(out->data() + static_cast<size_t>(o) * pieceBytes,
                  whole.data() + static_cast<size_t>(o) * rowBytes, pieceBytes);
  return out;
}

} // namespace

bool localizeConstants(Function& f) {
  bool changed = false;
  std::vector<Op*> slices;
  for (const auto& op : f.ops())
    if (op->name() == opname::kShardSlice) slices.push_back(op.get());
  for (Op* op : slices) {
    Op* src = op->operand(0)->definingOp();
    if (!src) continue;
    const TensorType& local = op->result(0)->type();
    Builder b(f);
    b.setInsertionPoint(op);
    b.setLoc(op->loc());
    Value* made = nullptr;
    if (src->name() == opname::kIota && src->attrs().getInt("axis") != op->attrs().getInt("dim")) {
      // Every piece along another axis than the iota's is the same iota.
      made = b.value("iota", {},
                     {{"shape", local.shape},
                      {"axis", src->attrs().getInt("axis")},
                      {"dtype", src->attrs().getType("dtype")}});
    } else if (src->name() == opname::kConstant) {
      if (auto piece =
              commonPiece(src->attrs().getTensor("value"), op->attrs().getInt("dim"), local))
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
