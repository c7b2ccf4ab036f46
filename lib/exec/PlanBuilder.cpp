// buildPlan: kernel groups (Fusion.cpp), then where every value lives: constants folded at
// bind time, reshapes and contiguous slices as views, tied results written into their
// arguments, elementwise results over a dying input in place, and the rest packed into one
// arena by first fit over their live ranges.
#include "Fusion.h"
#include "PlanUtil.h"

#include "shardc/exec/ExecPlan.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/ops/ResidentConstants.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

namespace shardc {
namespace {

constexpr int64_t kAlign = 64;
int64_t alignUp(int64_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

// First fit over a sorted list of free ranges; the arena grows at its end when none fits.
class ArenaAllocator {
public:
  int64_t allocate(int64_t bytes) {
    bytes = std::max<int64_t>(alignUp(bytes), kAlign);
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second >= bytes) {
        int64_t at = it->first;
        if (it->second == bytes)
          free_.erase(it);
        else {
          free_.emplace(at + bytes, it->second - bytes);
          free_.erase(it);
        }
        return at;
      }
    // Extend a free range touching the end, else the end itself.
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == top_) {
        int64_t at = last->first;
        free_.erase(last);
        top_ = at + bytes;
        return at;
      }
    }
    int64_t at = top_;
    top_ += bytes;
    return at;
  }
  void release(int64_t at, int64_t bytes) {
    bytes = std::max<int64_t>(alignUp(bytes), kAlign);
    auto it = free_.emplace(at, bytes).first;
    if (auto next = std::next(it); next != free_.end() && at + bytes == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }
  int64_t size() const { return top_; }

private:
  std::map<int64_t, int64_t> free_; // offset -> bytes
  int64_t top_ = 0;
};

class PlanBuilder {
public:
  PlanBuilder(const Function& f, const std::vector<int64_t>& sectionOf)
      : f_(f), num_(f), sectionOf_(sectionOf) {}

  ExecPlan build() {
    std::vector<KernelGroup> groups = kernelGroups();
    for (const KernelGroup& g : groups)
      plan_.steps.push_back({g.kernel, g.ops, !hasNativeKernel(g.kernel, *num_.op(g.ops.back()))});
    markFused();
    liveRanges();
    placeTied();
    placeOutputs();
    allocate();
    return std::move(plan_);
  }

  std::vector<KernelGroup> kernelGroups() {
    plan_.values.assign(static_cast<size_t>(num_.count()), PlanValue{});
    for (size_t i = 0; i < f_.numArguments(); ++i)
      plan_.values[i] = {ValueHome::Argument, 0, static_cast<int64_t>(i)};
    markConstants();
    markViews();
    return formGroups(f_, num_.ops(), constant_, sectionOf_);
  }

private:
  PlanValue& at(const Value* v) { return plan_.values[static_cast<size_t>(num_.id(v))]; }

  void markConstants() {
    const auto& ops = num_.ops();
    std::unordered_set<const Value*> resident = residentConstants(f_);
    constant_.assign(ops.size(), false);
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = *ops[i];
      if (!op.numResults() || !resident.count(op.result(0))) continue;
      constant_[i] = true;
      for (size_t r = 0; r < op.numResults(); ++r)
        at(op.result(r)) = {ValueHome::Constant, 0, -1};
    }
  }

  // Reshapes, and slices and splits that select one contiguous block, read their operand's
  // bytes in place.
  void markViews() {
    const auto& ops = num_.ops();
    for (size_t i = 0; i < ops.size(); ++i) {
      if (constant_[i]) continue;
      const Op& op = *ops[i];
      std::vector<int64_t> offsets = viewOffsets(op);
      if (offsets.empty()) continue;
      constant_[i] = true; // no step: nothing to compute
      for (size_t r = 0; r < op.numResults(); ++r)
        at(op.result(r)) = {ValueHome::View, offsets[r], num_.id(op.operand(0))};
    }
  }

  // Results of a group's ops that nothing outside the group reads are never stored.
  void markFused() {
    for (size_t s = 0; s < plan_.steps.size(); ++s)
      for (int64_t i : plan_.steps[s].ops) {
        stepOf_[i] = static_cast<int64_t>(s);
      }
    for (size_t s = 0; s < plan_.steps.size(); ++s)
      for (int64_t i : plan_.steps[s].ops) {
        const Op& op = *num_.op(i);
        for (size_t r = 0; r < op.numResults(); ++r) {
          const Value* v = op.result(r);
          // A value nothing reads is still stored: its kernel writes it.
          bool outside = num_.isResult(v) || v->uses().empty();
          for (const Use& u : v->uses())
            outside = outside || stepOf(num_.index(u.user)) != static_cast<int64_t>(s);
          if (!outside) at(v).home = ValueHome::Fused;
        }
      }
  }

  // The step an op belongs to; -1 for folded constants and views (read where they are used).
  int64_t stepOf(int64_t op) const {
    auto it = stepOf_.find(op);
    return it == stepOf_.end() ? -1 : it->second;
  }

  int64_t root(int64_t id) const { return viewRoot(plan_, id); }

  void liveRanges() {
    LiveRanges r = shardc::liveRanges(plan_, num_, f_);
    def_ = std::move(r.def);
    last_ = std::move(r.last);
  }

  bool readsAligned(size_t s, int64_t id) const { return shardc::readsAligned(plan_, num_, s, id); }

  bool stepReads(size_t s, int64_t id) const {
    for (int64_t i : plan_.steps[s].ops)
      for (const Value* v : num_.op(i)->operands())
        if (root(num_.id(v)) == id) return true;
    return false;
  }

