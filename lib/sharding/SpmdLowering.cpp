#include "shardc/sharding/SpmdLowering.h"

#include "FactorProjection.h"
#include "Reshard.h"
#include "shardc/ir/Builder.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/sharding/Plan.h"
#include "shardc/support/Error.h"

#include <map>
#include <unordered_map>

namespace shardc {
namespace {

std::string valueName(const Value* v) {
  if (!v->name().empty()) return "%" + v->name();
  const Op* op = v->definingOp();
  return op ? "result " + std::to_string(v->index()) + " of " + op->name() + " at line " +
                  std::to_string(op->loc().line)
            : "argument " + std::to_string(v->index());
}

class Lowering {
public:
  Lowering(const Function& f, const std::vector<ShardingRule>& rules, const ShardingPlan& plan)
      : f_(f), rules_(rules), plan_(plan), mesh_(plan.mesh()) {}

  SpmdProgram run() {
    SpmdProgram p;
    p.mesh = mesh_;
    p.module = std::make_unique<Module>();
    p.module->filename = "<spmd>";
    Function* out = p.module->addFunction(f_.name(), f_.loc());
    Builder b(*out);
    b_ = &b;
    for (size_t i = 0; i < f_.numArguments(); ++i) {
      const Value* arg = f_.argument(i);
      TensorSharding s = checked(arg);
      TensorType local{arg->type().dtype, localShape(s, arg->type(), mesh_)};
      map_[arg] = {out->addArgument(arg->name(), local, arg->argKind()), s};
      p.argShardings.push_back(s);
    }
    size_t opIndex = 0;
    for (const auto& op : f_.ops())
      lowerOp(*op, rules_[opIndex++]);
    for (size_t i = 0; i < f_.results().size(); ++i) {
      const FuncResult& r = f_.results()[i];
      const ValueSharding* asked = plan_.findResult(f_, i);
      TensorSharding want = r.tiedArg >= 0 ? p.argShardings[static_cast<size_t>(r.tiedArg)]
                            : asked        ? asked->sharding
                                           : map_.at(r.value).sharding;
      if (asked && !(asked->sharding == want))
        throw Error("result '" + r.name + "' is asked to be " + asked->sharding.str() +
                    " but replaces argument %" +
                    f_.argument(static_cast<size_t>(r.tiedArg))->name() + ", which is " +
                    want.str());
      out->addResult(r.name, use(r.value, want), r.tiedArg);
      p.resultShardings.push_back(want);
    }
    return p;
  }

private:
  struct Local {
    Value* value;
    TensorSharding sharding;
  };

  // The plan's sharding of `v`, checked against its type and the mesh.
  TensorSharding checked(const Value* v) const {
    TensorSharding s = plan_.shardingOf(v);
    std::string err = checkSharding(s, v->type(), mesh_);
    if (err.empty() && !s.partial.empty())
      err = "sharding " + s.str() + " is partial; annotations name a layout, not a pending sum";
    if (!err.empty()) throw Error(valueName(v) + ": " + err);
    return s;
  }

  // `v`'s local piece laid out as `want`.
  Value* use(const Value* v, const TensorSharding& want) {
    const Local& l = map_.at(v);
    if (l.sharding == want) return l.value;
    auto key = std::make_pair(v, want.str());
    auto it = resharded_.find(key);
    if (it != resharded_.end()) return it->second;
    Value* r = emitReshard(*b_, mesh_, l.value, l.sharding, want);
    resharded_[key] = r;
    return r;
  }

  // How the op's factors are split: taken from the results' annotations first (the layout
  // the plan asked for), or from the operands first (no reshard before the op), whichever
  // sends fewer bytes. `wants`: the results' checked annotations.
  std::vector<FactorSharding> chooseFactors(const Op& op, const ShardingRule& rule,
                                            const std::vector<TensorSharding>& wants) {
    if (op.numOperands() == 0)
      return std::vector<FactorSharding>(rule.factorSizes.size()); // made whole
    std::vector<FactorSharding> resultsFirst = factorsInOrder(op, rule, wants, true);
    if (movesNothing(op, rule, wants, resultsFirst)) return resultsFirst; // nothing sends less
    std::vector<FactorSharding> operandsFirst = factorsInOrder(op, rule, wants, false);
    if (resultsFirst == operandsFirst) return resultsFirst;
    return reshardBytes(op, rule, wants, operandsFirst) <
                   reshardBytes(op, rule, wants, resultsFirst)
               ? operandsFirst
               : resultsFirst;
  }

  // Running `op` with `factors` needs no reshard: the operands are laid out so already, and
  // the results come out as annotated (not partial).
  bool movesNothing(const Op& op, const ShardingRule& rule,
                    const std::vector<TensorSharding>& wants,
                    const std::vector<FactorSharding>& factors) const {
    for (size_t f = 0; f < factors.size(); ++f)
      if (rule.factorKinds[f] == FactorKind::Reduction && !factors[f].axes.empty()) return false;
    for (size_t t = 0; t < op.numOperands(); ++t)
      if (!(projectToTensor(factors, rule.operands[t], rule, mesh_) ==
            map_.at(op.operand(t)).sharding))
        return false;
    for (size_t r = 0; r < op.numResults(); ++r)
      if (!(projectToTensor(factors, rule.results[r], rule, mesh_) == wants[r])) return false;
    return true;
  }

