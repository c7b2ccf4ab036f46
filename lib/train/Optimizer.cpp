#include "Optimizer.h"

#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/train/TrainStep.h"

#include <map>
#include <unordered_map>

namespace shardc {
namespace {

// One call's parameters an update body may take: their indices in `params`, at the call's
// operand positions `positions`.
struct Instance {
  std::vector<size_t> positions, paramIndex;
};

} // namespace

Value* scalarOf(Builder& b, DType t, double v) {
  Tensor s(TensorType{t, {}});
  s.setDouble(0, v);
  return b.value("constant", {}, {{"value", TensorRef(std::make_shared<Tensor>(std::move(s)))}});
}

std::vector<std::string> stateSuffixes(const TrainOptions& o) {
  if (o.optimizer == "sgd")
    return o.momentum != 0 ? std::vector<std::string>{".momentum_buffer"}
                           : std::vector<std::string>{};
  return {".exp_avg", ".exp_avg_sq"};
}

ParamUpdate emitUpdate(Builder& b, const TrainOptions& o, Value* p, Value* g,
                       const std::vector<Value*>& state, const SharedTerms& shared) {
  const TensorType& t = p->type();
  auto c = [&](double v) { return scalarOf(b, t.dtype, v); };
  auto mul = [&](Value* x, Value* y) { return b.value("mul", {x, y}); };
  auto add = [&](Value* x, Value* y) { return b.value("add", {x, y}); };
  auto sub = [&](Value* x, Value* y) { return b.value("sub", {x, y}); };
  ParamUpdate u;
  if (o.optimizer == "sgd") {
    Value* d = o.weightDecay != 0 ? add(g, mul(p, c(o.weightDecay))) : g;
    if (o.momentum != 0) {
      Value* newBuf = add(mul(state[0], c(o.momentum)), d);
      u.state.push_back(newBuf);
      d = o.nesterov ? add(d, mul(newBuf, c(o.momentum))) : newBuf;
    }
    u.param = sub(p, mul(d, c(o.learningRate)));
    return u;
  }
  Value* base = p;
  if (o.optimizer == "adamw" && o.weightDecay != 0)
    base = mul(p, c(1 - o.learningRate * o.weightDecay));
  if (o.optimizer == "adam" && o.weightDecay != 0) g = add(g, mul(p, c(o.weightDecay)));
  Value* m2 = add(mul(state[0], c(o.beta1)), mul(g, c(1 - o.beta1)));
  Value* v2 = add(mul(state[1], c(o.beta2)), mul(mul(g, g), c(1 - o.beta2)));
  u.state = {m2, v2};
  Value* denom = add(b.value("div", {b.value("sqrt", {v2}), shared.bc2Sqrt}), c(o.epsilon));
  u.param = sub(base, mul(b.value("div", {m2, denom}), shared.biasStep));
  return u;
}

std::vector<std::optional<ParamUpdate>>
updateInBodies(Function& f, const TrainOptions& o, const CallVjps& calls,
               const std::vector<Value*>& params, const std::vector<Value*>& grads,
               const std::vector<std::vector<Value*>>& states, const SharedTerms& shared) {
  std::vector<std::optional<ParamUpdate>> out(params.size());
  std::unordered_map<const Value*, size_t> indexOf;
  for (size_t k = 0; k < params.size(); ++k)
    if (grads[k]) indexOf.emplace(params[k], k);
  // A parameter one call reads alone: its readers are that call (once) and backward calls.
  auto aloneIn = [&](const Value* p, const Op* call) {
    size_t reads = 0;
    for (const Use& u : p->uses()) {
      if (u.user == call) {
        ++reads;
        continue;
      }
      bool backward = false;
      if (u.user && u.user->def().callsFunction)
        for (const auto& [fwd, vjp] : calls)
          backward |= u.user->attrs().getString("callee") == vjp.backward;
      if (!backward) return false;
    }
    return reads == 1;
  };
  std::map<std::pair<std::string, std::vector<size_t>>, std::vector<Instance>> groups;
  for (const auto& op : f.ops()) {
    if (!op->def().callsFunction || !calls.count(op->attrs().getString("callee"))) continue;
    Instance in;
    for (size_t i = 0; i < op->numOperands(); ++i)
      if (auto it = indexOf.find(op->operand(i));
          it != indexOf.end() && aloneIn(op->operand(i), op.get())) {
        in.positions.push_back(i);
        in.paramIndex.push_back(it->second);
      }
    if (!in.positions.empty())
      groups[{op->attrs().getString("callee"), in.positions}].push_back(std::move(in));
  }
  Module* m = f.module();
  for (const auto& [key, instances] : groups) {
    if (instances.size() < 2) continue; // nothing to share
    const Instance& first = instances.front();
    // @<callee>_update(params, grads, state, shared terms) -> (new params, new state).
    std::string base =
        key.first.ends_with("_fwd") ? key.first.substr(0, key.first.size() - 4) : key.first;
    std::string name = base + "_update";
    for (int n = 2; m->findFunction(name); ++n)
      name = base + "_update_" + std::to_string(n);
    Function* body = m->addFunction(name);
    std::vector<Value*> p, g;
    std::vector<std::vector<Value*>> s;
    for (size_t j = 0; j < first.positions.size(); ++j) {
      size_t k = first.paramIndex[j];
      p.push_back(body->addArgument("p" + std::to_string(j), params[k]->type(), ArgKind::Param));
    }
    for (size_t j = 0; j < first.positions.size(); ++j)
      g.push_back(body->addArgument("g" + std::to_string(j), grads[first.paramIndex[j]]->type(),
                                    ArgKind::Input));
    for (size_t j = 0; j < first.positions.size(); ++j) {
      s.emplace_back();
      for (size_t q = 0; q < states[first.paramIndex[j]].size(); ++q)
        s.back().push_back(body->addArgument("s" + std::to_string(j) + "_" + std::to_string(q),
                                             states[first.paramIndex[j]][q]->type(),
                                             ArgKind::OptState));
    }
    SharedTerms inner;
    if (shared.biasStep) {
      inner.biasStep = body->addArgument("bias_step", shared.biasStep->type(), ArgKind::Input);
      inner.bc2Sqrt = body->addArgument("bc2_sqrt", shared.bc2Sqrt->type(), ArgKind::Input);
    }
    Builder bb(*body);
    std::vector<std::pair<Value*, int64_t>> results; // value, tied argument
    std::vector<std::vector<Value*>> newState;
    for (size_t j = 0; j < p.size(); ++j) {
      ParamUpdate u = emitUpdate(bb, o, p[j], g[j], s[j], inner);
      results.emplace_back(u.param, static_cast<int64_t>(p[j]->index()));
      newState.push_back(std::move(u.state));
    }
    for (size_t j = 0; j < p.size(); ++j)
      for (size_t q = 0; q < newState[j].size(); ++q)
        results.emplace_back(newState[j][q], static_cast<int64_t>(s[j][q]->index()));
    for (size_t r = 0; r < results.size(); ++r)
      body->addResult("out" + std::to_string(r), results[r].first, results[r].second);

    Builder fb(f);
    for (const Instance& in : instances) {
      std::vector<Value*> operands;
      for (size_t k : in.paramIndex)
        operands.push_back(params[k]);
      for (size_t k : in.paramIndex)
        operands.push_back(grads[k]);
      for (size_t k : in.paramIndex)
        operands.insert(operands.end(), states[k].begin(), states[k].end());
      if (shared.biasStep) {
        operands.push_back(shared.biasStep);
        operands.push_back(shared.bc2Sqrt);
      }
      Op* call = fb.call(*body, std::move(operands));
      size_t r = in.paramIndex.size();
      for (size_t j = 0; j < in.paramIndex.size(); ++j) {
        ParamUpdate u;
        u.param = call->result(j);
        for (size_t q = 0; q < states[in.paramIndex[j]].size(); ++q)
          u.state.push_back(call->result(r++));
        out[in.paramIndex[j]] = std::move(u);
      }
    }
  }
  return out;
}

} // namespace shardc
