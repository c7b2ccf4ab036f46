#include "shardc/cost/Memory.h"

#include "shardc/ir/IR.h"

#include <algorithm>
#include <unordered_map>

namespace shardc {

int64_t peakActivationBytes(const Function& f) {
  std::unordered_map<const Value*, size_t> lastUse; // op index of the last use
  size_t index = 0;
  for (const auto& op : f.ops()) {
    for (Value* v : op->operands())
      lastUse[v] = index;
    ++index;
  }
  for (const FuncResult& r : f.results())
    lastUse[r.value] = index; // alive to the end
  std::vector<int64_t> freedAfter(index + 1, 0);
  int64_t live = 0, peak = 0;
  index = 0;
  for (const auto& op : f.ops()) {
    for (size_t r = 0; r < op->numResults(); ++r) {
      const Value* v = op->result(r);
      live += v->type().bytes();
      auto it = lastUse.find(v);
      freedAfter[it == lastUse.end() ? index : it->second] += v->type().bytes();
    }
    peak = std::max(peak, live);
    live -= freedAfter[index];
    ++index;
  }
  return peak;
}

} // namespace shardc
