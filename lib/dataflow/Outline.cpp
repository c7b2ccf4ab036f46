// outlineHypersections: each hypersection body becomes a function of the module and each of
// its instances one `call` (see Sections.h); sectionCalledBodies: the bodies of a program
// that has its calls already.
#include "SectionUtil.h"

#include "shardc/dataflow/Sections.h"
#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace shardc {
namespace {

// What one instance reads from outside (first-use order) and which of its values are read
// after it, as (op offset, result index).
struct InstanceIO {
  std::vector<Value*> outside;
  std::set<std::pair<int64_t, size_t>> escaping;
};

InstanceIO instanceIO(const std::vector<Op*>& ops, const std::unordered_map<const Op*, int64_t>& at,
                      const HyperInstance& h) {
  InstanceIO io;
  std::set<const Value*> seen;
  auto inside = [&](const Op* op) {
    if (!op) return false;
    int64_t i = at.at(op);
    return i >= h.firstOp && i < h.firstOp + h.numOps;
  };
  for (int64_t j = 0; j < h.numOps; ++j) {
    const Op& op = *ops[static_cast<size_t>(h.firstOp + j)];
    for (Value* v : op.operands())
      if (!inside(v->definingOp()) && seen.insert(v).second) io.outside.push_back(v);
    for (size_t r = 0; r < op.numResults(); ++r)
      for (const Use& u : op.result(r)->uses())
        if (!u.user || !inside(u.user)) io.escaping.emplace(j, r);
  }
  return io;
}

// Outside value `k` of every instance is the argument its result `r` updates in place: the
// result's only reader is a result of `f` tied to that argument, which nothing outside the
// instance reads.
bool updatedInPlace(const Function& f, const std::vector<Op*>& ops,
                    const std::unordered_map<const Op*, int64_t>& at,
                    const std::vector<HyperInstance>& mine, const std::vector<InstanceIO>& ios,
                    std::pair<int64_t, size_t> result, size_t k) {
  for (size_t n = 0; n < mine.size(); ++n) {
    const HyperInstance& h = mine[n];
    Value* arg = ios[n].outside[k];
    const Value* v = ops[static_cast<size_t>(h.firstOp + result.first)]->result(result.second);
    if (!arg->isArgument() || arg->argKind() == ArgKind::Input || v->uses().size() != 1 ||
        v->uses()[0].user ||
        f.results()[v->uses()[0].index].tiedArg != static_cast<int64_t>(arg->index()))
      return false;
    for (const Use& u : arg->uses()) {
      if (!u.user) return false;
      int64_t i = at.at(u.user);
      if (i >= h.firstOp + h.numOps) return false;
    }
  }
  return true;
}

} // namespace

