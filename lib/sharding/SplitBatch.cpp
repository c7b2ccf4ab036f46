#include "shardc/sharding/SplitBatch.h"

#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/sharding/Plan.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/sharding/SpmdLowering.h"
#include "shardc/sharding/Tactics.h"
#include "shardc/support/Error.h"
#include "shardc/transforms/Passes.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace shardc {
bool sumOverBatch(const Op& op) {
  return op.name() == opname::kAllReduce && op.attrs().getString("axes") == kMicroBatchAxis;
}

namespace {

// Which values of the split program depend on what. A value neither reads is the same in
// every micro-batch: constants, and sums over the whole batch the parameters do not reach.
struct Reach {
  std::unordered_set<const Value*> params;  // a parameter or state
  std::unordered_set<const Value*> samples; // the micro-batch's samples, but through such sums
  // Affine in a micro-batch's sum that the parameters reach: value -> the summed value.
  std::unordered_map<const Value*, const Value*> linear;

  bool uniform(const Value* v) const { return !samples.count(v) && !linear.count(v); }
};

// Whether `op`, reading a value of r.linear, keeps its result affine in the micro-batch's sums
// with coefficients every micro-batch shares, so that the mean over the micro-batches of its
// result is its result for the whole batch.
bool staysAffine(const Op& op, const Reach& r) {
  std::string_view n = op.name();
  const auto& xs = op.operands();
  auto linear = [&](size_t i) { return r.linear.count(xs[i]) > 0; };
  if (n == opname::kAdd || n == opname::kSub)
    return std::all_of(xs.begin(), xs.end(),
                       [&](const Value* v) { return r.linear.count(v) || r.uniform(v); });
  if (n == opname::kMul) return xs.size() == 2 && (linear(0) ? r.uniform(xs[1]) : r.uniform(xs[0]));
  if (n == opname::kDiv) return xs.size() == 2 && linear(0) && r.uniform(xs[1]);
  if (n == opname::kCast) return isFloat(op.result()->type().dtype);
  return n == opname::kNeg || n == opname::kReshape || n == opname::kBroadcast ||
         n == opname::kTranspose || n == opname::kReduceSum || n == opname::kReduceMean;
}

std::string named(const Value* v) {
  return v->name().empty() ? std::string() : ", of %" + v->name();
}

// Rewrites the sums over the batch of the split program `g` as splitBatch says; returns its
// results that are such losses.
std::unordered_set<const Value*> localizeSums(Function& g, int64_t pieces, const std::string& why) {
  auto mixes = [&](const std::string& op, const Value* summed, const std::string& more) {
    return Error(why + "an op mixes the samples of the batch (the split program would need " + op +
                 " across the micro-batches" + (summed ? named(summed) : std::string()) + ")" +
                 more);
  };
  Reach r;
  for (size_t i = 0; i < g.numArguments(); ++i)
    (g.argument(i)->argKind() == ArgKind::Input ? r.samples : r.params).insert(g.argument(i));
  std::vector<Op*> ops;
  for (const auto& op : g.ops())
    ops.push_back(op.get());
  Builder b(g);
  for (Op* op : ops) {
    if (sumOverBatch(*op)) {
      Value* x = op->operand(0);
      if (r.linear.count(x)) throw mixes(op->name(), x, ": a sum of a sum over the batch");
      if (!r.params.count(x)) continue; // the whole batch's sum, computed before the step
      b.setInsertionPoint(op);
      b.setLoc(op->loc());
      Tensor k(TensorType{x->type().dtype, {}});
      k.setDouble(0, static_cast<double>(pieces));
      Value* scale =
          b.value("constant", {}, {{"value", TensorRef(std::make_shared<Tensor>(std::move(k)))}});
      Value* scaled = b.value("mul", {x, scale});
      op->result()->replaceAllUsesWith(scaled);
      g.eraseOp(op);
      r.params.insert(scaled);
      r.linear[scaled] = x;
      continue;
    }
    if (op->def().communicates)
      throw mixes(op->name(), op->numOperands() ? op->operand(0) : nullptr, "");
    const Value* summed = nullptr;
    bool params = false, samples = false;
    for (const Value* v : op->operands()) {
      params |= r.params.count(v) > 0;
      samples |= r.samples.count(v) > 0;
      if (auto it = r.linear.find(v); it != r.linear.end()) summed = it->second;
    }
    if (summed && !staysAffine(*op, r))
      throw mixes("all_reduce", summed,
                  ": its sum over the batch reaches " + op->name() +
                      ", where the micro-batches' sums cannot stand for the whole batch's");
    for (size_t i = 0; i < op->numResults(); ++i) {
      const Value* v = op->result(i);
      if (params) r.params.insert(v);
      if (samples) r.samples.insert(v);
      if (summed) r.linear[v] = summed;
    }
  }
  std::unordered_set<const Value*> losses;
  for (const FuncResult& res : g.results()) {
    if (!r.linear.count(res.value)) continue;
    if (res.value->type().rank() != 0 || res.tiedArg >= 0)
      throw mixes("all_reduce", r.linear.at(res.value),
                  ": result '" + res.name + "' holds a sum over the batch");
    losses.insert(res.value);
  }
  return losses;
}

} // namespace

std::unique_ptr<Module> splitBatch(const Function& f, int64_t pieces) {
  ShardingPlan plan(Mesh({{kMicroBatchAxis, pieces}}));
  applyDataParallel(f, plan, kMicroBatchAxis);
  replicateUnfixedParameters(f, plan);
  propagateShardings(f, plan);
  SpmdProgram p = lowerToSpmd(f, plan);
  Function& g = *p.module->functions().front();
  // The lowering slices constants of the whole batch's shapes; most pieces are alike.
  localizeConstants(g);
  eliminateCommonSubexpressions(g);
  eliminateDeadCode(g);
  const std::string why =
      "the batch cannot be split into " + std::to_string(pieces) + " micro-batches: ";
  for (const auto& h : p.module->functions())
    if (h.get() != &g)
      for (const auto& op : h->ops())
        if (op->def().communicates)
          throw Error(why + "an op mixes the samples of the batch (the split program would need " +
                      op->name() + " across the micro-batches, in @" + h->name() + ")");
  std::unordered_set<const Value*> losses = localizeSums(g, pieces, why);
  for (size_t i = 0; i < p.resultShardings.size(); ++i) {
    const TensorSharding& s = p.resultShardings[i];
    const FuncResult& res = g.results()[i];
    bool batchFirst = !s.dims.empty() && s.dims[0] == std::vector<std::string>{kMicroBatchAxis};
    if (!batchFirst && !losses.count(res.value))
      throw Error(why + "result '" + f.results()[i].name + "' (" +
                  f.results()[i].value->type().str() +
                  ") does not keep the batch as its first dimension");
  }
  return std::move(p.module);
}

} // namespace shardc
