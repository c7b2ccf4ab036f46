#include "shardc/exec/CompiledFunction.h"

#include "DnnlGlue.h"
#include "Kernel.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/support/HostMemory.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <sched.h>
#include <set>

namespace shardc {

CompiledFunction::CompiledFunction(const Function& f, ExecPlan plan, int threads,
                                   std::vector<BodyPlan> bodies)
    : CompiledFunction(f, std::move(plan), threads, BodyTag{}) {
  std::map<std::string, CompiledFunction*> byName;
  for (BodyPlan& b : bodies) {
    bodies_.push_back(std::unique_ptr<CompiledFunction>(
        new CompiledFunction(*b.function, std::move(b.plan), threads, BodyTag{})));
    bodies_.back()->bind(nullptr);
    byName[b.function->name()] = bodies_.back().get();
  }
  bind(&byName);
  for (const auto& r : f.results())
    if (r.tiedArg < 0) results_.emplace_back(r.value->type());
}

CompiledFunction::CompiledFunction(const Function& f, ExecPlan plan, int threads, BodyTag)
    : f_(f), plan_(std::move(plan)), threads_(std::max(1, threads)),
      dnnl_(std::make_unique<dnnl_glue::Context>()) {
  std::string err = checkPlan(plan_, f);
  if (!err.empty()) throw Error("the executable plan does not fit its program: " + err);
}

void CompiledFunction::bind(const std::map<std::string, CompiledFunction*>* bodies) {
  const Function& f = f_;
  ValueNumbering num(f);
  // Library kernels size their work split by the threads they see when they are made.
  omp_set_num_threads(threads_);
  // Constants first: kernels may look at them while binding. One computed like an earlier
  // one views its bytes.
  std::vector<int64_t> source = plan_.constantSources(f);
  for (const Op* op : num.ops()) {
    int64_t r0 = num.id(op->result(0));
    if (plan_.values[static_cast<size_t>(r0)].home != ValueHome::Constant) continue;
    if (source[static_cast<size_t>(r0)] != r0) {
      for (size_t r = 0; r < op->numResults(); ++r) {
        int64_t id = num.id(op->result(r));
        Tensor& held = constants_.at(source[static_cast<size_t>(id)]);
        // A keeper that owns nothing: constants_ holds the bytes as long as the views.
        std::shared_ptr<const void> unowned(std::shared_ptr<const void>(), held.data());
        constants_.emplace(id, Tensor(held.type(), held.data(), unowned));
      }
      continue;
    }
    std::vector<const Tensor*> in;
    for (const Value* v : op->operands())
      in.push_back(&constants_.at(num.id(v)));
    std::vector<Tensor> out = runRegistryKernel(*op, in);
    for (size_t r = 0; r < out.size(); ++r)
      constants_.emplace(num.id(op->result(r)), std::move(out[r]));
  }
  // A body's steps are labelled with its function: its step numbers are its own.
  std::string prefix = bodies ? "#" : "@" + f.name() + " #";
  for (const PlanStep& s : plan_.steps) {
    BindArgs a{s, num, plan_, dnnl_.get(), constants_, {}, bodies};
    // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict, a false positive) on chains
    // of std::string operator+.
    std::string label = prefix;
    label.append(std::to_string(kernels_.size())).append(" ").append(s.kernel).append(" [");
    for (int64_t i : s.ops) {
      if (!a.ops.empty()) label.append(" ");
      a.ops.push_back(num.op(i));
      label.append(num.op(i)->name());
    }
    label.append("] -> ").append(a.anchor().result(0)->type().str());
    labels_.push_back(std::move(label));
    anchors_.push_back(&a.anchor());
    kernels_.push_back(bindKernel(a));
    scratch_ = std::max<size_t>(scratch_, static_cast<size_t>(kernels_.back()->scratchBytes()));
  }
  // The steps run one after another: one scratch buffer serves them all, after the arena.
  int64_t need = plan_.arenaBytes + static_cast<int64_t>(scratch_);
  for (const auto& r : f.results())
    if (r.tiedArg < 0 && bodies) need += r.value->type().bytes();
  for (const auto& b : bodies_)
    need += static_cast<int64_t>(b->arena_.size() + b->staging_.size());
  if (need > hostMemoryBytes())
    throw Error("the executable plan needs " + std::to_string(need) +
                " bytes for its arena and outputs, more than this machine's " +
                std::to_string(hostMemoryBytes()) +
                ": recompile it partitioned over more devices or with a smaller batch");
  if (bodies) holdFixedSteps(num);
  arena_.assign(static_cast<size_t>(plan_.arenaBytes) + scratch_, 0);
  int64_t staged = 0;
  for (const auto& r : f.results()) {
    resultIds_.push_back(num.id(r.value));
    const PlanValue& pv = plan_.values[static_cast<size_t>(resultIds_.back())];
    if (r.tiedArg >= 0 && !(pv.home == ValueHome::Argument && pv.base == r.tiedArg))
      staged += r.value->type().bytes();
  }
  if (!bodies) staging_.assign(static_cast<size_t>(staged), 0);
}

void CompiledFunction::holdFixedSteps(const ValueNumbering& num) {
  const Function& f = f_;
  std::vector<bool> known(plan_.values.size(), false);
  for (size_t i = 0; i < f.numArguments(); ++i) {
    bool tied = std::any_of(f.results().begin(), f.results().end(), [&](const FuncResult& r) {
      return r.tiedArg == static_cast<int64_t>(i);
    });
    if (f.argument(i)->argKind() == ArgKind::Param && !tied) {
      known[i] = true;
      fixedArgs_.push_back(i);
    }
  }
  if (fixedArgs_.empty()) return;
  // Values in program order: a view is known when what it views is.
  for (size_t v = 0; v < plan_.values.size(); ++v) {
    const PlanValue& pv = plan_.values[v];
    known[v] = known[v] || pv.home == ValueHome::Constant ||
               (pv.home == ValueHome::View && known[static_cast<size_t>(pv.base)]);
  }
  held_.assign(plan_.steps.size(), false);
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Op& anchor = *anchors_[s];
    if (anchor.def().communicates || anchor.def().callsFunction ||
        anchor.name() == opname::kDropout)
      continue;
    std::set<const Value*> made;
    for (int64_t i : plan_.steps[s].ops)
      for (size_t r = 0; r < num.op(i)->numResults(); ++r)
        made.insert(num.op(i)->result(r));
    bool fixed = true;
    for (int64_t i : plan_.steps[s].ops)
      for (const Value* v : num.op(i)->operands())
        fixed = fixed && (made.count(v) || known[static_cast<size_t>(num.id(v))]);
    for (const Value* v : made)
      fixed = fixed && !num.isResult(v);
    if (!fixed) continue;
    held_[s] = true;
    for (const Value* v : made) {
      auto id = static_cast<size_t>(num.id(v));
      known[id] = true;
      if (plan_.values[id].home == ValueHome::Arena)
        heldBytes_[num.id(v)].assign(static_cast<size_t>(v->type().bytes()), 0);
    }
    // Views of a held value are known from here on.
    for (size_t v = 0; v < plan_.values.size(); ++v)
      if (plan_.values[v].home == ValueHome::View &&
          known[static_cast<size_t>(plan_.values[v].base)])
        known[v] = true;
  }
}

