#include "shardc/sharding/Tactics.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/sharding/Plan.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/support/Error.h"

namespace shardc {
namespace {

bool isFixed(const ShardingPlan& plan, const Value* v) {
  const ValueSharding* s = plan.find(v);
  return s && s->origin.fixed();
}

void fix(ShardingPlan& plan, const Value* v, TensorSharding s, const std::string& tactic) {
  if (!isFixed(plan, v)) plan.set(v, std::move(s), {OriginKind::Tactic, tactic});
}

void replicateRest(const Function& f, ShardingPlan& plan, ArgKind kind, const std::string& tactic) {
  for (size_t i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->argKind() == kind)
      fix(plan, f.argument(i), TensorSharding::replicated(f.argument(i)->type().rank()), tactic);
}

// Where a trial starts: every parameter and input fixed whole and nothing else known, so that
// only the trial's column split travels (as far as it reaches, which keeps a trial cheap on a
// big program), and what it reaches is its doing alone, not a fixed neighbour's projection.
ShardingPlan trialBase(const Function& f, const Mesh& mesh) {
  ShardingPlan p(mesh);
  replicateRest(f, p, ArgKind::Param, "trial");
  replicateRest(f, p, ArgKind::Input, "trial");
  return p;
}

// The 2-D parameter weight of a matmul, or nullptr.
const Value* paramWeight(const Op& op) {
  if (op.name() != "matmul") return nullptr;
  const Value* w = op.operand(1);
  return w->isArgument() && w->argKind() == ArgKind::Param && w->type().rank() == 2 ? w : nullptr;
}

// The bias added to a matmul's result: the 1-D parameter of its single `add` user.
const Value* biasOf(const Op& matmul, const Op** add) {
  const Value* y = matmul.result(0);
  if (y->uses().size() != 1 || !y->uses()[0].user) return nullptr;
  const Op* user = y->uses()[0].user;
  if (user->name() != "add") return nullptr;
  const Value* b = user->operand(y->uses()[0].index == 0 ? 1 : 0);
  if (!b->isArgument() || b->argKind() != ArgKind::Param || b->type().rank() != 1) return nullptr;
  *add = user;
  return b;
}

// How many equal pieces the (biased) matmul output is split into along its last dimension.
int64_t equalPieces(const Op& matmul) {
  const Op* add = nullptr;
  biasOf(matmul, &add);
  const Value* y = add ? add->result(0) : matmul.result(0);
  if (y->uses().size() != 1 || !y->uses()[0].user) return 1;
  const Op* split = y->uses()[0].user;
  if (split->name() != "split" ||
      *normalizeAxis(split->attrs().getInt("axis"), y->type().rank()) != y->type().rank() - 1)
    return 1;
  const auto& sizes = split->attrs().getInts("sizes");
  for (int64_t s : sizes)
    if (s != sizes[0]) return 1;
  return static_cast<int64_t>(sizes.size());
}

bool lastDimUses(const TensorSharding& s, const std::string& axis) {
  if (s.dims.empty()) return false;
  const auto& last = s.dims.back();
  return std::find(last.begin(), last.end(), axis) != last.end();
}

} // namespace

int64_t fusedOutputPieces(const Value* param) {
  if (!param->isArgument() || param->argKind() != ArgKind::Param) return 1;
  for (const Use& u : param->uses()) {
    if (!u.user) continue;
    if (paramWeight(*u.user) == param && u.index == 1) return equalPieces(*u.user);
    if (u.user->name() != "add" || param->type().rank() != 1) continue;
    const Value* other = u.user->operand(u.index == 0 ? 1 : 0);
    const Op* matmul = other->definingOp();
    const Op* add = nullptr;
    if (matmul && paramWeight(*matmul) && biasOf(*matmul, &add) == param)
      return equalPieces(*matmul);
  }
  return 1;
}

void applyDataParallel(const Function& f, ShardingPlan& plan, const std::string& axis) {
  int64_t n = plan.mesh().axisSize(axis);
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() != ArgKind::Input || a->type().rank() == 0 || isFixed(plan, a)) continue;
    if (a->type().shape[0] % n)
      throw Error("data parallel over " + axis + "=" + std::to_string(n) +
                  ": the batch of input '" + a->name() + "' " + a->type().str() +
                  " does not divide evenly; compile with a batch size (-b) that is a multiple of " +
                  std::to_string(n));
    TensorSharding s = TensorSharding::replicated(a->type().rank());
    s.dims[0] = {axis};
    fix(plan, a, s, "data-parallel");
  }
}

