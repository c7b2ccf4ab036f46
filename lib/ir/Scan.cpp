#include "shardc/ir/Scan.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"

namespace shardc {

bool isScan(const Op& op) {
  return op.name() == opname::kScan;
}

int64_t runsOf(const Op& call) {
  return isScan(call) ? call.attrs().getInt("length") : 1;
}

TensorType stackedType(int64_t length, TensorType t) {
  t.shape.insert(t.shape.begin(), length);
  return t;
}

ScanLayout ScanLayout::of(const Op& scan) {
  ScanLayout l;
  const AttrDict& a = scan.attrs();
  l.length = a.getInt("length");
  l.carried = static_cast<size_t>(a.getInt("carried"));
  l.shared = static_cast<size_t>(a.getInt("shared"));
  l.reverse = a.getBool("reverse");
  l.saveCarries = a.getBool("save_carries");
  size_t out = scan.numResults();
  size_t saved = l.saveCarries ? l.carried : 0;
  l.ys = out >= l.carried + saved ? out - l.carried - saved : 0;
  return l;
}

} // namespace shardc
