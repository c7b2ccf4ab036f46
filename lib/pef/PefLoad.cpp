#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"
#include "shardc/ir/Verifier.h"
#include "shardc/pef/Pef.h"
#include "shardc/support/Error.h"

#include <map>

namespace shardc {

LoadedPef::LoadedPef() = default;
LoadedPef::LoadedPef(LoadedPef&&) = default;
LoadedPef::~LoadedPef() = default;

LoadedPef loadPef(const std::string& path) {
  LoadedPef l;
  l.pef = readPef(path);
  if (l.pef.programs.size() != 1)
    throw Error(path + ": holds " + std::to_string(l.pef.programs.size()) +
                " device programs; this shardc runs single-program PEFs");
  const PefProgram& prog = l.pef.programs[0];
  DiagEngine diags(path + " (program)");
  l.module = parseModule(prog.ir, diags);
  if (l.module) verifyModule(*l.module, diags);
  if (diags.hasErrors())
    throw Error(path + ": the program is invalid: " + diags.formatLocated(diags.diagnostics()[0]));
  l.entry = l.module->findFunction(prog.entry);
  if (!l.entry) throw Error(path + ": the program has no entry function @" + prog.entry);
  std::map<std::string, const Tensor*> weights;
  for (const auto& [name, t] : l.pef.weights)
    if (!weights.emplace(name, &t).second)
      throw Error(path + ": weight '" + name + "' appears twice");
  size_t params = 0;
  for (size_t i = 0; i < l.entry->numArguments(); ++i) {
    const Value* a = l.entry->argument(i);
    if (a->argKind() == ArgKind::Input) continue;
    ++params;
    auto it = weights.find(a->name());
    if (it == weights.end()) throw Error(path + ": no weights for parameter '" + a->name() + "'");
    if (it->second->type() != a->type())
      throw Error(path + ": weight '" + a->name() + "' is " + it->second->type().str() +
                  ", the program expects " + a->type().str());
  }
  if (params != weights.size()) throw Error(path + ": holds weights that no parameter uses");
  return l;
}

} // namespace shardc
