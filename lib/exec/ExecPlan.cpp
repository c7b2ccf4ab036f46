#include "shardc/exec/ExecPlan.h"

#include "PlanUtil.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace shardc {

std::string_view valueHomeName(ValueHome h) {
  switch (h) {
  case ValueHome::Arena:
    return "arena";
  case ValueHome::Argument:
    return "argument";
  case ValueHome::View:
    return "view";
  case ValueHome::Constant:
    return "constant";
  case ValueHome::Fused:
    return "fused";
  case ValueHome::Result:
    return "result";
  }
  return "?";
}

std::vector<std::string> ExecPlan::referenceOps() const {
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const PlanStep& s : steps)
    if (s.reference && seen.insert(s.kernel).second) out.push_back(s.kernel);
  return out;
}

std::vector<int64_t> ExecPlan::stepOfOps(int64_t numOps) const {
  std::vector<int64_t> stepOf(static_cast<size_t>(numOps), -1);
  for (size_t k = 0; k < steps.size(); ++k)
    for (int64_t op : steps[k].ops)
      stepOf[static_cast<size_t>(op)] = static_cast<int64_t>(k);
  return stepOf;
}

int64_t ExecPlan::constantBytes(const Function& f) const {
  ValueNumbering num(f);
  std::vector<int64_t> source = constantSources(f);
  int64_t bytes = 0;
  for (size_t v = 0; v < source.size(); ++v)
    if (source[v] == static_cast<int64_t>(v)) bytes += num.type(source[v]).bytes();
  return bytes;
}

std::vector<int64_t> ExecPlan::constantSources(const Function& f) const {
  ValueNumbering num(f);
  std::vector<int64_t> source(values.size(), -1);
  auto constant = [&](int64_t id) {
    return id < static_cast<int64_t>(values.size()) &&
           values[static_cast<size_t>(id)].home == ValueHome::Constant;
  };
  std::vector<const Op*> firsts; // the first op of each distinct constant computation
  for (const Op* op : num.ops()) {
    int64_t r0 = num.id(op->result(0));
    if (!constant(r0)) continue;
    const Op* same = nullptr;
    for (const Op* o : firsts) {
      if (&o->def() != &op->def() || o->numOperands() != op->numOperands() ||
          o->numResults() != op->numResults() || !(o->attrs() == op->attrs()))
        continue;
      bool match = true;
      for (size_t i = 0; match && i < op->numOperands(); ++i)
        match = source[static_cast<size_t>(num.id(o->operand(i)))] ==
                source[static_cast<size_t>(num.id(op->operand(i)))];
      for (size_t r = 0; match && r < op->numResults(); ++r)
        match = o->result(r)->type() == op->result(r)->type();
      if (match) same = o;
    }
    if (!same) firsts.push_back(op);
    for (size_t r = 0; r < op->numResults(); ++r)
      source[static_cast<size_t>(num.id(op->result(r)))] = num.id((same ? same : op)->result(r));
  }
  return source;
}

namespace {

// A call runs alone, and a result its body updates in place lives in the caller's argument
// the body reads.
std::string checkCallStep(const ExecPlan& plan, const ValueNumbering& num, const PlanStep& st,
                          const Function& f) {
  const Op& anchor = *num.op(st.ops.back());
  bool calls = false;
  for (int64_t i : st.ops)
    calls = calls || num.op(i)->def().callsFunction;
  if (!calls) return "";
  if (st.ops.size() != 1 || st.kernel != anchor.name() || st.reference)
    return "runs a call together with other ops, or not as its own kernel";
  const Function* body = f.module() ? f.module()->callee(anchor) : nullptr;
  if (!body) return "calls a function the module lacks";
  for (size_t k = 0; k < body->results().size() && k < anchor.numResults(); ++k) {
    int64_t j = body->results()[k].tiedArg;
    if (j < 0) continue;
    const Value* arg = anchor.operand(static_cast<size_t>(j));
    const PlanValue& pv = plan.values[static_cast<size_t>(num.id(anchor.result(k)))];
    if (!arg->isArgument() || pv.home != ValueHome::Argument ||
        pv.base != static_cast<int64_t>(arg->index()))
      return "leaves result " + std::to_string(k) + ", which @" + body->name() +
             " updates in place, outside the argument it updates";
  }
  return "";
}

} // namespace

