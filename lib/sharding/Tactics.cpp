#include "shardc/sharding/Tactics.h"

#include "FactorProjection.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/ops/ShardingRule.h"
#include "shardc/sharding/Plan.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

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

// The parameter `v` is, directly or as one step's slice of a parameter stacked over a scan's
// steps (slice [i:i+1] of its first dimension, reshaped without it: an unrolled scan's
// reading of a stacked weight). `lead` is 1 for a stacked one.
const Value* paramOf(const Value* v, int64_t& lead) {
  lead = 0;
  if (const Op* c = v->definingOp(); c && c->name() == opname::kCast) v = c->operand(0);
  if (const Op* r = v->definingOp(); r && r->name() == opname::kReshape) {
    const Op* s = r->operand(0)->definingOp();
    const Value* p = s && s->name() == opname::kSlice ? s->operand(0) : nullptr;
    Shape step = v->type().shape;
    step.insert(step.begin(), 1);
    if (p && s->result(0)->type().shape == step && p->type().rank() == v->type().rank() + 1 &&
        Shape(p->type().shape.begin() + 1, p->type().shape.end()) == v->type().shape) {
      v = p;
      lead = 1;
    }
  }
  if (!v->isArgument() || v->argKind() != ArgKind::Param) return nullptr;
  return v;
}

// The 2-D parameter a matmul's weight (operand 1) is: the parameter itself ([in, out]) or a
// transpose of it ([out, in], as PyTorch's nn.Linear keeps its weight and its Gemm exports),
// either of them possibly one step's slice of a stacked parameter ([steps, in, out]).
struct Weight {
  const Value* param = nullptr;
  bool transposed = false;
  int64_t lead = 0; // 1: stacked over a scan's steps
  int64_t outDim() const { return lead + (transposed ? 0 : 1); }
  int64_t inDim() const { return lead + (transposed ? 1 : 0); }
};

Weight weightOf(const Op& op) {
  if (op.name() != opname::kMatmul) return {};
  const Value* w = op.operand(1);
  bool transposed = false;
  if (const Op* t = w->definingOp(); t && t->name() == opname::kTranspose &&
                                     t->attrs().getInts("perm") == std::vector<int64_t>{1, 0}) {
    w = t->operand(0);
    transposed = true;
  }
  if (w->type().rank() != 2) return {};
  int64_t lead = 0;
  const Value* p = paramOf(w, lead);
  if (!p) return {};
  return {p, transposed, lead};
}

// The bias added to a matmul's result: the 1-D parameter of its single `add` user (or one
// step's slice of a stacked one, `lead` 1).
const Value* biasOf(const Op& matmul, const Op** add, int64_t* lead = nullptr) {
  const Value* y = matmul.result(0);
  if (y->uses().size() != 1 || !y->uses()[0].user) return nullptr;
  const Op* user = y->uses()[0].user;
  if (user->name() != opname::kAdd) return nullptr;
  const Value* b = user->operand(y->uses()[0].index == 0 ? 1 : 0);
  if (b->type().rank() != 1) return nullptr;
  int64_t l = 0;
  b = paramOf(b, l);
  if (!b) return nullptr;
  *add = user;
  if (lead) *lead = l;
  return b;
}

// How many equal pieces the (biased) matmul output is split into along its last dimension.
int64_t equalPieces(const Op& matmul) {
  const Op* add = nullptr;
  biasOf(matmul, &add);
  const Value* y = add ? add->result(0) : matmul.result(0);
  if (y->uses().size() != 1 || !y->uses()[0].user) return 1;
  const Op* split = y->uses()[0].user;
  if (split->name() != opname::kSplit ||
      *normalizeAxis(split->attrs().getInt("axis"), y->type().rank()) != y->type().rank() - 1)
    return 1;
  const auto& sizes = split->attrs().getInts("sizes");
  for (int64_t s : sizes)
    if (s != sizes[0]) return 1;
  return static_cast<int64_t>(sizes.size());
}

bool usesAxis(const TensorSharding& s, const std::string& axis) {
  for (const auto& axes : s.dims)
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) return true;
  return false;
}

// Whether `op` must communicate a split over `axis` that `trial` gives its operands: an
// operand dimension on the axis holds a reduction factor (a layer norm's statistics) or one
// that must be whole (a softmax's axis).
bool communicatesSplit(const Op& op, const ShardingPlan& trial, const std::string& axis) {
  std::vector<TensorType> operandTypes, resultTypes;
  for (Value* v : op.operands())
    operandTypes.push_back(v->type());
  for (size_t r = 0; r < op.numResults(); ++r)
    resultTypes.push_back(op.result(r)->type());
  std::optional<ShardingRule> rule;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const ValueSharding* vs = trial.find(op.operand(i));
    if (!vs || !usesAxis(vs->sharding, axis)) continue;
    if (!rule) rule = op.def().shardingRule(OpSig{operandTypes, op.attrs()}, resultTypes);
    // Per factor, as the propagator reads it: a chunked split (q|k|v) shards the factor
    // within each piece, not the pieces.
    auto factors = projectToFactors(vs->sharding, rule->operands[i], *rule, trial.mesh());
    for (size_t f = 0; f < factors.size(); ++f)
      if (factors[f] && rule->factorKinds[f] != FactorKind::PassThrough &&
          std::find(factors[f]->axes.begin(), factors[f]->axes.end(), axis) !=
              factors[f]->axes.end())
        return true;
  }
  return false;
}