CompiledFunction::~CompiledFunction() = default;

template <typename ArgPtr, typename ResultPtr>
void CompiledFunction::homes(ExecContext& ctx, ArgPtr argPtr, ResultPtr resultPtr) {
  ctx.threads = threads_;
  ctx.dnnl = dnnl_.get();
  ctx.scratch = arena_.data() + plan_.arenaBytes;
  ctx.ptr.assign(plan_.values.size(), nullptr);
  for (size_t v = 0; v < plan_.values.size(); ++v) {
    const PlanValue& pv = plan_.values[v];
    switch (pv.home) {
    case ValueHome::Argument:
      ctx.ptr[v] = argPtr(static_cast<size_t>(pv.base));
      break;
    case ValueHome::Arena:
      if (auto h = heldBytes_.find(static_cast<int64_t>(v)); h != heldBytes_.end())
        ctx.ptr[v] = h->second.data();
      else
        ctx.ptr[v] = arena_.data() + pv.offset;
      break;
    case ValueHome::View:
      ctx.ptr[v] = ctx.ptr[static_cast<size_t>(pv.base)]
                       ? ctx.ptr[static_cast<size_t>(pv.base)] + pv.offset
                       : nullptr;
      break;
    case ValueHome::Constant:
      ctx.ptr[v] = constants_.at(static_cast<int64_t>(v)).data();
      break;
    case ValueHome::Fused:
      break;
    case ValueHome::Result:
      ctx.ptr[v] = resultPtr(static_cast<size_t>(pv.base));
      break;
    }
  }
}