// Arena values whose bytes overlap must never be live at once: a value lives from the step
// that writes it to the last step that reads it (through views; a function result to the
// end), as the plan builder allocates. The one sharing it allows: an elementwise step writing
// a result over an input it reads element for element and that dies there, same size.
std::string checkArenaLiveness(const ExecPlan& plan, const ValueNumbering& num, const Function& f) {
  LiveRanges ranges = liveRanges(plan, num, f);
  const std::vector<int64_t>&def = ranges.def, &last = ranges.last;
  size_t n = plan.values.size();
  // Takes over u's bytes in the step that makes v: u dies there, read element for element.
  auto handedOver = [&](int64_t u, int64_t v) {
    auto su = static_cast<size_t>(u), sv = static_cast<size_t>(v);
    int64_t s = def[sv];
    return def[su] < s && last[su] == s && plan.values[su].offset == plan.values[sv].offset &&
           num.type(u).bytes() == num.type(v).bytes() &&
           readsAligned(plan, num, static_cast<size_t>(s), u);
  };
  struct Live {
    int64_t first, end, offset, bytes, id; // steps [first, end], bytes [offset, +bytes)
  };
  std::vector<Live> live;
  for (size_t v = 0; v < n; ++v)
    if (plan.values[v].home == ValueHome::Arena && def[v] >= 0 &&
        num.type(static_cast<int64_t>(v)).bytes() > 0)
      live.push_back({def[v], std::max(def[v], last[v]), plan.values[v].offset,
                      num.type(static_cast<int64_t>(v)).bytes(), static_cast<int64_t>(v)});
  // A sweep over steps: the values live at each one, compared with those that start there.
  std::sort(live.begin(), live.end(),
            [](const Live& a, const Live& b) { return a.first < b.first; });
  std::vector<const Live*> open;
  for (const Live& a : live) {
    std::erase_if(open, [&](const Live* b) { return b->end < a.first; });
    for (const Live* b : open)
      if (a.offset < b->offset + b->bytes && b->offset < a.offset + a.bytes &&
          !handedOver(b->id, a.id))
        return "values " + std::to_string(b->id) + " and " + std::to_string(a.id) +
               " share arena bytes while both are live";
    open.push_back(&a);
  }
  return "";
}

