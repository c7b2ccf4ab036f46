#include "shardc/train/TrainStep.h"

#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"
#include "shardc/train/Autodiff.h"

#include "MicroBatches.h"
#include "Optimizer.h"

#include <cmath>
#include <fnmatch.h>

#include <set>
#include <sstream>

namespace shardc {
namespace {

std::vector<int64_t> allAxes(int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    axes.push_back(i);
  return axes;
}

// Adds the loss the user asked for on top of `y` (the first output); returns the loss value.
Value* addLoss(Function& f, Builder& b, const TrainOptions& o, Value* y) {
  const TensorType& t = y->type();
  if (!isFloat(t.dtype)) throw Error("--loss needs a floating-point first output, got " + t.str());
  if (f.findArgument(o.labels))
    throw Error("--labels " + o.labels + ": the model already has an argument of that name");
  if (o.loss == "mse") {
    Value* target = f.addArgument(o.labels, t, ArgKind::Input);
    Value* d = b.value("sub", {y, target});
    return b.value("reduce_mean", {b.value("mul", {d, d})}, {{"axes", allAxes(t.rank())}});
  }
  if (o.loss != "cross-entropy")
    throw Error("unknown --loss '" + o.loss + "' (use cross-entropy or mse)");
  if (t.rank() < 2)
    throw Error("--loss cross-entropy needs logits of rank >= 2 ([N, C]), got " + t.str());
  // Mean over samples of -log_softmax(logits)[label], classes on the last axis.
  Shape labelShape(t.shape.begin(), t.shape.end() - 1);
  Value* labels = f.addArgument(o.labels, TensorType{DType::I64, labelShape}, ArgKind::Input);
  int64_t last = t.rank() - 1;
  Value* logp = b.value("log_softmax", {y}, {{"axis", last}});
  Shape kept = labelShape;
  kept.push_back(1);
  Value* classes = b.value("iota", {}, {{"shape", t.shape}, {"axis", last}, {"dtype", DType::I64}});
  Value* hit = b.value("compare", {classes, b.value("reshape", {labels}, {{"shape", kept}})},
                       {{"direction", "eq"}});
  Value* picked =
      b.value("reduce_sum", {b.value("mul", {logp, b.value("cast", {hit}, {{"to", t.dtype}})})},
              {{"axes", std::vector<int64_t>{last}}});
  return b.value("neg", {b.value("reduce_mean", {picked}, {{"axes", allAxes(last)}})});
}

bool frozen(const std::string& name, const std::vector<std::string>& patterns) {
  for (const auto& p : patterns)
    if (fnmatch(p.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

struct Update {
  Value* param;
  Value* value;
};

} // namespace

TrainStepInfo buildTrainStep(Function& f, const TrainOptions& o) {
  if (o.optimizer != "sgd" && o.optimizer != "adam" && o.optimizer != "adamw")
    throw Error("unknown --optimizer '" + o.optimizer + "' (use sgd, adam or adamw)");
  // PyTorch's own ranges, said with the flags' names; NaN fails every comparison.
  auto require = [](bool ok, const std::string& what, double v) {
    if (ok && std::isfinite(v)) return;
    std::ostringstream shown;
    shown << v;
    throw Error(what + ", got " + shown.str());
  };
  require(o.learningRate > 0, "--learning-rate must be a positive number", o.learningRate);
  require(o.momentum >= 0 && o.momentum <= 1, "--momentum must lie in [0, 1]", o.momentum);
  require(o.weightDecay >= 0, "--weight-decay must be a non-negative number", o.weightDecay);
  require(o.beta1 >= 0 && o.beta1 < 1, "--beta1 must lie in [0, 1)", o.beta1);
  require(o.beta2 >= 0 && o.beta2 < 1, "--beta2 must lie in [0, 1)", o.beta2);
  require(o.epsilon > 0, "--eps must be a positive number", o.epsilon);
  if (o.nesterov && o.momentum == 0) throw Error("--nesterov needs a --momentum above 0");
  if (o.microBatches < 1)
    throw Error("--micro-batches must be at least 1, got " + std::to_string(o.microBatches));
  TrainStepInfo info;
  std::vector<Value*> params;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    Value* a = f.argument(i);
    if (a->argKind() != ArgKind::Param || !isFloat(a->type().dtype)) continue;
    if (frozen(a->name(), o.freeze))
      info.untrained.push_back(a->name());
    else
      params.push_back(a);
  }
  for (const auto& pattern : o.freeze) {
    bool matches = false;
    for (size_t i = 0; i < f.numArguments() && !matches; ++i)
      matches =
          f.argument(i)->argKind() == ArgKind::Param && frozen(f.argument(i)->name(), {pattern});
    if (!matches) throw Error("--freeze '" + pattern + "' matches no parameter of the model");
  }
  // Before the outputs are read: it replaces the calls whose results they may be.
  CallVjps calls = splitCallsForGradients(f, params);
  Builder b(f);
  Value* loss;
  // Results tied to arguments are the model's own state updates (running statistics, the
  // random-number state): carried into the step as they are.
  std::vector<FuncResult> outputs, carried;
  for (const FuncResult& r : f.results())
    (r.tiedArg >= 0 ? carried : outputs).push_back(r);
  if (outputs.empty()) throw Error("the model has no output besides its state updates");
  if (o.loss.empty()) {
    std::string shown;
    for (const auto& r : outputs)
      shown += (shown.empty() ? "" : ", ") + r.name + ": " + r.value->type().str();
    const TensorType& t = outputs[0].value->type();
    if (outputs.size() != 1 || t.rank() != 0 || !isFloat(t.dtype))
      throw Error("the model's outputs (" + shown +
                  ") are not a single scalar loss; add a loss with "
                  "--loss cross-entropy|mse and name its labels input with --labels NAME");
    loss = outputs[0].value;
    info.lossName = outputs[0].name;
  } else {
    loss = addLoss(f, b, o, outputs[0].value);
    info.lossName = "loss";
    for (const auto& r : outputs)
      if (r.name == "loss")
        throw Error("the model already has an output named 'loss'; it cannot take --loss");
  }

  std::vector<Value*> grads = buildGradients(f, loss, params, &calls);
  if (o.microBatches > 1) {
    StepValues step{loss, grads, {}, carried};
    for (const FuncResult& r : outputs)
      if (r.value != loss) step.outputs.push_back(r);
    accumulateMicroBatches(f, o.microBatches, step);
    loss = step.loss;
    grads = step.grads;
    outputs = step.outputs;
    carried = step.carried;
  }

  std::vector<Update> paramUpdates, stateUpdates;
  auto addState = [&](const std::string& name, const TensorType& t) {
    if (f.findArgument(name))
      throw Error("cannot add optimizer state '" + name + "': the name is taken");
    if (o.initialState) info.optimizerState[name] = Tensor(t);
    return f.addArgument(name, t, ArgKind::OptState);
  };
  // Each parameter's state, and Adam's step count shared by all of them.
  std::vector<std::vector<Value*>> states(params.size());
  SharedTerms shared;
  for (size_t k = 0; k < params.size(); ++k) {
    Value* p = params[k];
    if (!grads[k]) {
      info.untrained.push_back(p->name() + " (no gradient path to the loss)");
      continue;
    }
    info.trained.push_back(p->name());
    if (o.optimizer != "sgd" && !shared.biasStep) {
      Value* step = addState("step", TensorType{DType::F32, {}});
      Value* next = b.value("add", {step, scalarOf(b, DType::F32, 1)});
      stateUpdates.push_back({step, next});
      // Bias corrections in double precision, as PyTorch computes them in Python floats.
      Value* s64 = b.value("cast", {next}, {{"to", DType::F64}});
      auto bc = [&](double beta) {
        return b.value("sub", {scalarOf(b, DType::F64, 1),
                               b.value("pow", {scalarOf(b, DType::F64, beta), s64})});
      };
      DType t = p->type().dtype;
      shared.biasStep =
          b.value("cast", {b.value("div", {scalarOf(b, DType::F64, o.learningRate), bc(o.beta1)})},
                  {{"to", t}});
      shared.bc2Sqrt = b.value("cast", {b.value("sqrt", {bc(o.beta2)})}, {{"to", t}});
    }
    for (const std::string& suffix : stateSuffixes(o))
      states[k].push_back(addState(p->name() + suffix, p->type()));
  }
  std::vector<std::optional<ParamUpdate>> updates =
      updateInBodies(f, o, calls, params, grads, states, shared);
  for (size_t k = 0; k < params.size(); ++k) {
    if (!grads[k]) continue;
    ParamUpdate u =
        updates[k] ? *updates[k] : emitUpdate(b, o, params[k], grads[k], states[k], shared);
    paramUpdates.push_back({params[k], u.param});
    for (size_t q = 0; q < u.state.size(); ++q)
      stateUpdates.push_back({states[k][q], u.state[q]});
  }
  if (info.trained.empty())
    throw Error("no parameter has a gradient path to the loss: nothing to train");

  f.clearResults();
  std::set<std::string> names;
  auto result = [&](const std::string& name, Value* v, int64_t tied) {
    if (!names.insert(name).second)
      throw Error("two outputs of the training step would be named '" + name + "'");
    f.addResult(name, v, tied);
  };
  result(info.lossName, loss, -1);
  for (const auto& r : outputs)
    if (r.value != loss) result(r.name, r.value, -1);
  for (const Update& u : paramUpdates)
    result(u.param->name(), u.value, static_cast<int64_t>(u.param->index()));
  for (const Update& u : stateUpdates)
    result(u.param->name(), u.value, static_cast<int64_t>(u.param->index()));
  for (const FuncResult& r : carried)
    result(r.name, r.value, r.tiedArg);
  return info;
}

} // namespace shardc