  // Bytes each device sends to run `op` with `factors`: operands into place, results to their
  // annotations. Measured by emitting the reshards into a scratch function.
  double reshardBytes(const Op& op, const ShardingRule& rule,
                      const std::vector<TensorSharding>& wants,
                      const std::vector<FactorSharding>& factors) {
    Function scratch("scratch");
    Builder b(scratch);
    auto add = [&](const TensorType& global, const TensorSharding& from, const TensorSharding& to) {
      if (from == to) return;
      Value* v =
          scratch.addArgument("t" + std::to_string(scratch.numArguments()),
                              {global.dtype, localShape(from, global, mesh_)}, ArgKind::Input);
      emitReshard(b, mesh_, v, from, to);
    };
    for (size_t t = 0; t < op.numOperands(); ++t)
      add(op.operand(t)->type(), map_.at(op.operand(t)).sharding,
          projectToTensor(factors, rule.operands[t], rule, mesh_));
    std::vector<std::string> partial = partialAxes(rule, factors);
    for (size_t r = 0; r < op.numResults(); ++r) {
      TensorSharding natural = projectToTensor(factors, rule.results[r], rule, mesh_);
      natural.partial = partial;
      add(op.result(r)->type(), natural, wants[r]);
    }
    double bytes = 0;
    for (const auto& o : scratch.ops()) {
      if (!o->def().communicates) continue;
      std::vector<TensorType> in{o->operand(0)->type()}, out{o->result(0)->type()};
      bytes += o->def().byteCount(OpSig{in, o->attrs()}, out);
    }
    return bytes;
  }

  std::vector<std::string> partialAxes(const ShardingRule& rule,
                                       const std::vector<FactorSharding>& factors) const {
    std::vector<std::string> partial;
    for (size_t f = 0; f < factors.size(); ++f)
      if (rule.factorKinds[f] == FactorKind::Reduction)
        partial.insert(partial.end(), factors[f].axes.begin(), factors[f].axes.end());
    return partial;
  }

  std::vector<FactorSharding> factorsInOrder(const Op& op, const ShardingRule& rule,
                                             const std::vector<TensorSharding>& wants,
                                             bool resultsFirst) {
    size_t nf = rule.factorSizes.size();
    std::vector<FactorSharding> factors(nf);
    std::vector<bool> decided(nf);
    std::vector<size_t> order;
    auto take = [&](const TensorSharding& s, const ShardingRule::Dims& dims) {
      auto proj = projectToFactors(s, dims, rule, mesh_);
      for (size_t f = 0; f < nf; ++f) {
        if (!proj[f] || decided[f]) continue;
        decided[f] = true;
        order.push_back(f);
        if (rule.factorKinds[f] != FactorKind::NeedReplication) factors[f] = *proj[f];
      }
    };
    auto takeResults = [&] {
      for (size_t r = 0; r < op.numResults(); ++r)
        take(wants[r], rule.results[r]);
    };
    if (resultsFirst) takeResults();
    for (size_t t = 0; t < op.numOperands(); ++t)
      take(map_.at(op.operand(t)).sharding, rule.operands[t]);
    if (!resultsFirst) takeResults();
    std::vector<std::string> used;
    for (size_t f : order) {
      auto& axes = factors[f].axes;
      for (size_t i = 0; i < axes.size(); ++i)
        if (std::find(used.begin(), used.end(), axes[i]) != used.end()) {
          axes.resize(i);
          break;
        }
      used.insert(used.end(), axes.begin(), axes.end());
    }
    // Every tensor must be able to hold its factors' layout; drop what one cannot.
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t t = 0; t < op.numOperands() + op.numResults(); ++t) {
        const auto& dims =
            t < op.numOperands() ? rule.operands[t] : rule.results[t - op.numOperands()];
        auto back =
            projectToFactors(projectToTensor(factors, dims, rule, mesh_), dims, rule, mesh_);
        for (size_t f = 0; f < nf; ++f) {
          if (!back[f] || factors[f].axes.empty()) continue;
          if (back[f]->axes.empty()) back[f]->chunks = 1;
          if (*back[f] != factors[f]) {
            factors[f] = *back[f];
            changed = true;
          }
        }
      }
    }
    for (FactorSharding& fs : factors)
      if (fs.axes.empty()) fs.chunks = 1;
    return factors;
  }