bool lastDimUses(const TensorSharding& s, const std::string& axis) {
  if (s.dims.empty()) return false;
  const auto& last = s.dims.back();
  return std::find(last.begin(), last.end(), axis) != last.end();
}

// A parameter's use, or where a stacked parameter is read: through each step's slice and
// reshape.
std::vector<Use> readsOf(const Use& use) {
  // A cast's readers (the bf16 copy of an f32 master weight) read the parameter.
  if (use.user && use.user->name() == opname::kCast)
    return {use.user->result(0)->uses().begin(), use.user->result(0)->uses().end()};
  std::vector<Use> reads{use};
  if (use.user && use.user->name() == opname::kSlice && use.user->result(0)->uses().size() == 1) {
    const Op* reshape = use.user->result(0)->uses()[0].user;
    if (reshape && reshape->name() == opname::kReshape)
      reads.assign(reshape->result(0)->uses().begin(), reshape->result(0)->uses().end());
  }
  return reads;
}

// A product of two activations of rank 3 or more (attention's scores or context).
bool isBatchedProduct(const Op* op) {
  return op && op->name() == opname::kMatmul && op->operand(0)->type().rank() >= 3 &&
         !op->operand(0)->isArgument() && !op->operand(1)->isArgument();
}

// Whether `v` reaches a batched product through at most `depth` transposes, scalings
// (a pre-scaled query) or reshapes.
bool feedsBatchedProduct(const Value* v, int depth) {
  for (const Use& u : v->uses()) {
    if (!u.user) continue;
    if (isBatchedProduct(u.user)) return true;
    const std::string& n = u.user->name();
    if (depth > 0 &&
        (n == opname::kTranspose || n == opname::kMul || n == opname::kDiv ||
         n == opname::kReshape) &&
        feedsBatchedProduct(u.user->result(0), depth - 1))
      return true;
  }
  return false;
}

// The last-dimension width of `a` over that of `b`, when `b`'s divides it into more than one.
int64_t widthRatio(const Value* a, const Value* b) {
  int64_t wa = a->type().rank() ? a->type().shape.back() : 0;
  int64_t wb = b->type().rank() ? b->type().shape.back() : 0;
  return wa > wb && wb > 0 && wa % wb == 0 ? wa / wb : 0;
}

// Heads of a projection's (biased) result `y`: the reshape, after any split or slice of its
// pieces, that cuts a piece's width into heads on their way to the scores or the context.
// Pieces of unequal widths (grouped-query attention's q|k|v) give pieces 0: no split of the
// whole dimension keeps every head whole.
HeadSplit headsBelow(const Value* y) {
  std::vector<const Value*> work{y};
  bool unequal = false;
  for (int depth = 0; depth < 3 && !work.empty(); ++depth) {
    std::vector<const Value*> next;
    for (const Value* v : work)
      for (const Use& u : v->uses()) {
        if (!u.user) continue;
        const std::string& n = u.user->name();
        int64_t heads = widthRatio(u.user->operand(0), u.user->result(0));
        if (n == opname::kReshape && heads > 1 && feedsBatchedProduct(u.user->result(0), 2)) {
          int64_t piece = v->type().shape.back();
          int64_t whole = y->type().shape.back();
          return {-1, heads, unequal || whole % piece ? 0 : whole / piece};
        }
        if (n != opname::kSplit && n != opname::kSlice) continue;
        for (size_t r = 0; r < u.user->numResults(); ++r) {
          const Value* piece = u.user->result(r);
          unequal |= !next.empty() && piece->type() != next.front()->type();
          next.push_back(piece);
        }
      }
    work = std::move(next);
  }
  return {};
}

// Heads of an output projection's input `x`: the heads merged by a reshape of the context
// (through transposes).
int64_t headsAbove(const Value* x) {
  const Op* r = x->definingOp();
  if (!r || r->name() != opname::kReshape) return 0;
  int64_t heads = widthRatio(r->result(0), r->operand(0));
  const Op* p = r->operand(0)->definingOp();
  for (int depth = 0; depth < 2 && p && p->name() == opname::kTranspose; ++depth)
    p = p->operand(0)->definingOp();
  return heads > 1 && isBatchedProduct(p) ? heads : 0;
}

} // namespace