  // A call result its body updates in place is where the body leaves it: in the buffer of
  // the argument it reads (the caller's argument, which hypersection outlining ensures).
  void placeCallTied() {
    for (const Op* op : num_.ops()) {
      if (!op->def().callsFunction) continue;
      const Function* body = f_.module() ? f_.module()->callee(*op) : nullptr;
      SHARDC_CHECK(body, "a call's callee is verified before planning");
      for (size_t k = 0; k < body->results().size(); ++k) {
        int64_t j = body->results()[k].tiedArg;
        if (j < 0) continue;
        const Value* arg = op->operand(static_cast<size_t>(j));
        SHARDC_CHECK(arg->isArgument(), "a body updates only the caller's own arguments in place");
        int64_t id = num_.id(op->result(k));
        at(op->result(k)) = {ValueHome::Argument, 0, static_cast<int64_t>(arg->index())};
        tiedTaken_.insert(id);
      }
    }
  }

  // A tied result is written into its argument's buffer by the step that makes it, when no
  // later step reads the argument and that step reads it element for element (or not at all).
  void placeTied() {
    placeCallTied();
    for (const auto& r : f_.results()) {
      if (r.tiedArg < 0) continue;
      int64_t id = num_.id(r.value), arg = r.tiedArg;
      PlanValue& pv = plan_.values[static_cast<size_t>(id)];
      if (pv.home != ValueHome::Arena || tiedTaken_.count(id)) continue;
      int64_t s = def_[static_cast<size_t>(id)];
      if (s < 0 || last_[static_cast<size_t>(arg)] > s) continue;
      if (r.value->type() != f_.argument(static_cast<size_t>(arg))->type()) continue;
      if (stepReads(static_cast<size_t>(s), arg) && !readsAligned(static_cast<size_t>(s), arg))
        continue;
      bool readsOtherArgLater = false; // the same value tied twice: keep it in the arena
      for (const auto& r2 : f_.results())
        readsOtherArgLater |= r2.value == r.value && r2.tiedArg != arg && r2.tiedArg >= 0;
      if (readsOtherArgLater) continue;
      pv = {ValueHome::Argument, 0, arg};
      tiedTaken_.insert(id);
    }
  }

  // Untied results made by a step are written straight into the caller's output buffers.
  void placeOutputs() {
    int64_t k = 0;
    for (const auto& r : f_.results()) {
      if (r.tiedArg >= 0) continue;
      PlanValue& pv = plan_.values[static_cast<size_t>(num_.id(r.value))];
      if (pv.home == ValueHome::Arena && def_[static_cast<size_t>(num_.id(r.value))] >= 0)
        pv = {ValueHome::Result, 0, k};
      ++k;
    }
  }

  void allocate() {
    ArenaAllocator arena;
    size_t n = plan_.values.size();
    std::vector<std::vector<int64_t>> dying(plan_.steps.size() + 1);
    for (size_t v = 0; v < n; ++v)
      if (plan_.values[v].home == ValueHome::Arena && def_[v] >= 0)
        dying[static_cast<size_t>(std::max(last_[v], def_[v]))].push_back(static_cast<int64_t>(v));
    std::vector<bool> handedOver(n, false);
    for (size_t s = 0; s < plan_.steps.size(); ++s) {
      std::vector<int64_t> reusable; // arena inputs dying here, read element for element
      if (isElementwiseStep(plan_.steps[s], num_))
        for (int64_t v : dying[s])
          if (def_[static_cast<size_t>(v)] < static_cast<int64_t>(s) && readsAligned(s, v))
            reusable.push_back(v);
      for (int64_t i : plan_.steps[s].ops) {
        const Op& op = *num_.op(i);
        for (size_t r = 0; r < op.numResults(); ++r) {
          const Value* v = op.result(r);
          PlanValue& pv = at(v);
          if (pv.home != ValueHome::Arena) continue;
          auto it = std::find_if(reusable.begin(), reusable.end(), [&](int64_t u) {
            return num_.type(u).bytes() == v->type().bytes();
          });
          if (it != reusable.end()) {
            pv.offset = plan_.values[static_cast<size_t>(*it)].offset;
            handedOver[static_cast<size_t>(*it)] = true;
            reusable.erase(it);
          } else {
            pv.offset = arena.allocate(v->type().bytes());
          }
        }
      }
      for (int64_t v : dying[s])
        if (!handedOver[static_cast<size_t>(v)])
          arena.release(plan_.values[static_cast<size_t>(v)].offset, num_.type(v).bytes());
    }
    plan_.arenaBytes = arena.size();
  }

  const Function& f_;
  ValueNumbering num_;
  const std::vector<int64_t>& sectionOf_;
  ExecPlan plan_;
  std::vector<bool> constant_; // per op: folded at bind time, or a view (no step)
  std::map<int64_t, int64_t> stepOf_;
  std::vector<int64_t> def_, last_;
  std::set<int64_t> tiedTaken_;
};

} // namespace

ExecPlan buildPlan(const Function& f, const std::vector<int64_t>& sectionOf) {
  return PlanBuilder(f, sectionOf).build();
}

std::vector<std::vector<int64_t>> planKernelOps(const Function& f,
                                                const std::vector<int64_t>& sectionOf) {
  std::vector<std::vector<int64_t>> out;
  for (KernelGroup& g : PlanBuilder(f, sectionOf).kernelGroups())
    out.push_back(std::move(g.ops));
  return out;
}

} // namespace shardc
