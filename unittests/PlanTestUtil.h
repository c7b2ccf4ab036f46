// What the executable plan's tests share: a planned text-IR function, patterned arguments,
// and the compiled run checked against the interpreter.
#pragma once

#include "TestUtil.h"

#include "shardc/exec/ExecPlan.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/ir/IR.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace shardc::testing {

struct Planned {
  std::unique_ptr<Module> m;
  ExecPlan plan;
  const Function& f() const { return *m->functions().front(); }
  // The plan's entry for the value named `name` (argument or op result).
  const PlanValue& value(const std::string& name) const {
    size_t id = 0;
    for (size_t i = 0; i < f().numArguments(); ++i, ++id)
      if (f().argument(i)->name() == name) return plan.values[id];
    for (const auto& op : f().ops())
      for (size_t r = 0; r < op->numResults(); ++r, ++id)
        if (op->result(r)->name() == name) return plan.values[id];
    ADD_FAILURE() << "no value " << name;
    return plan.values[0];
  }
  const PlanStep* stepOf(const std::string& kernel) const {
    for (const PlanStep& s : plan.steps)
      if (s.kernel == kernel) return &s;
    return nullptr;
  }
};

inline Planned plan(const std::string& ir) {
  Planned p{parseIR(ir), {}};
  if (p.m) p.plan = buildPlan(p.f());
  return p;
}

// Arguments of a small repeating pattern: element k of argument i is
// scale * ((k * step + i) % period) + offset.
inline std::vector<Tensor> patternedArgs(const Function& f, int64_t step, int64_t period,
                                         double scale, double offset) {
  std::vector<Tensor> args;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    Tensor t(f.argument(i)->type());
    for (int64_t k = 0; k < t.numel(); ++k)
      t.setDouble(k, scale * static_cast<double>((k * step + static_cast<int64_t>(i)) % period) +
                         offset);
    args.push_back(std::move(t));
  }
  return args;
}

// Every result of the compiled plan against the interpreter's (nearReference).
inline void expectCompiledNearReference(const Planned& p, const std::vector<Tensor>& args) {
  std::vector<Tensor> want = interpret(p.f(), args), mag = interpret(p.f(), absoluteValues(args));
  std::vector<Tensor> got = runCompiled(p.f(), args);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(nearReference(got[i], want[i], mag[i])) << p.f().results()[i].name;
}

// Every result of `p` run compiled on `threads` threads against the interpreter, on
// arguments that mix signs and magnitudes.
inline void expectInterpreterResults(const Planned& p, int threads) {
  std::vector<Tensor> args;
  for (size_t a = 0; a < p.f().numArguments(); ++a) {
    args.emplace_back(p.f().argument(a)->type());
    for (int64_t i = 0; i < args.back().numel(); ++i)
      args.back().setDouble(i, 0.05 * static_cast<double>((i * (3 + 2 * a)) % 41) - 1);
  }
  std::vector<Tensor> want = interpret(p.f(), args), bound = interpret(p.f(), absoluteValues(args));
  std::vector<Tensor> got = runCompiled(p.f(), args, nullptr, threads);
  for (size_t r = 0; r < want.size(); ++r)
    EXPECT_TRUE(nearReference(got[r], want[r], bound[r]))
        << p.f().results()[r].name << ", " << threads << " threads";
}

// The plan of `p` passes checkPlan with `steps` steps, and its results match the
// interpreter's on 1 and 2 threads.
inline void expectStepsMatchingTheInterpreter(const Planned& p, size_t steps) {
  ASSERT_TRUE(p.m);
  EXPECT_EQ(checkPlan(p.plan, p.f()), "");
  ASSERT_EQ(p.plan.steps.size(), steps) << describePlan(p.plan, p.f());
  for (int threads : {1, 2})
    expectInterpreterResults(p, threads);
}

} // namespace shardc::testing
