#include "shardc/driver/Driver.h"
#include "shardc/ir/IR.h"
#include "shardc/pef/Pef.h"

#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

namespace shardc {
namespace {

nlohmann::json tensorJson(const PefTensor& t) {
  return {{"name", t.name},
          {"dtype", std::string(dtypeName(t.type.dtype))},
          {"shape", t.type.shape},
          {"bytes", t.type.bytes()}};
}

} // namespace

std::string inspectPef(const std::string& path, bool json) {
  LoadedPef l = loadPef(path);
  const Pef& p = l.pef;
  std::map<std::string, int64_t> opCounts;
  for (const auto& op : l.entry->ops())
    ++opCounts[op->name()];
  int64_t paramTensors = 0, paramCount = 0, paramBytes = 0, stateTensors = 0, stateCount = 0,
          stateBytes = 0;
  for (const auto& b : p.buffers) {
    if (b.kind == BufferKind::Param)
      ++paramTensors, paramCount += b.tensor.type.numel(), paramBytes += b.tensor.type.bytes();
    if (b.kind == BufferKind::OptState)
      ++stateTensors, stateCount += b.tensor.type.numel(), stateBytes += b.tensor.type.bytes();
  }
  if (json) {
    nlohmann::json j;
    j["shardc_version"] = p.shardcVersion;
    j["format_version"] = kPefFormatVersion;
    j["created_utc"] = p.createdUtc;
    j["mode"] = p.mode;
    j["arch"] = p.arch;
    j["compile_args"] = p.compileArgs;
    j["mesh"] = nlohmann::json::array();
    for (const auto& [axis, size] : p.mesh)
      j["mesh"].push_back({{"axis", axis}, {"size", size}});
    j["inputs"] = nlohmann::json::array();
    for (const auto& t : p.inputs)
      j["inputs"].push_back(tensorJson(t));
    j["outputs"] = nlohmann::json::array();
    for (const auto& t : p.outputs)
      j["outputs"].push_back(tensorJson(t));
    j["parameters"] = nlohmann::json::array();
    for (const auto& b : p.buffers)
      if (b.kind == BufferKind::Param || b.kind == BufferKind::OptState) {
        nlohmann::json t = tensorJson(b.tensor);
        t["kind"] = std::string(bufferKindName(b.kind));
        j["parameters"].push_back(t);
      }
    j["parameter_count"] = paramCount;
    j["parameter_bytes"] = paramBytes;
    j["optimizer_state_count"] = stateCount;
    j["optimizer_state_bytes"] = stateBytes;
    j["op_count"] = l.entry->ops().size();
    j["ops"] = opCounts;
    return j.dump(2) + "\n";
  }
  std::ostringstream os;
  os << "PEF " << path << "\n";
  os << "  format version " << kPefFormatVersion << ", shardc " << p.shardcVersion << ", created "
     << p.createdUtc << "\n";
  os << "  mode: " << p.mode << ", arch: " << p.arch << ", devices: 1\n";
  os << "  compile args:";
  for (const auto& a : p.compileArgs)
    os << " " << a;
  os << "\n  inputs:\n";
  for (const auto& t : p.inputs)
    os << "    " << t.name << ": " << t.type.str() << "\n";
  os << "  outputs:\n";
  for (const auto& t : p.outputs)
    os << "    " << t.name << ": " << t.type.str() << "\n";
  auto list = [&](BufferKind kind, const char* title, int64_t tensors, int64_t values,
                  int64_t bytes) {
    if (kind == BufferKind::OptState && tensors == 0) return;
    os << "  " << title << ": " << tensors << " tensors, " << values << " values, " << bytes
       << " bytes\n";
    for (const auto& b : p.buffers)
      if (b.kind == kind)
        os << "    " << bufferKindName(b.kind) << " " << b.tensor.name << ": "
           << b.tensor.type.str() << " (" << b.tensor.type.bytes() << " bytes)\n";
  };
  list(BufferKind::Param, "parameters", paramTensors, paramCount, paramBytes);
  list(BufferKind::OptState, "optimizer state", stateTensors, stateCount, stateBytes);
  os << "  ops: " << l.entry->ops().size() << " (";
  bool first = true;
  for (const auto& [name, n] : opCounts) {
    os << (first ? "" : ", ") << name << " " << n;
    first = false;
  }
  os << ")\n";
  return os.str();
}

} // namespace shardc
