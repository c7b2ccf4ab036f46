// bucketGradientReductions: the gradient reduction of a data-parallel step as a few large
// all-reduces instead of one per gradient. Each all_reduce costs a fixed latency (a round of
// messages, a rendezvous of the devices) besides its bytes, and a per-gradient reduction pays
// it for every bias and norm weight; frameworks bucket gradients for the same reason.
#include "shardc/dataflow/Sections.h"
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace shardc {
namespace {

struct Bucket {
  std::vector<Op*> members;
  int64_t bytes = 0;
  size_t firstUse = 0; // the earliest op reading a member's result
};

// Flattens each member's operand, concatenates them, reduces once, and splits the sum back
// into the members' results, after the last member.
void rewrite(Function& f, const Bucket& b) {
  Op* last = b.members.back();
  Builder builder(f);
  auto next = std::next(f.position(last));
  if (next == f.ops().end())
    builder.setInsertionPointToEnd();
  else
    builder.setInsertionPoint(next->get());
  builder.setLoc(last->loc());
  std::vector<Value*> flat;
  std::vector<int64_t> sizes;
  for (Op* op : b.members) {
    const TensorType& t = op->operand(0)->type();
    flat.push_back(builder.value("reshape", {op->operand(0)}, {{"shape", Shape{t.numel()}}}));
    sizes.push_back(t.numel());
  }
  Value* joined = builder.value("concat", flat, {{"axis", int64_t{0}}});
  AttrDict attrs = last->attrs();
  Value* sum = builder.value("all_reduce", {joined}, std::move(attrs));
  Op* split = builder.create("split", {sum}, {{"axis", int64_t{0}}, {"sizes", sizes}});
  for (size_t k = 0; k < b.members.size(); ++k) {
    Op* op = b.members[k];
    Value* back =
        builder.value("reshape", {split->result(k)}, {{"shape", op->result(0)->type().shape}});
    op->result(0)->replaceAllUsesWith(back);
  }
  for (Op* op : b.members)
    f.eraseOp(op);
}

} // namespace

int64_t bucketGradientReductions(Function& f, int64_t bucketBytes) {
  // The optimizer's ops go last, as section formation orders them anyway: each reads only
  // values made before it and is read only by optimizer ops and tied results, so a reduction
  // can then wait for the last gradient of its bucket.
  std::vector<Phase> phases = opPhases(f);
  std::vector<Op*> ops;
  for (const auto& op : f.ops())
    ops.push_back(op.get());
  for (size_t i = 0; i < ops.size(); ++i)
    if (phases[i] == Phase::Optimizer) f.ops().splice(f.ops().end(), f.ops(), f.position(ops[i]));
  std::stable_partition(phases.begin(), phases.end(),
                        [](Phase p) { return p != Phase::Optimizer; });
  std::unordered_map<const Op*, size_t> position;
  ops.clear();
  for (const auto& op : f.ops()) {
    position[op.get()] = ops.size();
    ops.push_back(op.get());
  }
  auto firstUse = [&](const Op& op) {
    size_t first = ops.size();
    for (const Use& u : op.result(0)->uses())
      first = std::min(first, u.user ? position.at(u.user) : ops.size());
    return first;
  };
  // Open buckets by what an all-reduce sums over and its element type; a bucket closes when
  // the next member would not fit or a member's sum is read before that member is made.
  using Key = std::tuple<std::string, int64_t, DType>;
  std::map<Key, Bucket> open;
  std::vector<Bucket> done;
  auto close = [&](const Key& k) {
    auto it = open.find(k);
    if (it == open.end()) return;
    if (it->second.members.size() > 1) done.push_back(std::move(it->second));
    open.erase(it);
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    Op* op = ops[i];
    if (op->name() != opname::kAllReduce || phases[i] != Phase::GradReduce ||
        !isFloat(op->operand(0)->type().dtype))
      continue;
    Key k{op->attrs().getString("axes"), op->attrs().getInt("group"), op->operand(0)->type().dtype};
    int64_t bytes = op->operand(0)->type().bytes();
    auto it = open.find(k);
    if (it != open.end() && (it->second.bytes + bytes > bucketBytes || it->second.firstUse <= i)) {
      close(k);
      it = open.end();
    }
    if (it == open.end()) it = open.emplace(k, Bucket{{}, 0, ops.size()}).first;
    it->second.members.push_back(op);
    it->second.bytes += bytes;
    it->second.firstUse = std::min(it->second.firstUse, firstUse(*op));
  }
  while (!open.empty())
    close(open.begin()->first);
  int64_t replaced = 0;
  for (const Bucket& b : done) {
    rewrite(f, b);
    replaced += static_cast<int64_t>(b.members.size());
  }
  return replaced;
}

namespace {

// A cast from a float type to one at least as wide: summing after it, rather than before,
// only adds precision (a bf16 gradient of an f32 parameter is then reduced in f32).
bool wideningCast(const Op& op) {
  DType from = op.operand(0)->type().dtype, to = op.result(0)->type().dtype;
  return op.name() == opname::kCast && isFloat(from) && isFloat(to) &&
         dtypeSize(to) >= dtypeSize(from);
}

// `v` as a sum over a group: an all_reduce read only through a chain of reshapes, transposes
// and widening casts (which commute with the sum) ending in `v`, each read once; null if not.
const Op* reducedThrough(const Value* v, std::vector<const Op*>& layout) {
  layout.clear();
  while (const Op* op = v->definingOp()) {
    if (v->uses().size() != 1) return nullptr;
    if (op->name() == opname::kAllReduce) {
      std::reverse(layout.begin(), layout.end());
      return op;
    }
    if (op->name() != opname::kReshape && op->name() != opname::kTranspose && !wideningCast(*op))
      return nullptr;
    layout.push_back(op);
    v = op->operand(0);
  }
  return nullptr;
}

// The reduction's operand through the same reshapes and transposes.
Value* beforeReduction(Builder& b, const Op* reduction, const std::vector<const Op*>& layout) {
  std::unordered_map<const Value*, Value*> map{{reduction->result(0), reduction->operand(0)}};
  for (const Op* op : layout)
    b.clone(*op, map);
  return map.at(layout.empty() ? reduction->result(0) : layout.back()->result(0));
}

void eraseChain(Function& f, const Op* reduction, const std::vector<const Op*>& layout) {
  for (auto it = layout.rbegin(); it != layout.rend(); ++it)
    f.eraseOp(const_cast<Op*>(*it));
  f.eraseOp(const_cast<Op*>(reduction));
}

} // namespace

int64_t sinkReductionsIntoSums(Function& f) {
  int64_t removed = 0;
  Builder b(f);
  std::vector<const Op*> xLayout, yLayout;
  for (auto it = f.ops().begin(); it != f.ops().end();) {
    Op* add = (it++)->get();
    if (add->name() != opname::kAdd || add->operand(0)->type() != add->operand(1)->type()) continue;
    const Op* x = reducedThrough(add->operand(0), xLayout);
    const Op* y = x ? reducedThrough(add->operand(1), yLayout) : nullptr;
    if (!y || x == y || !(x->attrs() == y->attrs())) continue;
    b.setInsertionPoint(add);
    Value* sum =
        b.value(opname::kAdd, {beforeReduction(b, x, xLayout), beforeReduction(b, y, yLayout)});
    Value* reduced = b.create(opname::kAllReduce, {sum}, x->attrs())->result(0);
    reduced->setName(add->result(0)->name());
    add->result(0)->replaceAllUsesWith(reduced);
    f.eraseOp(add);
    eraseChain(f, x, xLayout);
    eraseChain(f, y, yLayout);
    ++removed;
  }
  return removed;
}

} // namespace shardc
