#include "shardc/driver/Driver.h"
#include "shardc/ir/IR.h"
#include "shardc/pef/Pef.h"
#include "shardc/runtime/Interpreter.h"
#include "shardc/runtime/Npy.h"
#include "shardc/runtime/Npz.h"
#include "shardc/support/Error.h"

#include <cstring>
#include <filesystem>
#include <map>

namespace shardc {
namespace {

std::map<std::string, std::string> parseInputs(const RunOptions& o, const Pef& pef) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : o.inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error("--input '" + spec + "' must be NAME=FILE.npy");
    std::string name = spec.substr(0, eq);
    bool known = false;
    for (const auto& in : pef.inputs)
      known |= in.name == name;
    if (!known) {
      std::string names;
      for (const auto& in : pef.inputs)
        names += (names.empty() ? "" : ", ") + in.name;
      throw Error("--input '" + name + "': the PEF has no such input (its inputs: " + names + ")");
    }
    if (!files.emplace(name, spec.substr(eq + 1)).second)
      throw Error("--input '" + name + "' is given twice");
  }
  return files;
}

// Stacks per-step values along a new first axis.
Tensor stack(const std::vector<Tensor>& steps) {
  Shape shape = steps[0].shape();
  shape.insert(shape.begin(), static_cast<int64_t>(steps.size()));
  Tensor out(TensorType{steps[0].dtype(), shape});
  size_t chunk = steps[0].byteSize();
  for (size_t i = 0; i < steps.size(); ++i)
    if (chunk) std::memcpy(out.data() + i * chunk, steps[i].data(), chunk);
  return out;
}

std::string fileNameFor(std::string name) {
  // Output names come from the model; keep them inside the output folder.
  for (char& ch : name)
    if (ch == '/' || ch == '\\') ch = '_';
  return name == "." || name == ".." ? "_" + name : name;
}

} // namespace

void runPef(const RunOptions& o) {
  LoadedPef l = loadPef(o.pef);
  bool training = l.pef.mode == "training";
  if (o.steps < 1) throw Error("--steps must be at least 1");
  if (!training && o.steps != 1)
    throw Error("--steps applies to training PEFs; this PEF is for inference");
  std::map<std::string, std::string> files = parseInputs(o, l.pef);
  const Function& f = *l.entry;

  std::map<std::string, Tensor> state; // parameters and optimizer state, by name
  for (const auto& [name, t] : l.pef.weights)
    state.emplace(name, t);
  if (!o.weights.empty()) {
    for (auto& [name, t] : readNpz(o.weights)) {
      auto it = state.find(name);
      const Value* a = f.findArgument(name);
      if (it == state.end() || !a || a->argKind() != ArgKind::Param)
        throw Error(o.weights + ": '" + name + "' is not a parameter of this PEF");
      if (t.type() != it->second.type())
        throw Error(o.weights + ": '" + name + "' is " + t.type().str() + ", the PEF expects " +
                    it->second.type().str());
      it->second = std::move(t);
    }
  }

  std::vector<Tensor> args;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    if (a->argKind() != ArgKind::Input) {
      args.push_back(state.at(a->name()));
      continue;
    }
    auto it = files.find(a->name());
    if (it == files.end())
      throw Error("missing input '" + a->name() + "' (" + a->type().str() + "); pass --input " +
                  a->name() + "=FILE.npy");
    Tensor t = readNpy(it->second);
    if (t.type() != a->type())
      throw Error("input '" + a->name() + "' expects " + a->type().str() + ", " + it->second +
                  " holds " + t.type().str());
    args.push_back(std::move(t));
  }

  std::vector<std::vector<Tensor>> perStep(f.results().size());
  for (int64_t s = 0; s < o.steps; ++s) {
    std::vector<Tensor> results = interpret(f, args);
    for (size_t i = 0; i < results.size(); ++i) {
      int64_t tied = f.results()[i].tiedArg;
      if (tied >= 0)
        args[static_cast<size_t>(tied)] = std::move(results[i]); // updated in place
      else
        perStep[i].push_back(std::move(results[i]));
    }
  }
  std::filesystem::create_directories(o.outputDir);
  for (size_t i = 0; i < f.results().size(); ++i) {
    if (f.results()[i].tiedArg >= 0) continue;
    Tensor out = training ? stack(perStep[i]) : perStep[i][0];
    writeNpy(
        (std::filesystem::path(o.outputDir) / (fileNameFor(f.results()[i].name) + ".npy")).string(),
        out);
  }
  if (!o.saveWeights.empty()) {
    std::vector<std::pair<std::string, Tensor>> params;
    for (size_t i = 0; i < f.numArguments(); ++i)
      if (f.argument(i)->argKind() == ArgKind::Param)
        params.emplace_back(f.argument(i)->name(), args[i]);
    writeNpz(o.saveWeights, params);
  }
}

} // namespace shardc