std::string checkPlan(const ExecPlan& plan, const Function& f) {
  ValueNumbering num(f);
  if (static_cast<int64_t>(plan.values.size()) != num.count())
    return "the plan has " + std::to_string(plan.values.size()) + " values, the program " +
           std::to_string(num.count());
  if (plan.arenaBytes < 0) return "the plan's arena size is negative";
  auto bad = [](int64_t v, const std::string& what) {
    return "value " + std::to_string(v) + ": " + what;
  };
  for (int64_t v = 0; v < num.count(); ++v) {
    const PlanValue& pv = plan.values[static_cast<size_t>(v)];
    int64_t bytes = num.type(v).bytes();
    bool isArg = v < static_cast<int64_t>(f.numArguments());
    if (isArg && (pv.home != ValueHome::Argument || pv.base != v))
      return bad(v, "an argument must live in its own buffer");
    switch (pv.home) {
    case ValueHome::Arena:
      if (pv.offset < 0 || pv.offset > plan.arenaBytes - bytes)
        return bad(v, "lies outside the arena");
      break;
    case ValueHome::Argument:
      if (pv.base < 0 || pv.base >= static_cast<int64_t>(f.numArguments()) ||
          f.argument(static_cast<size_t>(pv.base))->type().bytes() != bytes)
        return bad(v, "names no argument of its size");
      if (!isArg && f.argument(static_cast<size_t>(pv.base))->argKind() == ArgKind::Input)
        return bad(v, "would overwrite an input");
      break;
    case ValueHome::View: {
      if (pv.base < 0 || pv.base >= v) return bad(v, "views a value not defined before it");
      const PlanValue& b = plan.values[static_cast<size_t>(pv.base)];
      if (b.home == ValueHome::Fused) return bad(v, "views a value that is never stored");
      if (pv.offset < 0 || pv.offset > num.type(pv.base).bytes() - bytes)
        return bad(v, "lies outside the value it views");
      if (!num.value(v)->definingOp() ||
          num.value(v)->definingOp()->operand(0) != num.value(pv.base) ||
          viewOffsets(*num.value(v)->definingOp()).empty())
        return bad(v, "is not a view of its operand");
      break;
    }
    case ValueHome::Constant: {
      const Op* op = num.value(v)->definingOp();
      if (!op || op->def().communicates || op->def().callsFunction)
        return bad(v, "cannot be computed in advance");
      for (const Value* o : op->operands())
        if (plan.values[static_cast<size_t>(num.id(o))].home != ValueHome::Constant)
          return bad(v, "is marked constant but reads a value that is not");
      break;
    }
    case ValueHome::Fused:
      if (isArg || num.isResult(num.value(v))) return bad(v, "a result must be stored");
      break;
    case ValueHome::Result: {
      std::vector<const Value*> untied;
      for (const auto& r : f.results())
        if (r.tiedArg < 0) untied.push_back(r.value);
      if (isArg || pv.base < 0 || pv.base >= static_cast<int64_t>(untied.size()) ||
          untied[static_cast<size_t>(pv.base)] != num.value(v))
        return bad(v, "is not the output it names");
      break;
    }
    }
  }
  // Every op that is neither constant nor a view runs in exactly one step, after its operands.
  std::vector<int64_t> stepOf(num.ops().size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& st = plan.steps[s];
    if (st.ops.empty()) return "step " + std::to_string(s) + " runs no op";
    for (size_t k = 0; k < st.ops.size(); ++k) {
      int64_t i = st.ops[k];
      if (i < 0 || i >= static_cast<int64_t>(num.ops().size()))
        return "step " + std::to_string(s) + " names op " + std::to_string(i) +
               ", which the program lacks";
      if (k > 0 && i <= st.ops[k - 1])
        return "step " + std::to_string(s) + " lists its ops out of program order";
      if (stepOf[static_cast<size_t>(i)] >= 0)
        return "op " + std::to_string(i) + " runs in two steps";
      stepOf[static_cast<size_t>(i)] = static_cast<int64_t>(s);
    }
    // A kernel is named after one of its ops, or is the elementwise group's.
    bool named = st.kernel == "fused_elementwise";
    for (int64_t i : st.ops)
      named = named || num.op(i)->name() == st.kernel;
    if (!named)
      return "step " + std::to_string(s) + " names the kernel '" + st.kernel +
             "', which is not one of its ops'";
    // The last op's results are what the step makes for others: they are stored.
    const Op& anchor = *num.op(st.ops.back());
    if (st.reference == hasNativeKernel(st.kernel, anchor))
      return "step " + std::to_string(s) + " says its kernel '" + st.kernel + "' is " +
             (st.reference ? "not native, but it is" : "native, but it is not");
    if (std::string err = checkCallStep(plan, num, st, f); !err.empty())
      return "step " + std::to_string(s) + " " + err;
    for (size_t r = 0; r < anchor.numResults(); ++r)
      if (plan.values[static_cast<size_t>(num.id(anchor.result(r)))].home == ValueHome::Fused)
        return "step " + std::to_string(s) + " never stores its result";
  }
  for (size_t i = 0; i < num.ops().size(); ++i) {
    const Op& op = *num.op(static_cast<int64_t>(i));
    int64_t r0 = num.id(op.result(0));
    ValueHome h = plan.values[static_cast<size_t>(r0)].home;
    bool noStep = h == ValueHome::Constant || h == ValueHome::View;
    for (size_t r = 1; r < op.numResults(); ++r) {
      ValueHome hr = plan.values[static_cast<size_t>(num.id(op.result(r)))].home;
      if ((hr == ValueHome::Constant || hr == ValueHome::View) != noStep)
        return "op " + std::to_string(i) + " is partly computed in advance";
    }
    if (noStep != (stepOf[i] < 0))
      return "op " + std::to_string(i) +
             (noStep ? " is a view or constant but also runs" : " runs in no step");
  }
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int64_t i : plan.steps[s].ops) {
      const Op& op = *num.op(i);
      for (const Value* o : op.operands()) {
        int64_t id = viewRoot(plan, num.id(o));
        const PlanValue& pv = plan.values[static_cast<size_t>(id)];
        if (pv.home == ValueHome::Constant || id < static_cast<int64_t>(f.numArguments())) continue;
        int64_t w = stepOf[static_cast<size_t>(num.index(num.value(id)->definingOp()))];
        if (w > static_cast<int64_t>(s) ||
            (w != static_cast<int64_t>(s) && pv.home == ValueHome::Fused))
          return "step " + std::to_string(s) + " reads a value before it is made";
      }
    }
  }
  return checkArenaLiveness(plan, num, f);
}

