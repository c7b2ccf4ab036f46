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

namespace {

void loadShardings(LoadedPef& l, const PefProgram& prog, const std::string& path) {
  const Function& f = *l.entry;
  std::vector<MeshAxis> axes;
  for (const auto& [name, size] : l.pef.mesh)
    axes.push_back({name, size});
  l.mesh = Mesh(axes);
  if (prog.argShardings.size() != f.numArguments() ||
      prog.resultShardings.size() != f.results().size())
    throw Error(path + ": the program's shardings do not match its arguments and results");
  try {
    for (const auto& s : prog.argShardings)
      l.argShardings.push_back(parseSharding(s));
    for (const auto& s : prog.resultShardings)
      l.resultShardings.push_back(parseSharding(s));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  for (size_t i = 0; i < f.results().size(); ++i) {
    const TensorSharding& s = l.resultShardings[i];
    if (!s.partial.empty() ||
        static_cast<int64_t>(s.dims.size()) != f.results()[i].value->type().rank())
      throw Error(path + ": result '" + f.results()[i].name + "' has the sharding " + s.str() +
                  ", which does not fit " + f.results()[i].value->type().str());
  }
}

} // namespace

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
  if (l.pef.mesh.empty() != prog.argShardings.empty())
    throw Error(path + ": a partitioned program needs both a mesh and its shardings");
  const Function& f = *l.entry;
  if (!prog.argShardings.empty()) loadShardings(l, prog, path);
  // The whole type of argument i: its local type, or the one its sharding expands.
  auto wholeOk = [&](size_t i, const TensorType& whole) {
    const TensorType& local = f.argument(i)->type();
    if (!l.partitioned()) return local == whole;
    return local.dtype == whole.dtype && checkSharding(l.argShardings[i], whole, l.mesh).empty() &&
           localShape(l.argShardings[i], whole, l.mesh) == local.shape;
  };
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
    if (!wholeOk(i, it->second->type()))
      throw Error(path + ": weight '" + a->name() + "' is " + it->second->type().str() +
                  ", the program expects " + a->type().str() +
                  (l.partitioned() ? " laid out as " + l.argShardings[i].str() : ""));
  }
  if (params != weights.size()) throw Error(path + ": holds weights that no parameter uses");
  if (std::string err = checkPlan(prog.plan, f); !err.empty())
    throw Error(path + ": the executable plan does not fit the program: " + err +
                " (recompile the model)");
  if (std::string err = checkSections(prog.sections, f); !err.empty())
    throw Error(path + ": the sections do not fit the program: " + err + " (recompile the model)");
  return l;
}

} // namespace shardc