void CompiledFunction::runStep(ExecContext& ctx, size_t s) {
  try {
    kernels_[s]->run(ctx);
  } catch (const Error& e) { // a data-dependent failure: an index out of range, x / 0
    if (anchors_[s]->def().callsFunction) throw;
    throw opError(*anchors_[s], e);
  }
}

void CompiledFunction::runSteps(ExecContext& ctx, int64_t opLimit) {
  omp_set_num_threads(threads_);
  // The held steps' results stand while every fixed parameter is in the buffer it was in when
  // they all last ran.
  std::vector<const uint8_t*> fixedNow;
  for (size_t a : fixedArgs_)
    fixedNow.push_back(ctx.ptr[a]);
  bool heldStand = !heldFrom_.empty() && heldFrom_ == fixedNow;
  for (size_t s = 0; s < kernels_.size(); ++s) {
    if (opLimit >= 0 && plan_.steps[s].ops.back() >= opLimit) continue;
    if (heldStand && held_[s]) continue;
    if (!timed_) {
      runStep(ctx, s);
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    runStep(ctx, s);
    stepSeconds_[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (opLimit < 0) heldFrom_ = std::move(fixedNow);
}

void CompiledFunction::timeSteps() {
  timed_ = true;
  stepSeconds_.assign(kernels_.size(), 0);
  for (const auto& b : bodies_)
    b->timeSteps();
}

void CompiledFunction::addTimes(ExecStats& into, bool indexed) const {
  if (indexed)
    into.secondsByStepIndex.resize(std::max(into.secondsByStepIndex.size(), stepSeconds_.size()));
  for (size_t s = 0; s < stepSeconds_.size(); ++s) {
    // A call's time is its body's kernels', counted by them.
    if (!anchors_[s]->def().callsFunction)
      into.secondsByKernel[plan_.steps[s].kernel] += stepSeconds_[s];
    into.secondsByStep[labels_[s]] += stepSeconds_[s];
    if (indexed) into.secondsByStepIndex[s] += stepSeconds_[s];
  }
  for (const auto& b : bodies_)
    b->addTimes(into, false);
}

void CompiledFunction::runCall(const std::vector<uint8_t*>& args,
                               const std::vector<uint8_t*>& results, Communicator* comm) {
  ExecContext ctx;
  ctx.comm = comm;
  homes(
      ctx, [&](size_t i) { return args[i]; },
      [&](size_t k) {
        size_t seen = 0;
        for (size_t i = 0; i < f_.results().size(); ++i)
          if (f_.results()[i].tiedArg < 0 && seen++ == k) return results[i];
        return static_cast<uint8_t*>(nullptr);
      });
  runSteps(ctx, -1);
  // Results made elsewhere (a view of an argument, a constant) are copied out; tied results
  // not written in place are staged first, so that every source is read before an argument
  // changes.
  uint8_t* stage = staging_.data();
  std::vector<std::pair<uint8_t*, const uint8_t*>> copies;
  for (size_t i = 0; i < f_.results().size(); ++i) {
    const FuncResult& r = f_.results()[i];
    int64_t id = resultIds_[i];
    const PlanValue& pv = plan_.values[static_cast<size_t>(id)];
    const uint8_t* src = ctx.ptr[static_cast<size_t>(id)];
    size_t bytes = static_cast<size_t>(r.value->type().bytes());
    if (r.tiedArg < 0) {
      if (pv.home != ValueHome::Result && bytes) std::memmove(results[i], src, bytes);
      continue;
    }
    if (pv.home == ValueHome::Argument && pv.base == r.tiedArg) continue;
    if (bytes) std::memcpy(stage, src, bytes);
    copies.emplace_back(args[static_cast<size_t>(r.tiedArg)], stage);
    stage += bytes;
  }
  for (size_t i = 0, c = 0; i < f_.results().size(); ++i) {
    const FuncResult& r = f_.results()[i];
    const PlanValue& pv = plan_.values[static_cast<size_t>(resultIds_[i])];
    if (r.tiedArg < 0 || (pv.home == ValueHome::Argument && pv.base == r.tiedArg)) continue;
    std::memcpy(copies[c].first, copies[c].second, static_cast<size_t>(r.value->type().bytes()));
    ++c;
  }
}

const std::vector<Tensor>& CompiledFunction::run(std::vector<Tensor>& args, Communicator* comm,
                                                 ExecStats* stats, int64_t opLimit) {
  if (args.size() != f_.numArguments())
    throw Error("@" + f_.name() + " takes " + std::to_string(f_.numArguments()) +
                " arguments, got " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].type() != f_.argument(i)->type())
      throw Error("argument '" + f_.argument(i)->name() + "' expects " +
                  f_.argument(i)->type().str() + ", got " + args[i].type().str());
  ExecContext ctx;
  ctx.comm = comm;
  homes(
      ctx, [&](size_t i) { return args[i].data(); }, [&](size_t k) { return results_[k].data(); });
  // A partial run keeps the arguments: those a step it runs writes in place are restored.
  std::vector<std::pair<size_t, Tensor>> kept;
  if (opLimit >= 0)
    for (size_t i = 0; i < f_.results().size(); ++i)
      if (int64_t tied = f_.results()[i].tiedArg; tied >= 0)
        kept.emplace_back(static_cast<size_t>(tied), args[static_cast<size_t>(tied)]);
  runSteps(ctx, opLimit);
  for (auto& [arg, t] : kept)
    if (t.byteSize()) std::memcpy(args[arg].data(), t.data(), t.byteSize());
  std::vector<std::pair<size_t, Tensor>> tiedCopies;
  size_t k = 0;
  for (size_t i = 0; i < f_.results().size(); ++i) {
    const FuncResult& r = f_.results()[i];
    int64_t id = resultIds_[i];
    const PlanValue& pv = plan_.values[static_cast<size_t>(id)];
    const uint8_t* src = ctx.ptr[static_cast<size_t>(id)];
    if (r.tiedArg < 0) {
      // Made elsewhere (a view, a constant, an argument, a result returned twice): copied.
      Tensor& out = results_[k];
      if (!(pv.home == ValueHome::Result && pv.base == static_cast<int64_t>(k)) && out.byteSize())
        std::memmove(out.data(), src, out.byteSize());
      ++k;
      continue;
    }
    if (opLimit >= 0 || (pv.home == ValueHome::Argument && pv.base == r.tiedArg)) continue;
    Tensor t(r.value->type());
    if (t.byteSize()) std::memcpy(t.data(), src, t.byteSize());
    tiedCopies.emplace_back(static_cast<size_t>(r.tiedArg), std::move(t));
  }
  // Every source was read before any argument is overwritten.
  for (auto& [arg, t] : tiedCopies)
    args[arg] = std::move(t);
  if (stats) {
    int64_t bytes = static_cast<int64_t>(arena_.size());
    for (const auto& b : bodies_)
      bytes += static_cast<int64_t>(b->arena_.size() + b->staging_.size());
    for (const auto& [id, t] : constants_)
      if (!t.kept()) bytes += static_cast<int64_t>(t.byteSize()); // a view of another
    for (const auto& [id, b] : heldBytes_)
      bytes += static_cast<int64_t>(b.size());
    for (const Tensor& a : args)
      bytes += static_cast<int64_t>(a.byteSize());
    for (const Tensor& r : results_)
      bytes += static_cast<int64_t>(r.byteSize());
    stats->peakBytes = std::max(stats->peakBytes, bytes);
  }
  return results_;
}

} // namespace shardc
