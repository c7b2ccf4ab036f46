#include "shardc/cost/Memory.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/ResidentConstants.h"

#include <algorithm>
#include <unordered_map>

namespace shardc {

int64_t peakActivationBytes(const Function& f, const std::unordered_set<const Value*>* onChip) {
  std::unordered_map<const Value*, size_t> lastUse; // op index of the last use
  size_t index = 0;
  for (const auto& op : f.ops()) {
    for (Value* v : op->operands())
      lastUse[v] = index;
    ++index;
  }
  std::unordered_map<const Value*, size_t> defined;
  index = 0;
  for (const auto& op : f.ops()) {
    for (size_t r = 0; r < op->numResults(); ++r)
      defined[op->result(r)] = index;
    ++index;
  }
  // An updated parameter or optimizer state is written into its argument's buffer when the
  // argument is not read after the op that makes it (as the compiled runtime places it).
  std::unordered_map<const Value*, int> timesTied;
  for (const FuncResult& r : f.results()) {
    lastUse[r.value] = index; // alive to the end
    timesTied[r.value] += r.tiedArg >= 0;
  }
  std::unordered_set<const Value*> inPlace;
  for (const FuncResult& r : f.results()) {
    if (r.tiedArg < 0 || timesTied[r.value] != 1 || !defined.count(r.value)) continue;
    const Value* arg = f.argument(static_cast<size_t>(r.tiedArg));
    auto use = lastUse.find(arg);
    if (arg->type() == r.value->type() &&
        (use == lastUse.end() || use->second <= defined.at(r.value)))
      inPlace.insert(r.value);
  }
  // Constants and what is folded from them stay for the whole step.
  std::unordered_set<const Value*> resident = residentConstants(f);
  int64_t residentBytes = 0;
  for (const Value* v : resident)
    if (!onChip || !onChip->count(v)) residentBytes += v->type().bytes();
  std::vector<int64_t> freedAfter(index + 1, 0);
  int64_t live = 0, peak = 0;
  index = 0;
  for (const auto& op : f.ops()) {
    for (size_t r = 0; r < op->numResults(); ++r) {
      const Value* v = op->result(r);
      if ((onChip && onChip->count(v)) || inPlace.count(v) || resident.count(v)) continue;
      live += v->type().bytes();
      auto it = lastUse.find(v);
      freedAfter[it == lastUse.end() ? index : it->second] += v->type().bytes();
    }
    peak = std::max(peak, live);
    live -= freedAfter[index];
    ++index;
  }
  return peak + residentBytes;
}

ForwardPass forwardPass(const Function& f) {
  ForwardPass fw;
  if (f.results().empty()) return fw;
  std::unordered_set<const Op*> needed;
  std::vector<const Op*> stack;
  if (const Op* loss = f.results()[0].value->definingOp()) stack.push_back(loss);
  while (!stack.empty()) {
    const Op* op = stack.back();
    stack.pop_back();
    if (!needed.insert(op).second) continue;
    for (const Value* v : op->operands())
      if (!v->isArgument()) stack.push_back(v->definingOp());
  }
  for (const auto& op : f.ops()) {
    if (!needed.count(op.get())) continue;
    fw.index[op.get()] = fw.ops.size();
    fw.ops.push_back(op.get());
    bool activation = false;
    for (const Value* v : op->operands())
      activation = activation ||
                   (v->isArgument() ? v->argKind() == ArgKind::Input : fw.activations.count(v) > 0);
    if (activation)
      for (size_t r = 0; r < op->numResults(); ++r)
        fw.activations.insert(op->result(r));
  }
  return fw;
}

int64_t keptActivationBytes(const Function& f) {
  ForwardPass fw = forwardPass(f);
  std::unordered_map<const Op*, size_t> position;
  for (const auto& op : f.ops())
    position[op.get()] = position.size();
  // Each kept value adds its bytes where it is made and frees them after its last reader.
  std::vector<int64_t> change(position.size() + 1, 0);
  for (const Value* v : fw.activations) {
    size_t last = 0;
    bool kept = false;
    for (const Use& u : v->uses())
      if (u.user) {
        kept = kept || !fw.contains(u.user);
        last = std::max(last, position.at(u.user));
      }
    if (!kept) continue;
    change[position.at(v->definingOp())] += v->type().bytes();
    change[last + 1] -= v->type().bytes();
  }
  int64_t live = 0, peak = 0;
  for (int64_t c : change)
    peak = std::max(peak, live += c);
  return peak;
}

} // namespace shardc