std::vector<TacticDecision> megatronDecisions(const Function& f, const ShardingPlan& given,
                                              const std::string& axis) {
  ShardingPlan plan = given; // and the decisions so far
  std::vector<TacticDecision> out;
  auto decide = [&](const Value* v, const TensorSharding& s) {
    if (isFixed(plan, v)) return;
    plan.set(v, s, {OriginKind::Tactic, "tensor-parallel weight"});
    out.push_back({v, s});
  };
  int64_t n = plan.mesh().axisSize(axis);
  const std::string tactic = "tensor-parallel weight";
  ShardingPropagator propagator(f);
  const ShardingPlan base = trialBase(f, plan.mesh());
  for (const auto& op : f.ops()) {
    const Value* w = paramWeight(*op);
    if (!w || isFixed(plan, w)) continue;
    int64_t pieces = equalPieces(*op);
    if (w->type().shape[1] % (n * pieces)) continue;
    TensorSharding column = TensorSharding::replicated(2);
    column.dims[1] = {axis};
    column.setChunks(1, pieces);
    ShardingPlan trial = base;
    std::vector<const Value*> seeds{w};
    trial.set(w, column, {OriginKind::Tactic, tactic});
    const Op* add = nullptr;
    if (const Value* b = biasOf(*op, &add); b && !isFixed(plan, b)) {
      TensorSharding bs = TensorSharding::replicated(1);
      bs.dims[0] = {axis};
      bs.setChunks(0, pieces);
      trial.set(b, bs, {OriginKind::Tactic, tactic});
      seeds.push_back(b);
    }
    propagator.propagateFrom(trial, seeds);
    TensorSharding row = TensorSharding::replicated(2);
    row.dims[0] = {axis};
    for (auto it = std::next(f.position(op.get())); it != f.ops().end(); ++it) {
      const Value* w2 = paramWeight(**it);
      if (!w2 || !lastDimUses(trial.shardingOf((*it)->operand(0)), axis)) continue;
      // A row matmul fed by two column ones (a gated MLP: gate and up projections) takes
      // the second as well.
      bool rowAlready = isFixed(plan, w2) && plan.shardingOf(w2) == row;
      if (isFixed(plan, w2) && !rowAlready) continue;
      if (w2->type().shape[0] % n) break;
      decide(w, column);
      if (const Value* b = biasOf(*op, &add)) decide(b, trial.find(b)->sharding);
      decide(w2, row);
      break;
    }
  }
  return out;
}

void applyDecisions(ShardingPlan& plan, const std::vector<TacticDecision>& decisions,
                    const std::string& tactic) {
  for (const TacticDecision& d : decisions)
    fix(plan, d.value, d.sharding, tactic);
}

void applyMegatron(const Function& f, ShardingPlan& plan, const std::string& axis) {
  applyDecisions(plan, megatronDecisions(f, plan, axis), "tensor-parallel weight");
}

void replicateUnfixedParameters(const Function& f, ShardingPlan& plan) {
  replicateRest(f, plan, ArgKind::Param, "replicated parameters");
}

void applyOptimizerStateSharding(const Function& f, ShardingPlan& plan, const std::string& axis) {
  int64_t n = plan.mesh().axisSize(axis);
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    // Integer state (dropout's random-number state) is a few words, read whole.
    if (a->argKind() != ArgKind::OptState || !isFloat(a->type().dtype) || isFixed(plan, a))
      continue;
    TensorSharding s = TensorSharding::replicated(a->type().rank());
    for (size_t d = 0; d < s.dims.size(); ++d)
      if (a->type().shape[d] % n == 0) {
        s.dims[d] = {axis};
        break;
      }
    fix(plan, a, s, "optimizer-state sharding");
  }
}

} // namespace shardc
