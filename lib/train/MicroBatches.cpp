#include "MicroBatches.h"

#include "shardc/ir/Builder.h"
#include "shardc/sharding/SplitBatch.h"
#include "shardc/support/Error.h"

#include "Optimizer.h"

#include <algorithm>
#include <iterator>
#include <unordered_set>

namespace shardc {
namespace {

Shape withDims(const Shape& s, std::vector<int64_t> lead) {
  lead.insert(lead.end(), s.begin() + 1, s.end());
  return lead;
}

// Micro-batch i of `x` ([B * m, ...]): x seen as [B, m, ...], column i.
Value* microBatch(Builder& b, Value* x, int64_t batch, int64_t m, int64_t i) {
  const Shape& big = x->type().shape;
  Shape split = withDims(big, {batch, m});
  std::vector<int64_t> start(split.size(), 0), limit = split, stride(split.size(), 1);
  start[1] = i;
  limit[1] = i + 1;
  Value* r = b.value("reshape", {x}, {{"shape", split}});
  Value* s = b.value("slice", {r}, {{"start", start}, {"limit", limit}, {"stride", stride}});
  return b.value("reshape", {s}, {{"shape", withDims(big, {batch})}});
}

// The micro-batches' pieces ([B, ...] each) back in sample order ([B * m, ...]).
Value* join(Builder& b, const std::vector<Value*>& pieces, int64_t batch) {
  const Shape& one = pieces[0]->type().shape;
  std::vector<Value*> columns;
  for (Value* p : pieces)
    columns.push_back(b.value("reshape", {p}, {{"shape", withDims(one, {batch, 1})}}));
  Value* c = b.value("concat", columns, {{"axis", int64_t{1}}});
  return b.value("reshape", {c},
                 {{"shape", withDims(one, {batch * static_cast<int64_t>(pieces.size())})}});
}

// Moves `op` right after the last op before it that makes one of its operands, so that it
// runs as soon as it can (the op that finishes a gradient, a reshape say, may come long after
// the op computing it).
void hoist(Function& f, Op* op) {
  std::unordered_set<const Op*> makers;
  for (const Value* v : op->operands())
    if (const Op* d = v->definingOp()) makers.insert(d);
  auto at = f.position(op);
  while (at != f.ops().begin()) {
    auto before = std::prev(at);
    if (makers.count(before->get())) break;
    at = before;
  }
  f.ops().splice(at, f.ops(), f.position(op));
}

// Hoists the ops that finish gradient `g`: its defining op and the chain of single-use ops
// above it, the highest first.
void hoistGradient(Function& f, Value* g) {
  std::vector<Op*> chain;
  for (Op* op = g->definingOp(); op;) {
    chain.push_back(op);
    if (op->numOperands() != 1 || op->operand(0)->uses().size() != 1) break;
    op = op->operand(0)->definingOp();
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    hoist(f, *it);
}

int64_t batchOf(Function& f, const StepValues& s, std::vector<Value*>& inputs) {
  int64_t batch = -1;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    Value* a = f.argument(i);
    if (a->argKind() != ArgKind::Input) continue;
    const TensorType& t = a->type();
    if (t.rank() < 1 || (batch >= 0 && t.shape[0] != batch))
      throw Error("--micro-batches splits every input along its first dimension (the batch" +
                  (batch >= 0 ? ", " + std::to_string(batch) : std::string()) + "), but input '" +
                  a->name() + "' is " + t.str());
    batch = t.shape[0];
    inputs.push_back(a);
  }
  if (inputs.empty()) throw Error("--micro-batches needs an input to split; the model has none");
  for (const FuncResult& r : s.outputs)
    if (r.value->type().rank() < 1 || r.value->type().shape[0] != batch)
      throw Error("--micro-batches: output '" + r.name + "' (" + r.value->type().str() +
                  ") does not have the batch (" + std::to_string(batch) +
                  ") as its first dimension, so the micro-batches' values cannot be joined");
  return batch;
}

// Copies `op` for micro-batch `i`; the copy of a slice of an input takes column i.
Op* cloneFor(Builder& b, const Op& op, std::unordered_map<const Value*, Value*>& map, int64_t i,
             const std::unordered_set<const Op*>& slices) {
  Op* copy = b.clone(op, map);
  if (slices.count(&op)) {
    std::vector<int64_t> start = op.attrs().getInts("start"), limit = op.attrs().getInts("limit");
    start[1] = i;
    limit[1] = i + 1;
    copy->attrs().set("start", start);
    copy->attrs().set("limit", limit);
  }
  return copy;
}

// The ops of `body` that `v` is computed from, in body order: inputs and constants only, as
// splitBatch leaves a sum over the whole batch.
std::vector<const Op*> opsBehind(const Value* v, const std::vector<Op*>& body) {
  std::unordered_set<const Op*> behind;
  std::vector<const Value*> todo{v};
  while (!todo.empty()) {
    const Value* x = todo.back();
    todo.pop_back();
    const Op* d = x->definingOp();
    if (!d && x->argKind() != ArgKind::Input)
      throw Error("--micro-batches: a sum over the whole batch reads '" + x->name() +
                  "', which is not an input");
    if (!d || !behind.insert(d).second) continue;
    todo.insert(todo.end(), d->operands().begin(), d->operands().end());
  }
  std::vector<const Op*> ordered;
  for (const Op* op : body)
    if (behind.count(op)) ordered.push_back(op);
  return ordered;
}

} // namespace

void accumulateMicroBatches(Function& f, int64_t m, StepValues& s) {
  std::vector<Value*> inputs;
  int64_t batch = batchOf(f, s, inputs);
  std::unordered_map<const Op*, size_t> position;
  for (const auto& op : f.ops())
    position[op.get()] = position.size();
  Builder b(f);
  // Micro-batch 0 of each input, sliced right before its first reader (a slice made earlier
  // would keep a value alive across the forward pass); the other micro-batches copy these
  // slices with their own column.
  std::unordered_set<const Op*> slices;
  for (Value* x : inputs) {
    std::vector<Use> uses = x->uses();
    x->setType(TensorType{x->type().dtype, withDims(x->type().shape, {batch * m})});
    if (uses.empty()) continue;
    Op* first = nullptr;
    for (const Use& u : uses)
      if (u.user && (!first || position.at(u.user) < position.at(first))) first = u.user;
    if (first)
      b.setInsertionPoint(first);
    else
      b.setInsertionPointToEnd();
    Value* piece = microBatch(b, x, batch, m, 0);
    slices.insert(piece->definingOp()->operand(0)->definingOp());
    for (const Use& u : uses)
      if (u.user)
        u.user->setOperand(u.index, piece);
      else
        f.setResultValue(u.index, piece);
  }
  std::vector<Op*> body;
  for (const auto& op : f.ops())
    body.push_back(op.get());
  // Sums over the whole batch (splitBatch's all-reduces over the micro-batch axis): each is
  // computed from every micro-batch before micro-batch 0 reads it. The copies made for
  // micro-batch i serve it again when its turn comes.
  std::vector<std::unordered_map<const Value*, Value*>> early(static_cast<size_t>(m));
  for (auto& map : early)
    for (size_t a = 0; a < f.numArguments(); ++a)
      map[f.argument(a)] = f.argument(a);
  std::vector<Op*> sums;
  for (Op* op : body)
    if (sumOverBatch(*op)) sums.push_back(op);
  for (Op* sum : sums) {
    Value* part = sum->operand(0);
    std::vector<const Op*> behind = opsBehind(part, body);
    b.setInsertionPoint(sum);
    Value* total = part;
    for (int64_t i = 1; i < m; ++i) {
      auto& map = early[static_cast<size_t>(i)];
      for (const Op* op : behind)
        if (!map.count(op->result())) cloneFor(b, *op, map, i, slices);
      total = b.value("add", {total, map.at(part)});
    }
    for (auto& map : early)
      map[total] = total;
    sum->result()->replaceAllUsesWith(total);
    body.erase(std::find(body.begin(), body.end(), sum));
    f.eraseOp(sum);
  }
  b.setInsertionPointToEnd();
  std::vector<Value*> losses{s.loss}, grads = s.grads;
  std::vector<Value*> carried; // the first micro-batch's state updates, which the others copy
  for (const FuncResult& r : s.carried)
    carried.push_back(r.value);
  std::vector<std::vector<Value*>> outputs;
  for (const FuncResult& r : s.outputs)
    outputs.push_back({r.value});
  for (int64_t i = 1; i < m; ++i) {
    std::unordered_map<const Value*, Value*> map = std::move(early[static_cast<size_t>(i)]);
    for (const FuncResult& r : s.carried) // the state the micro-batch before left
      map[f.argument(static_cast<size_t>(r.tiedArg))] = r.value;
    for (const Op* op : body)
      if (!map.count(op->result())) cloneFor(b, *op, map, i, slices);
    losses.push_back(map.at(s.loss));
    // Each gradient joins the running sum as soon as it is made, so that a micro-batch's
    // gradients never live all at once beside the sum.
    for (size_t k = 0; k < grads.size(); ++k) {
      if (!grads[k]) continue;
      Value* g = map.at(s.grads[k]);
      if (Op* def = g->definingOp()) {
        hoistGradient(f, g);
        b.setInsertionPointAfter(def);
      } else {
        b.setInsertionPointToEnd();
      }
      grads[k] = b.value("add", {grads[k], g});
    }
    b.setInsertionPointToEnd();
    for (size_t k = 0; k < outputs.size(); ++k)
      outputs[k].push_back(map.at(s.outputs[k].value));
    for (size_t k = 0; k < carried.size(); ++k)
      s.carried[k].value = map.at(carried[k]);
  }
  auto mean = [&](Value* sum) {
    return b.value("div", {sum, scalarOf(b, sum->type().dtype, static_cast<double>(m))});
  };
  // The losses are summed after the last micro-batch, so that no forward op follows a
  // micro-batch's backward pass but the next micro-batch's.
  Value* loss = losses[0];
  for (size_t i = 1; i < losses.size(); ++i)
    loss = b.value("add", {loss, losses[i]});
  s.loss = mean(loss);
  for (size_t k = 0; k < grads.size(); ++k)
    if (grads[k]) s.grads[k] = mean(grads[k]);
  for (size_t k = 0; k < outputs.size(); ++k)
    s.outputs[k].value = join(b, outputs[k], batch);
}

} // namespace shardc