std::vector<HypersectionBody> outlineHypersections(Function& f, const Target& t,
                                                   const std::vector<HyperInstance>& instances,
                                                   std::vector<Section>& sections) {
  if (instances.empty()) return {};
  Module* m = f.module();
  if (!m) throw InternalError("hypersections need the program's module");
  std::vector<Op*> ops;
  std::unordered_map<const Op*, int64_t> at;
  for (const auto& op : f.ops()) {
    at[op.get()] = static_cast<int64_t>(ops.size());
    ops.push_back(op.get());
  }
  std::map<int64_t, std::vector<size_t>> byBody; // body -> its instances (indices)
  for (size_t i = 0; i < instances.size(); ++i)
    byBody[instances[i].body].push_back(i);
  std::vector<InstanceIO> io;
  for (const HyperInstance& h : instances)
    io.push_back(instanceIO(ops, at, h));

  const OpDef* callDef = OpRegistry::get().lookup("call");
  std::vector<HypersectionBody> bodies;
  // Per instance: the body's results, as (op offset, result index), in result order.
  std::vector<std::vector<std::pair<int64_t, size_t>>> bodyResults;
  for (const auto& [b, members] : byBody) {
    const HyperInstance& first = instances[members.front()];
    std::set<std::pair<int64_t, size_t>> escaping;
    std::vector<HyperInstance> mine;
    std::vector<InstanceIO> mineIO;
    for (size_t i : members) {
      escaping.insert(io[i].escaping.begin(), io[i].escaping.end());
      mine.push_back(instances[i]);
      mineIO.push_back(io[i]);
    }
    std::string name = f.name() + "_hs" + std::to_string(b);
    for (int n = 2; m->findFunction(name); ++n)
      name = f.name() + "_hs" + std::to_string(b) + "_" + std::to_string(n);
    Function* body = m->addFunction(name);
    std::vector<std::pair<int64_t, size_t>> results(escaping.begin(), escaping.end());
    // Ties first: they decide the arguments' kinds.
    std::vector<int64_t> tie(results.size(), -1);
    std::vector<ArgKind> kinds(io[members.front()].outside.size(), ArgKind::Input);
    for (size_t r = 0; r < results.size(); ++r)
      for (size_t k = 0; k < kinds.size(); ++k)
        if (kinds[k] == ArgKind::Input && updatedInPlace(f, ops, at, mine, mineIO, results[r], k)) {
          tie[r] = static_cast<int64_t>(k);
          kinds[k] = io[members.front()].outside[k]->argKind();
          break;
        }
    std::unordered_map<const Value*, Value*> map;
    const std::vector<Value*>& outside = io[members.front()].outside;
    for (size_t k = 0; k < outside.size(); ++k)
      map[outside[k]] = body->addArgument("in" + std::to_string(k), outside[k]->type(), kinds[k]);
    Builder copier(*body);
    for (int64_t j = 0; j < first.numOps; ++j)
      copier.clone(*ops[static_cast<size_t>(first.firstOp + j)], map);
    for (size_t r = 0; r < results.size(); ++r)
      body->addResult("out" + std::to_string(r),
                      map.at(ops[static_cast<size_t>(first.firstOp + results[r].first)]->result(
                          results[r].second)),
                      tie[r]);
    HypersectionBody hb;
    hb.function = name;
    hb.phase = Phase::Forward;
    hb.instances = static_cast<int64_t>(members.size());
    for (const Section& s : sections)
      if (s.body == b && s.firstOp >= first.firstOp && s.firstOp < first.firstOp + first.numOps) {
        hb.phase = s.phase;
        Section c = s;
        c.firstOp -= first.firstOp;
        c.body = -1;
        hb.sections.push_back(std::move(c));
      }
    measureSections(*body, t, hb.sections);
    bodies.push_back(std::move(hb));
    bodyResults.push_back(std::move(results));
  }

  // Each instance becomes a call in its place; the caller's sections: one per call.
  std::vector<Section> callerSections;
  std::vector<int64_t> callSection(instances.size(), -1);
  size_t next = 0;
  int64_t removed = 0; // ops before the current position that calls replaced
  for (const Section& s : sections) {
    while (next < instances.size() &&
           instances[next].firstOp + instances[next].numOps <= s.firstOp) {
      removed += instances[next].numOps - 1;
      ++next;
    }
    bool inInstance = next < instances.size() && s.firstOp >= instances[next].firstOp;
    if (!inInstance) {
      Section c = s;
      c.firstOp -= removed;
      callerSections.push_back(std::move(c));
      continue;
    }
    if (callSection[next] < 0) {
      callSection[next] = static_cast<int64_t>(callerSections.size());
      Section c;
      c.phase = s.phase;
      c.firstOp = instances[next].firstOp - removed;
      c.numOps = 1;
      c.body = s.body;
      callerSections.push_back(std::move(c));
    }
  }
  std::map<int64_t, size_t> bodyIndex;
  for (const auto& [b, members] : byBody)
    bodyIndex.emplace(b, bodyIndex.size());
  // An instance may read what an earlier one made: its call's result now.
  std::unordered_map<const Value*, Value*> replaced;
  for (size_t i = 0; i < instances.size(); ++i) {
    const HyperInstance& h = instances[i];
    std::vector<Value*> operands = io[i].outside;
    for (Value*& v : operands)
      if (auto it = replaced.find(v); it != replaced.end()) v = it->second;
    size_t bi = bodyIndex.at(h.body);
    const HypersectionBody& hb = bodies[bi];
    const Function* body = m->findFunction(hb.function);
    std::vector<TensorType> types;
    for (const auto& r : body->results())
      types.push_back(r.value->type());
    AttrDict attrs;
    attrs.set("callee", hb.function);
    Op* firstOp = ops[static_cast<size_t>(h.firstOp)];
    Op* call = f.insertOp(f.position(firstOp), callDef, std::move(operands), types,
                          std::move(attrs), firstOp->loc());
    const auto& results = bodyResults[bi];
    for (size_t r = 0; r < results.size(); ++r) {
      Value* v = ops[static_cast<size_t>(h.firstOp + results[r].first)]->result(results[r].second);
      call->result(r)->setName(v->name());
      v->replaceAllUsesWith(call->result(r));
      replaced[v] = call->result(r);
    }
    for (int64_t j = h.numOps; j-- > 0;)
      f.eraseOp(ops[static_cast<size_t>(h.firstOp + j)]);
    callerSections[static_cast<size_t>(callSection[i])].body = static_cast<int64_t>(bi);
  }
  measureSections(f, t, callerSections);
  // A call's on-chip needs are its largest section's.
  for (Section& s : callerSections)
    if (s.body >= 0)
      for (const Section& in : bodies[static_cast<size_t>(s.body)].sections) {
        s.onChipBytes = std::max(s.onChipBytes, in.onChipBytes);
        s.computeUnits = std::max(s.computeUnits, in.computeUnits);
      }
  sections = std::move(callerSections);
  return bodies;
}