  void lowerOp(const Op& op, const ShardingRule& rule) {
    std::vector<TensorType> operandTypes, resultTypes;
    for (Value* v : op.operands())
      operandTypes.push_back(v->type());
    std::vector<TensorSharding> wants;
    for (size_t r = 0; r < op.numResults(); ++r) {
      resultTypes.push_back(op.result(r)->type());
      wants.push_back(checked(op.result(r)));
    }
    std::vector<FactorSharding> factors = chooseFactors(op, rule, wants);

    std::vector<Value*> operands;
    std::vector<TensorType> localOperandTypes;
    for (size_t t = 0; t < op.numOperands(); ++t) {
      operands.push_back(
          use(op.operand(t), projectToTensor(factors, rule.operands[t], rule, mesh_)));
      localOperandTypes.push_back(operands.back()->type());
    }
    std::vector<std::string> partial = partialAxes(rule, factors);
    int64_t reducedShards = mesh_.groupSize(partial);
    std::vector<TensorSharding> natural;
    std::vector<TensorType> localResultTypes;
    for (size_t r = 0; r < op.numResults(); ++r) {
      natural.push_back(projectToTensor(factors, rule.results[r], rule, mesh_));
      natural.back().partial = partial;
      localResultTypes.push_back(
          {resultTypes[r].dtype, localShape(natural.back(), resultTypes[r], mesh_)});
    }

    b_->setLoc(op.loc());
    Op* local = b_->create(op.name(), operands,
                           localAttrs(op, operandTypes, localOperandTypes, localResultTypes));
    for (size_t r = 0; r < op.numResults(); ++r) {
      if (local->result(r)->type() != localResultTypes[r])
        throw InternalError("lowering " + op.name() + " at line " + std::to_string(op.loc().line) +
                            " gave " + local->result(r)->type().str() + ", expected " +
                            localResultTypes[r].str());
      local->result(r)->setName(op.result(r)->name());
    }
    Value* first = local->result(0);
    if (op.name() == opname::kReduceMean && reducedShards > 1) {
      // Each device's mean covers 1/reducedShards of the elements.
      Tensor scale(TensorType{first->type().dtype, {}});
      scale.setDouble(0, 1.0 / static_cast<double>(reducedShards));
      Value* k = b_->value("constant", {},
                           {{"value", Attr(std::make_shared<const Tensor>(std::move(scale)))}});
      first = b_->value("mul", {first, k});
    }
    for (size_t r = 0; r < op.numResults(); ++r) {
      Value* v = r == 0 ? first : local->result(r);
      map_[op.result(r)] = {emitReshard(*b_, mesh_, v, natural[r], wants[r]), std::move(wants[r])};
    }
  }

  // Attributes that name global sizes, made local: a `*shape` equal to the result's shape,
  // a slice's full-range limits, a split's sizes.
  static AttrDict localAttrs(const Op& op, const std::vector<TensorType>& globalOperands,
                             const std::vector<TensorType>& localOperands,
                             const std::vector<TensorType>& localResults) {
    AttrDict attrs = op.attrs();
    for (const auto& [name, a] : op.attrs().entries())
      if (a.kind() == AttrKind::Ints && name.ends_with("shape") &&
          a.asInts() == op.result(0)->type().shape)
        attrs.set(name, localResults[0].shape);
    if (op.name() == opname::kSlice) {
      std::vector<int64_t> limit = attrs.getInts("limit");
      for (size_t d = 0; d < limit.size(); ++d)
        if (limit[d] == globalOperands[0].shape[d]) limit[d] = localOperands[0].shape[d];
      attrs.set("limit", limit);
    }
    if (op.name() == opname::kSplit) {
      auto axis =
          static_cast<size_t>(*normalizeAxis(attrs.getInt("axis"), globalOperands[0].rank()));
      std::vector<int64_t> sizes;
      for (const TensorType& t : localResults)
        sizes.push_back(t.shape[axis]);
      attrs.set("sizes", sizes);
    }
    return attrs;
  }

  const Function& f_;
  const std::vector<ShardingRule>& rules_;
  const ShardingPlan& plan_;
  const Mesh& mesh_;
  Builder* b_ = nullptr;
  std::unordered_map<const Value*, Local> map_;
  std::map<std::pair<const Value*, std::string>, Value*> resharded_;
};

} // namespace

struct SpmdLowerer::Impl {
  const Function& f;
  std::vector<ShardingRule> rules; // per op, in program order
};

SpmdLowerer::SpmdLowerer(const Function& f) : impl_(new Impl{f, {}}) {
  for (const auto& op : f.ops()) {
    std::vector<TensorType> operandTypes, resultTypes;
    for (Value* v : op->operands())
      operandTypes.push_back(v->type());
    for (size_t r = 0; r < op->numResults(); ++r)
      resultTypes.push_back(op->result(r)->type());
    impl_->rules.push_back(op->def().shardingRule(OpSig{operandTypes, op->attrs()}, resultTypes));
  }
}

SpmdLowerer::~SpmdLowerer() = default;

SpmdProgram SpmdLowerer::lower(const ShardingPlan& plan) {
  return Lowering(impl_->f, impl_->rules, plan).run();
}

SpmdProgram lowerToSpmd(const Function& f, const ShardingPlan& plan) {
  return SpmdLowerer(f).lower(plan);
}

} // namespace shardc
