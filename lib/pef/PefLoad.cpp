#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"
#include "shardc/ir/Verifier.h"
#include "shardc/ops/OpNames.h"
#include "shardc/pef/Pef.h"
#include "shardc/support/Error.h"

#include <map>
#include <set>

namespace shardc {

LoadedPef::LoadedPef() = default;
LoadedPef::LoadedPef(LoadedPef&&) = default;
LoadedPef& LoadedPef::operator=(LoadedPef&&) = default;
LoadedPef::~LoadedPef() = default;

namespace {

// The most devices a PEF's mesh may name: far more than any run starts, few enough that
// every count over them fits.
constexpr int64_t kMaxMeshDevices = int64_t{1} << 20;

void loadShardings(LoadedPef& l, const PefProgram& prog, const std::string& path) {
  const Function& f = *l.entry;
  std::vector<MeshAxis> axes;
  std::set<std::string> names;
  int64_t devices = 1;
  for (const auto& [name, size] : l.pef.mesh) {
    if (name.empty() || !names.insert(name).second)
      throw Error(path + ": the mesh's axis names must be distinct and non-empty");
    if (size < 1 || size > kMaxMeshDevices || (devices *= size) > kMaxMeshDevices)
      throw Error(path + ": the mesh's axis '" + name + "' has size " + std::to_string(size) +
                  " (sizes are positive, at most " + std::to_string(kMaxMeshDevices) +
                  " devices in all)");
    axes.push_back({name, size});
  }
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

// The mode, the devices and the input and output specs against the program: `run` binds
// files and outputs through the specs, so a spec that lies would misread or mislabel them.
template <class WholeOk>
void checkInterface(const LoadedPef& l, WholeOk&& wholeOk, const std::string& path) {
  const Function& f = *l.entry;
  const Pef& pef = l.pef;
  bool tied = false;
  for (const auto& r : f.results())
    tied = tied || r.tiedArg >= 0;
  if (pef.mode != "inference" && pef.mode != "training")
    throw Error(path + ": mode '" + pef.mode + "' is neither inference nor training");
  if (pef.mode == "inference" && tied)
    throw Error(path + ": an inference PEF whose program updates its parameters");
  if (pef.mode == "training" && !tied)
    throw Error(path + ": a training PEF whose program updates nothing");
  int64_t devices = l.partitioned() ? l.mesh.numDevices() : 1;
  const std::vector<int64_t>& listed = pef.programs[0].devices;
  bool inOrder = listed.size() == static_cast<size_t>(devices);
  for (size_t d = 0; inOrder && d < listed.size(); ++d)
    inOrder = listed[d] == static_cast<int64_t>(d);
  if (!inOrder)
    throw Error(path + ": the program must list its " + std::to_string(devices) + " devices 0.." +
                std::to_string(devices - 1) + " in order");
  std::vector<size_t> inputs, outputs;
  for (size_t i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->argKind() == ArgKind::Input) inputs.push_back(i);
  for (size_t i = 0; i < f.results().size(); ++i)
    if (f.results()[i].tiedArg < 0) outputs.push_back(i);
  if (pef.inputs.size() != inputs.size())
    throw Error(path + ": lists " + std::to_string(pef.inputs.size()) +
                " inputs, the program has " + std::to_string(inputs.size()));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const PefTensor& spec = pef.inputs[k];
    if (spec.name != f.argument(inputs[k])->name() || !wholeOk(inputs[k], spec.type))
      throw Error(path + ": input " + std::to_string(k) + " is listed as '" + spec.name + "' " +
                  spec.type.str() + ", the program's is '" + f.argument(inputs[k])->name() + "' " +
                  f.argument(inputs[k])->type().str());
    // `run` checks the values of such an input against the spec's bound: it must be the
    // program's, or out-of-range labels would pass as all-zero one-hot rows.
    if (int64_t bound = programIndexBound(f.argument(inputs[k])); spec.indexBound != bound)
      throw Error(path + ": input '" + spec.name + "' is listed with class indices below " +
                  std::to_string(spec.indexBound) + ", but its program's bound is " +
                  std::to_string(bound) + " (0: none; recompile the model)");
  }
  if (pef.outputs.size() != outputs.size())
    throw Error(path + ": lists " + std::to_string(pef.outputs.size()) +
                " outputs, the program has " + std::to_string(outputs.size()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    const PefTensor& spec = pef.outputs[k];
    const FuncResult& r = f.results()[outputs[k]];
    const TensorType& local = r.value->type();
    bool fits =
        l.partitioned()
            ? spec.type.dtype == local.dtype &&
                  checkSharding(l.resultShardings[outputs[k]], spec.type, l.mesh).empty() &&
                  localShape(l.resultShardings[outputs[k]], spec.type, l.mesh) == local.shape
            : spec.type == local;
    if (spec.name != r.name || !fits)
      throw Error(path + ": output " + std::to_string(k) + " is listed as '" + spec.name + "' " +
                  spec.type.str() + ", the program's is '" + r.name + "' " + local.str() +
                  (l.partitioned() ? " laid out as " + l.resultShardings[outputs[k]].str() : ""));
  }
}

std::vector<std::string> bodyFunctions(const PefProgram& prog) {
  std::vector<std::string> out;
  for (const PefBody& b : prog.bodies)
    out.push_back(b.function);
  return out;
}

// Every function but the entry is a hypersection body with a plan that fits it (so each
// function a call can reach is checked), named once.
void checkBodies(const LoadedPef& l, const std::string& path) {
  const PefProgram& prog = l.pef.programs[0];
  std::set<std::string> named;
  for (const PefBody& b : prog.bodies) {
    const Function* fn = l.module->findFunction(b.function);
    std::string at = path + ": hypersection body @" + b.function;
    if (!fn || fn == l.entry) throw Error(at + " is not a function the entry can call");
    if (!named.insert(b.function).second) throw Error(at + " is listed twice");
    if (std::string err = checkPlan(b.plan, *fn); !err.empty())
      throw Error(at + ": the executable plan does not fit it: " + err + " (recompile the model)");
    if (std::string err = checkSections(b.sections, *fn, {}, b.phase); !err.empty())
      throw Error(at + ": the sections do not fit it: " + err + " (recompile the model)");
    if (b.instances < 0) throw Error(at + " has a negative instance count");
  }
  for (const auto& fn : l.module->functions())
    if (fn.get() != l.entry && !named.count(fn->name()))
      throw Error(path + ": function @" + fn->name() + " is neither the entry nor a body");
}

} // namespace

int64_t programIndexBound(const Value* in) {
  if (!isInteger(in->type().dtype)) return 0;
  int64_t classes = 0;
  std::vector<const Value*> work{in};
  for (size_t k = 0; k < work.size() && k < 64; ++k)
    for (const Use& u : work[k]->uses()) {
      const Op* user = u.user;
      if (!user) continue;
      if (user->name() == opname::kReshape) work.push_back(user->result(0));
      if (user->name() != opname::kCompare) continue;
      const Op* other = user->operand(u.index == 0 ? 1 : 0)->definingOp();
      if (!other) continue;
      const std::string& direction = user->attrs().getString("direction");
      if (other->name() == opname::kConstant && direction == "ne") return 0; // an ignored label
      if (other->name() != opname::kIota || direction != "eq" || classes) continue;
      const Shape& shape = other->result(0)->type().shape;
      if (auto axis =
              normalizeAxis(other->attrs().getInt("axis"), static_cast<int64_t>(shape.size())))
        classes = shape[static_cast<size_t>(*axis)];
    }
  return classes;
}

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
  checkInterface(l, wholeOk, path);
  if (std::string err = checkPlan(prog.plan, f); !err.empty())
    throw Error(path + ": the executable plan does not fit the program: " + err +
                " (recompile the model)");
  checkBodies(l, path);
  if (std::string err = checkSections(prog.sections, f, bodyFunctions(prog)); !err.empty())
    throw Error(path + ": the sections do not fit the program: " + err + " (recompile the model)");
  return l;
}

} // namespace shardc
