#include "shardc/train/Recompute.h"

#include "shardc/cost/CostModel.h"
#include "shardc/cost/Memory.h"
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace shardc {
namespace {

// A region larger than this is no attention core (no P V matmul closed it).
constexpr size_t kMaxCoreOps = 64;

struct Cut {
  size_t at;    // position in the forward pass of the first op after the cut
  Value* value; // the one activation crossing it
};

// Per forward op, its round: micro-batches (gradient accumulation) run the forward pass once
// per round, each followed by its backward pass (ops outside the forward pass that read data:
// an activation, or what such ops made).
std::vector<size_t> roundsOf(const Function& f, const ForwardPass& fw) {
  std::vector<size_t> rounds;
  std::unordered_set<const Value*> backward;
  size_t round = 0;
  bool afterBackward = false;
  for (const auto& op : f.ops()) {
    if (fw.contains(op.get())) {
      if (afterBackward) ++round;
      rounds.push_back(round);
      afterBackward = false;
      continue;
    }
    bool data = false;
    for (const Value* v : op->operands())
      data = data || fw.isActivation(v) || backward.count(v);
    if (!data) continue;
    for (size_t r = 0; r < op->numResults(); ++r)
      backward.insert(op->result(r));
    afterBackward = true;
  }
  return rounds;
}

// Where exactly one activation flows from the forward ops before to those after, within a
// round (a micro-batch's loss and outputs, read where the micro-batches are summed and
// joined, do not count).
std::vector<Cut> singleValueCuts(const ForwardPass& fw, const std::vector<size_t>& rounds) {
  std::unordered_map<const Value*, size_t> lastRead;
  for (size_t i = 0; i < fw.ops.size(); ++i)
    for (const Value* v : fw.ops[i]->operands())
      if (fw.isActivation(v) && rounds[fw.index.at(v->definingOp())] == rounds[i]) lastRead[v] = i;
  std::vector<Cut> cuts;
  std::unordered_set<Value*> crossing;
  for (size_t i = 0; i + 1 < fw.ops.size(); ++i) {
    const Op* op = fw.ops[i];
    for (size_t r = 0; r < op->numResults(); ++r)
      if (auto it = lastRead.find(op->result(r)); it != lastRead.end() && it->second > i)
        crossing.insert(op->result(r));
    for (Value* v : op->operands())
      if (auto it = lastRead.find(v); it != lastRead.end() && it->second == i) crossing.erase(v);
    // One cut per value: static ops (casts of weights, masks) between its readers add none.
    if (crossing.size() == 1 && (cuts.empty() || cuts.back().value != *crossing.begin()))
      cuts.push_back({i + 1, *crossing.begin()});
  }
  return cuts;
}

// The cuts that start a repetition of the forward pass's repeated part (one per layer): the
// names of the ops that make activations between consecutive cuts, taken as one word per
// stretch, repeat with some period p over the layers (static ops are left out: CSE keeps a
// constant the layers share in the first of them); every p-th cut from the first repeated
// stretch on. Without a repetition, every cut.
std::vector<Cut> layerCuts(const ForwardPass& fw, const std::vector<Cut>& cuts) {
  if (cuts.size() < 3) return cuts;
  std::vector<std::string> words;
  for (size_t j = 0; j + 1 < cuts.size(); ++j) {
    std::string w;
    for (size_t i = cuts[j].at; i < cuts[j + 1].at; ++i)
      if (fw.ops[i]->numResults() && fw.isActivation(fw.ops[i]->result(0)))
        w += fw.ops[i]->name() + ",";
    words.push_back(std::move(w));
  }
  size_t n = words.size(), period = 0, best = 0;
  for (size_t p = 1; 2 * p <= n; ++p) {
    size_t matches = 0;
    for (size_t j = 0; j + p < n; ++j)
      matches += words[j] == words[j + p];
    if (matches > best) best = matches, period = p;
  }
  if (period == 0 || best < period) return cuts;
  size_t first = 0;
  while (words[first] != words[first + period])
    ++first;
  std::vector<Cut> kept;
  for (size_t j = first; j < cuts.size(); j += period)
    kept.push_back(cuts[j]);
  return kept;
}

bool activationMatmul(const ForwardPass& fw, const Op* op) {
  return op->name() == opname::kMatmul && fw.isActivation(op->operand(0)) &&
         fw.isActivation(op->operand(1));
}

bool layoutOp(const Op* op) {
  return op->name() == opname::kTranspose || op->name() == opname::kReshape;
}

// Adds to `region` the transposes and reshapes of activations it reads (Q^T, K^T): the
// backward pass keeps their operands, so recomputing them keeps nothing new.
void addLayoutInputs(const ForwardPass& fw, std::vector<Op*>& region) {
  std::unordered_set<const Op*> in(region.begin(), region.end());
  for (size_t i = 0; i < region.size(); ++i)
    for (const Value* v : region[i]->operands())
      if (fw.isActivation(v) && !in.count(v->definingOp()) && layoutOp(v->definingOp()) &&
          fw.contains(v->definingOp())) {
        in.insert(v->definingOp());
        region.push_back(v->definingOp());
      }
  std::sort(region.begin(), region.end(),
            [&](const Op* a, const Op* b) { return fw.index.at(a) < fw.index.at(b); });
}

// The attention cores: from each activation-by-activation matmul whose result outgrows both
// operands, the forward ops that read the region's values, up to the next such matmul, and
// the layout ops that feed them.
std::vector<std::vector<Op*>> attentionCores(const ForwardPass& fw) {
  std::vector<std::vector<Op*>> cores;
  for (size_t i = 0; i < fw.ops.size(); ++i) {
    Op* seed = fw.ops[i];
    if (!activationMatmul(fw, seed)) continue;
    int64_t n = seed->result(0)->type().numel();
    if (n <= seed->operand(0)->type().numel() || n <= seed->operand(1)->type().numel()) continue;
    std::vector<Op*> region{seed};
    std::unordered_set<const Value*> values{seed->result(0)};
    for (size_t k = i + 1; k < fw.ops.size() && region.size() <= kMaxCoreOps; ++k) {
      Op* op = fw.ops[k];
      bool reads = std::any_of(op->operands().begin(), op->operands().end(),
                               [&](const Value* v) { return values.count(v) > 0; });
      if (!reads || activationMatmul(fw, op)) continue;
      region.push_back(op);
      for (size_t r = 0; r < op->numResults(); ++r)
        values.insert(op->result(r));
    }
    // The loss read the region, or no P V matmul closed it: not an attention core.
    bool open = region.size() > kMaxCoreOps ||
                std::find(region.begin(), region.end(), fw.ops.back()) != region.end();
    if (open) continue;
    addLayoutInputs(fw, region);
    cores.push_back(std::move(region));
  }
  return cores;
}

class Recomputer {
public:
  explicit Recomputer(Function& f) : f_(f), fw_(forwardPass(f)) {
    size_t i = 0;
    for (const auto& op : f.ops())
      position_[op.get()] = i++;
  }
  const ForwardPass& forward() const { return fw_; }

  // Recomputes the values of `region` (forward ops in program order) that backward ops read;
  // values outside the region (kept activations, `keep`, static values, arguments) are read
  // as they are.
  void recompute(const std::vector<Op*>& region, const std::unordered_set<const Value*>& keep,
                 RecomputeSummary& summary) {
    std::unordered_set<const Op*> inRegion(region.begin(), region.end());
    std::vector<Value*> read; // by the backward pass
    Op* first = nullptr;
    for (Op* op : region)
      for (size_t r = 0; r < op->numResults(); ++r) {
        Value* v = op->result(r);
        if (!fw_.isActivation(v) || keep.count(v)) continue;
        bool isRead = false;
        for (const Use& u : v->uses())
          if (Op* user = backwardOp(u)) {
            isRead = true;
            if (!first || position_.at(user) < position_.at(first)) first = user;
          }
        if (isRead) read.push_back(v);
      }
    if (read.empty()) return;
    // The region's ops those values need, through its activations.
    std::unordered_set<const Op*> needed;
    std::vector<const Op*> stack;
    for (Value* v : read)
      stack.push_back(v->definingOp());
    while (!stack.empty()) {
      const Op* op = stack.back();
      stack.pop_back();
      if (!needed.insert(op).second) continue;
      for (const Value* v : op->operands())
        if (!v->isArgument() && inRegion.count(v->definingOp()) && fw_.isActivation(v) &&
            !keep.count(v))
          stack.push_back(v->definingOp());
    }
    Builder b(f_);
    b.setInsertionPoint(first);
    std::unordered_map<const Value*, Value*> map;
    for (Op* op : region) {
      if (!needed.count(op)) continue;
      for (Value* v : op->operands())
        map.emplace(v, v);
      Op* copy = b.clone(*op, map);
      for (size_t r = 0; r < copy->numResults(); ++r)
        if (!op->result(r)->name().empty())
          copy->result(r)->setName(op->result(r)->name() + ".recomputed");
      ++summary.clonedOps;
    }
    for (Value* v : read) {
      std::vector<Use> uses = v->uses();
      for (const Use& u : uses)
        if (Op* user = backwardOp(u)) user->setOperand(u.index, map.at(v));
    }
    ++summary.regions;
  }

private:
  // The user of `u` when it is an op of the original program outside the forward pass.
  Op* backwardOp(const Use& u) const {
    if (!u.user || fw_.contains(u.user) || !position_.count(u.user)) return nullptr;
    return u.user;
  }

  Function& f_;
  ForwardPass fw_;
  std::unordered_map<const Op*, size_t> position_;
};

} // namespace

std::optional<Recompute> parseRecompute(const std::string& name) {
  if (name == "none") return Recompute::None;
  if (name == "selective") return Recompute::Selective;
  if (name == "full") return Recompute::Full;
  return std::nullopt;
}

const char* recomputeName(Recompute r) {
  switch (r) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "?";
}

std::string RecomputeSummary::str() const {
  return std::to_string(regions) + " regions, " + std::to_string(clonedOps) +
         " forward ops run again; activations kept for the backward pass " +
         formatBytes(static_cast<double>(keptBefore)) + " -> " +
         formatBytes(static_cast<double>(keptAfter));
}

RecomputeSummary recomputeActivations(Function& f, Recompute mode) {
  RecomputeSummary summary;
  summary.keptBefore = summary.keptAfter = keptActivationBytes(f);
  if (mode == Recompute::None) return summary;
  Recomputer rc(f);
  const ForwardPass& fw = rc.forward();
  if (mode == Recompute::Selective) {
    for (const std::vector<Op*>& core : attentionCores(fw))
      rc.recompute(core, {}, summary);
  } else {
    std::vector<size_t> rounds = roundsOf(f, fw);
    // The layers' period is found per round: micro-batches repeat the whole forward pass.
    std::vector<Cut> cuts, all = singleValueCuts(fw, rounds);
    for (auto from = all.begin(); from != all.end();) {
      auto to = std::find_if(from, all.end(),
                             [&](const Cut& c) { return rounds[c.at] != rounds[from->at]; });
      std::vector<Cut> layers = layerCuts(fw, std::vector<Cut>(from, to));
      cuts.insert(cuts.end(), layers.begin(), layers.end());
      from = to;
    }
    std::unordered_set<const Value*> checkpoints;
    std::set<size_t> bounds{0, fw.ops.size()}; // of the stretches: checkpoints, rounds
    for (const Cut& c : cuts) {
      checkpoints.insert(c.value);
      bounds.insert(c.at);
    }
    for (size_t i = 1; i < fw.ops.size(); ++i)
      if (rounds[i] != rounds[i - 1]) bounds.insert(i);
    // Each stretch, but the last of each round (to its loss: its backward runs first).
    for (auto b = bounds.begin(); std::next(b) != bounds.end(); ++b) {
      size_t from = *b, to = *std::next(b);
      if (to == fw.ops.size() || rounds[to] != rounds[from]) continue;
      std::vector<Op*> region(fw.ops.begin() + static_cast<std::ptrdiff_t>(from),
                              fw.ops.begin() + static_cast<std::ptrdiff_t>(to));
      rc.recompute(region, checkpoints, summary);
    }
  }
  summary.keptAfter = keptActivationBytes(f);
  return summary;
}

} // namespace shardc
