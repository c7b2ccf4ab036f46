// Elementwise values that cost no memory traffic to compute — built from iotas and from
// operands at least kShrink times smaller, through a few elementwise ops (a one-hot mask
// compare(iota, labels), its where over broadcast scalars) — are recomputed for each op that
// reads them instead of being stored once and read back: every reader's kernel then makes
// them in its own loop, so a [tokens, vocab] mask is never written to memory. Likewise a
// transpose of an argument (a weight) that several matmuls read: each matmul gets its own,
// which it reads as strides, so no transposed copy is stored. CSE merges the transposes of
// every micro-batch into one, which then lived from the first micro-batch to the last.
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/transforms/Passes.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace shardc {
namespace {

constexpr int64_t kShrink = 8;            // a leaf this many times smaller is read at no cost
constexpr int64_t kMinElements = 1 << 14; // below this, storing the value costs nothing
constexpr int kMaxConeOps = 8;            // the ops each reader recomputes

bool elementwise(const Op& op) {
  static const std::set<std::string_view> kOthers = {"iota", "broadcast", "compare", "where",
                                                     "cast"};
  const ElementFns& e = op.def().element;
  return op.numResults() == 1 &&
         (kOthers.count(op.name()) || e.unaryF || e.unaryI || e.binaryF || e.binaryI);
}

class Rematerializer {
public:
  explicit Rematerializer(Function& f) : f_(f) {
    for (const auto& r : f.results())
      results_.insert(r.value);
  }

  bool run() { return cloneCheapValues() | cloneArgumentTransposes(); }

private:
  bool cloneCheapValues() {
    std::vector<Op*> ops;
    for (auto& op : f_.ops())
      ops.push_back(op.get());
    bool changed = false;
    // Last to first: the clones made for an op's readers add readers to its operands,
    // which are visited later and cloned for those readers in turn.
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Op* d = *it;
      if (!elementwise(*d)) continue;
      Value* v = d->result(0);
      if (results_.count(v) || v->type().numel() < kMinElements || coneOps(v) < 0) continue;
      std::vector<Op*> readers;
      for (const Use& u : v->uses())
        if (std::find(readers.begin(), readers.end(), u.user) == readers.end())
          readers.push_back(u.user);
      for (size_t k = 1; k < readers.size(); ++k)
        cloneFor(*d, *readers[k]);
      changed |= readers.size() > 1;
    }
    return changed;
  }

  // Makes `d`'s value again right before `reader`, which reads the copy from then on.
  void cloneFor(const Op& d, Op& reader) {
    Builder b(f_);
    b.setInsertionPoint(&reader);
    b.setLoc(d.loc());
    Value* copy = b.value(d.name(), d.operands(), d.attrs());
    for (size_t i = 0; i < reader.numOperands(); ++i)
      if (reader.operand(i) == d.result(0)) reader.setOperand(i, copy);
  }

  bool cloneArgumentTransposes() {
    std::vector<Op*> transposes;
    for (auto& op : f_.ops())
      if (op->name() == "transpose" && op->operand(0)->isArgument() &&
          !results_.count(op->result(0)))
        transposes.push_back(op.get());
    bool changed = false;
    for (Op* t : transposes) {
      Value* v = t->result(0);
      std::vector<Op*> matmuls;
      bool others = false;
      for (const Use& u : v->uses()) {
        if (u.user->name() != "matmul")
          others = true;
        else if (std::find(matmuls.begin(), matmuls.end(), u.user) == matmuls.end())
          matmuls.push_back(u.user);
      }
      // The original stays with the first matmul when no other op reads it.
      for (size_t k = others ? 0 : 1; k < matmuls.size(); ++k) {
        cloneFor(*t, *matmuls[k]);
        changed = true;
      }
    }
    return changed;
  }

  // Ops recomputed to make `v` from cheap leaves, or -1 when `v` reads a large value or
  // takes more than kMaxConeOps ops.
  int coneOps(const Value* v) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    int n = -1;
    const Op* d = v->definingOp();
    if (d && elementwise(*d)) {
      n = 1;
      for (const Value* u : d->operands()) {
        if (u->type().numel() * kShrink <= v->type().numel()) continue;
        int m = coneOps(u);
        if (m < 0 || (n += m) > kMaxConeOps) {
          n = -1;
          break;
        }
      }
    }
    memo_[v] = n;
    return n;
  }

  Function& f_;
  std::set<const Value*> results_;
  std::map<const Value*, int> memo_;
};

} // namespace

bool rematerialize(Function& f) {
  return Rematerializer(f).run();
}

} // namespace shardc