HeadSplit attentionHeads(const Value* param) {
  if (!param->isArgument() || param->argKind() != ArgKind::Param) return {};
  for (const Use& use : param->uses())
    for (const Use& u : readsOf(use)) {
      if (!u.user) continue;
      const Op* matmul = u.user;
      if (matmul->name() == opname::kTranspose && matmul->result(0)->uses().size() == 1)
        matmul = matmul->result(0)->uses()[0].user;
      if (Weight w = matmul ? weightOf(*matmul) : Weight{}; w.param == param) {
        const Op* add = nullptr;
        biasOf(*matmul, &add);
        HeadSplit h = headsBelow(add ? add->result(0) : matmul->result(0));
        if (h.heads) return {w.outDim(), h.heads, h.pieces};
        if (int64_t heads = headsAbove(matmul->operand(0))) return {w.inDim(), heads, 1};
        continue;
      }
      if (u.user->name() != opname::kAdd || u.user->operand(u.index)->type().rank() != 1) continue;
      const Op* producer = u.user->operand(u.index == 0 ? 1 : 0)->definingOp();
      const Op* add = nullptr;
      int64_t lead = 0;
      if (producer && weightOf(*producer).param && biasOf(*producer, &add, &lead) == param)
        if (HeadSplit h = headsBelow(add->result(0)); h.heads) return {lead, h.heads, h.pieces};
    }
  return {};
}

OutputSplit fusedOutputSplit(const Value* param) {
  if (!param->isArgument() || param->argKind() != ArgKind::Param) return {};
  for (const Use& use : param->uses()) {
    if (!use.user) continue;
    for (const Use& u : readsOf(use)) {
      if (!u.user) continue;
      // The weight of a matmul, directly or through its transpose.
      const Op* matmul = u.user;
      if (matmul->name() == opname::kTranspose && matmul->result(0)->uses().size() == 1)
        matmul = matmul->result(0)->uses()[0].user;
      if (matmul) {
        Weight w = weightOf(*matmul);
        if (w.param == param) return {w.outDim(), equalPieces(*matmul)};
      }
      if (u.user->name() != opname::kAdd || u.user->operand(u.index)->type().rank() != 1) continue;
      const Value* other = u.user->operand(u.index == 0 ? 1 : 0);
      const Op* producer = other->definingOp();
      const Op* add = nullptr;
      int64_t lead = 0;
      if (producer && weightOf(*producer).param && biasOf(*producer, &add, &lead) == param)
        return {lead, equalPieces(*producer)};
    }
  }
  return {};
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
  // A weight's first use decides for all of them: each use would propagate the same trial, and
  // a repeat of the layer (a micro-batch, a shared layer) finds the same pair after it.
  std::unordered_set<const Value*> tried;
  for (const auto& op : f.ops()) {
    Weight w = weightOf(*op);
    if (!w.param || isFixed(plan, w.param) || !tried.insert(w.param).second) continue;
    int64_t pieces = equalPieces(*op);
    if (w.param->type().shape[static_cast<size_t>(w.outDim())] % (n * pieces)) continue;
    TensorSharding column = TensorSharding::replicated(w.param->type().rank());
    column.dims[static_cast<size_t>(w.outDim())] = {axis};
    column.setChunks(w.outDim(), pieces);
    ShardingPlan trial = base;
    std::vector<const Value*> seeds{w.param};
    trial.set(w.param, column, {OriginKind::Tactic, tactic});
    const Op* add = nullptr;
    int64_t lead = 0;
    if (const Value* b = biasOf(*op, &add, &lead); b && !isFixed(plan, b)) {
      TensorSharding bs = TensorSharding::replicated(b->type().rank());
      bs.dims[static_cast<size_t>(lead)] = {axis};
      bs.setChunks(lead, pieces);
      trial.set(b, bs, {OriginKind::Tactic, tactic});
      seeds.push_back(b);
    }
    propagator.propagateFrom(trial, seeds);
    // The first matmul after it that reads the split as its contraction takes the row
    // split, unless an op between them must communicate the split (the pair would then
    // cost more than the two all-reduces it saves: a column projection before a layer norm
    // is no Megatron pair).
    for (auto it = std::next(f.position(op.get())); it != f.ops().end(); ++it) {
      Weight w2 = weightOf(**it);
      if (!w2.param || !lastDimUses(trial.shardingOf((*it)->operand(0)), axis)) {
        if (communicatesSplit(**it, trial, axis)) break;
        continue;
      }
      TensorSharding row = TensorSharding::replicated(w2.param->type().rank());
      row.dims[static_cast<size_t>(w2.inDim())] = {axis};
      // A row matmul fed by two column ones (a gated MLP: gate and up projections) takes
      // the second as well.
      bool rowAlready = isFixed(plan, w2.param) && plan.shardingOf(w2.param) == row;
      if (isFixed(plan, w2.param) && !rowAlready) continue;
      if (w2.param->type().shape[static_cast<size_t>(w2.inDim())] % n) break;
      decide(w.param, column);
      if (const Value* b = biasOf(*op, &add)) decide(b, trial.find(b)->sharding);
      decide(w2.param, row);
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