std::string describePlan(const ExecPlan& plan, const Function& f) {
  ValueNumbering num(f);
  std::map<std::string, int> kernels;
  size_t fusedOps = 0, fusedSteps = 0;
  for (const PlanStep& s : plan.steps) {
    ++kernels[s.kernel + (s.reference ? " (reference)" : "")];
    if (s.ops.size() > 1) {
      ++fusedSteps;
      fusedOps += s.ops.size();
    }
  }
  std::map<ValueHome, int> homes;
  int inPlace = 0;
  for (size_t v = f.numArguments(); v < plan.values.size(); ++v) {
    ++homes[plan.values[v].home];
    inPlace += plan.values[v].home == ValueHome::Argument;
  }
  // The most arena bytes live at once: the arena's size less what its layout leaves unused.
  // A value written over an input that dies in the step making it (checkArenaLiveness's one
  // allowed overlap) counts from the step after.
  LiveRanges ranges = liveRanges(plan, num, f);
  std::set<std::tuple<int64_t, int64_t, int64_t>> dying; // (offset, bytes, last step)
  for (size_t v = 0; v < plan.values.size(); ++v)
    if (plan.values[v].home == ValueHome::Arena && ranges.def[v] >= 0)
      dying.emplace(plan.values[v].offset, num.type(static_cast<int64_t>(v)).bytes(),
                    ranges.last[v]);
  // Each value adds its bytes where it starts and takes them off after its last step.
  auto steps = static_cast<int64_t>(plan.steps.size());
  std::vector<int64_t> liveAt(static_cast<size_t>(steps) + 2, 0);
  for (size_t v = 0; v < plan.values.size(); ++v) {
    if (plan.values[v].home != ValueHome::Arena || ranges.def[v] < 0) continue;
    int64_t bytes = num.type(static_cast<int64_t>(v)).bytes(), first = ranges.def[v];
    int64_t end = std::min(std::max(first, ranges.last[v]), steps);
    if (ranges.last[v] > first && dying.count({plan.values[v].offset, bytes, first})) ++first;
    liveAt[static_cast<size_t>(std::min(first, steps))] += bytes;
    liveAt[static_cast<size_t>(end + 1)] -= bytes;
  }
  for (size_t k = 1; k < liveAt.size(); ++k)
    liveAt[k] += liveAt[k - 1];
  std::ostringstream os;
  os << plan.steps.size() << " kernels for " << num.ops().size() << " ops; " << fusedSteps
     << " fused kernels cover " << fusedOps << " ops\n";
  os << "arena " << plan.arenaBytes << " bytes (at most "
     << *std::max_element(liveAt.begin(), liveAt.end()) << " live at once); constants "
     << plan.constantBytes(f) << " bytes; values:";
  for (const auto& [h, n] : homes)
    os << " " << valueHomeName(h) << " " << n;
  os << " (" << inPlace << " written into their arguments)\n";
  os << "kernels:";
  for (const auto& [k, n] : kernels)
    os << " " << k << " x" << n;
  os << "\n";
  auto ref = plan.referenceOps();
  os << "reference kernels: ";
  if (ref.empty()) os << "none";
  for (size_t i = 0; i < ref.size(); ++i)
    os << (i ? ", " : "") << ref[i];
  os << "\n";
  return os.str();
}

} // namespace shardc