std::vector<HypersectionBody> sectionCalledBodies(const Function& f, const Target& t,
                                                  const SectionOptions& o,
                                                  std::vector<Section>& sections,
                                                  const SectionLog& log) {
  std::vector<HypersectionBody> bodies;
  std::vector<int64_t> sectionOf = sectionOfOps(sections, static_cast<int64_t>(f.ops().size()));
  std::vector<const Op*> ops;
  for (const auto& op : f.ops())
    ops.push_back(op.get());
  SectionOptions own = o;
  own.hypersections = false;
  for (const HyperInstance& h : callInstances(f)) {
    Section& at = sections[static_cast<size_t>(sectionOf[static_cast<size_t>(h.firstOp)])];
    std::string callee = ops[static_cast<size_t>(h.firstOp)]->attrs().getString("callee");
    if (h.body == static_cast<int64_t>(bodies.size())) {
      Function* fn = f.module() ? f.module()->findFunction(callee) : nullptr;
      if (!fn) throw InternalError("@" + callee + " is not a function of the module");
      HypersectionBody b;
      b.function = callee;
      b.phase = at.phase;
      // The body's phase is its calls': alone, a gradient body would read as forward.
      // The rules' matches are logged; the sections once their phase is the calls'.
      SectionLog rules;
      if (log)
        rules = [&](const std::string& line) {
          if (line.rfind("rule '", 0) == 0) log("@" + callee + ": " + line);
        };
      b.sections = formSections(*fn, t, own, rules);
      for (Section& s : b.sections)
        s.phase = b.phase;
      if (log) log("@" + callee + ": " + describeSections(b.sections));
      bodies.push_back(std::move(b));
    }
    HypersectionBody& b = bodies[static_cast<size_t>(h.body)];
    if (b.phase != at.phase)
      throw Error("@" + callee + " is called in the " + std::string(phaseName(b.phase)) +
                  " and the " + std::string(phaseName(at.phase)) +
                  " phases; a hypersection body has one phase (compile without "
                  "--enable-hypersection)");
    const Op& call = *ops[static_cast<size_t>(h.firstOp)];
    b.instances += runsOf(call);
    for (const Section& in : b.sections) {
      at.onChipBytes = std::max(at.onChipBytes, in.onChipBytes);
      at.computeUnits = std::max(at.computeUnits, in.computeUnits);
    }
  }
  return bodies;
}

} // namespace shardc
