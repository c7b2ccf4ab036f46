#include "KernelDump.h"

#include "shardc/dataflow/Sections.h"
#include "shardc/exec/ExecPlan.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Printer.h"

#include <sstream>
#include <unordered_map>

namespace shardc {
namespace {

// The printed function's op lines, in program order (printFunction writes one per op after
// the signature).
std::vector<std::string> opLines(const Function& f, const PrintOptions& options) {
  std::istringstream text(printFunction(f, options));
  std::vector<std::string> lines;
  std::string line;
  std::getline(text, line); // the signature
  while (lines.size() < f.ops().size() && std::getline(text, line))
    lines.push_back(line.substr(line.find_first_not_of(' ')));
  return lines;
}

std::string opRange(const std::vector<int64_t>& ops) {
  std::string s;
  for (size_t i = 0; i < ops.size(); ++i) {
    size_t j = i;
    while (j + 1 < ops.size() && ops[j + 1] == ops[j] + 1)
      ++j;
    s += (s.empty() ? "" : ", ") + std::to_string(ops[i]) +
         (j > i ? "-" + std::to_string(ops[j]) : "");
    i = j;
  }
  return s;
}

} // namespace

std::string dumpKernels(const Function& f, const ExecPlan& plan,
                        const std::vector<Section>& sections) {
  // Plan numbering: the arguments, then every op's results.
  std::unordered_map<const Value*, size_t> number;
  std::vector<const Value*> values;
  for (size_t i = 0; i < f.numArguments(); ++i)
    values.push_back(f.argument(i));
  for (const auto& op : f.ops())
    for (size_t r = 0; r < op->numResults(); ++r)
      values.push_back(op->result(r));
  for (size_t v = 0; v < values.size(); ++v)
    number[values[v]] = v;
  PrintOptions options;
  std::unordered_map<const Value*, std::string> printed; // "%name" as the text shows it
  options.named = [&](const Value& v, const std::string& name) {
    printed[&v] = "%" + printName(name);
  };
  options.annotate = [&](const Value& v) -> std::string {
    auto it = number.find(&v);
    if (v.isArgument() || it == number.end() || it->second >= plan.values.size()) return "";
    const PlanValue& home = plan.values[it->second];
    std::string s = "-> " + std::string(valueHomeName(home.home));
    switch (home.home) {
    case ValueHome::Arena:
      return s + " +" + std::to_string(home.offset) + " (" + std::to_string(v.type().bytes()) +
             " bytes)";
    case ValueHome::Argument:
      return s + " " + printed[f.argument(static_cast<size_t>(home.base))];
    case ValueHome::View:
      return home.base >= 0 && static_cast<size_t>(home.base) < values.size()
                 ? s + " of " + printed[values[static_cast<size_t>(home.base)]] + " +" +
                       std::to_string(home.offset)
                 : s;
    case ValueHome::Result:
      return s + " " + std::to_string(home.base);
    default:
      return s;
    }
  };
  std::vector<std::string> lines = opLines(f, options);
  auto numOps = static_cast<int64_t>(f.ops().size());
  std::vector<int64_t> stepOf = plan.stepOfOps(numOps);
  std::ostringstream os;
  os << "# @" << f.name() << ": " << sections.size() << " sections, " << plan.steps.size()
     << " kernels, arena " << plan.arenaBytes << " bytes\n";
  for (size_t s = 0; s < sections.size(); ++s) {
    const Section& sec = sections[s];
    int64_t end = sec.firstOp + sec.numOps;
    // Steps run where their last op is: a section's kernels are the steps anchored in it.
    std::vector<size_t> kernels;
    for (size_t k = 0; k < plan.steps.size(); ++k) {
      int64_t anchor = plan.steps[k].ops.back();
      if (anchor >= sec.firstOp && anchor < end) kernels.push_back(k);
    }
    os << "\nsection " << s << " (" << phaseName(sec.phase) << ", ops " << sec.firstOp << "-"
       << end - 1 << (sec.rule.empty() ? "" : ", rule " + sec.rule) << "): " << kernels.size()
       << (kernels.size() == 1 ? " kernel\n" : " kernels\n");
    for (size_t k : kernels) {
      const PlanStep& step = plan.steps[k];
      os << "  kernel " << k << ": " << step.kernel << " (op" << (step.ops.size() > 1 ? "s " : " ")
         << opRange(step.ops) << ")" << (step.reference ? ", reference" : "") << "\n";
      for (int64_t op : step.ops)
        os << "    " << lines[static_cast<size_t>(op)] << "\n";
    }
    bool header = false;
    for (int64_t op = sec.firstOp; op < end && op < numOps; ++op) {
      if (stepOf[static_cast<size_t>(op)] >= 0) continue;
      if (!header) os << "  no kernel:\n";
      header = true;
      os << "    " << lines[static_cast<size_t>(op)] << "\n";
    }
  }
  return os.str();
}

} // namespace shardc
