#include "shardc/driver/Driver.h"
#include "shardc/ir/IR.h"
#include "shardc/pef/Pef.h"
#include "shardc/runtime/Interpreter.h"
#include "shardc/runtime/Npy.h"
#include "shardc/support/Error.h"

#include <filesystem>
#include <map>

namespace shardc {

void runPef(const RunOptions& o) {
  LoadedPef l = loadPef(o.pef);
  std::map<std::string, std::string> files;
  for (const std::string& spec : o.inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error("--input '" + spec + "' must be NAME=FILE.npy");
    std::string name = spec.substr(0, eq);
    bool known = false;
    for (const auto& in : l.pef.inputs) known |= in.name == name;
    if (!known) {
      std::string names;
      for (const auto& in : l.pef.inputs) names += (names.empty() ? "" : ", ") + in.name;
      throw Error("--input '" + name + "': the PEF has no such input (its inputs: " + names + ")");
    }
    if (!files.emplace(name, spec.substr(eq + 1)).second) throw Error("--input '" + name + "' is given twice");
  }
  std::map<std::string, const Tensor*> weights;
  for (const auto& [name, t] : l.pef.weights) weights[name] = &t;
  std::vector<Tensor> args;
  const Function& f = *l.entry;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() != ArgKind::Input) {
      args.push_back(*weights.at(a->name()));
      continue;
    }
    auto it = files.find(a->name());
    if (it == files.end())
      throw Error("missing input '" + a->name() + "' (" + a->type().str() + "); pass --input " + a->name() + "=FILE.npy");
    Tensor t = readNpy(it->second);
    if (t.type() != a->type())
      throw Error("input '" + a->name() + "' expects " + a->type().str() + ", " + it->second + " holds " + t.type().str());
    args.push_back(std::move(t));
  }
  std::vector<Tensor> results = interpret(f, args);
  std::filesystem::create_directories(o.outputDir);
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& name = f.results()[i].name;
    // Output names come from the model; keep them inside the output folder.
    std::string file = name;
    for (char& ch : file)
      if (ch == '/' || ch == '\\') ch = '_';
    if (file == "." || file == "..") file = "_" + file;
    writeNpy((std::filesystem::path(o.outputDir) / (file + ".npy")).string(), results[i]);
  }
}

} // namespace shardc
