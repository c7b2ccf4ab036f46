// Target files: YAML in, a validated Target out. Every error names the file, the field and,
// where yaml-cpp knows it, the line, so a typo in a hand-written target is found at once.
#include "shardc/cost/Target.h"

#include "BuiltinTargets.h"
#include "shardc/ops/OpNames.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"
#include "shardc/support/Yaml.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <functional>
#include <set>

namespace shardc {

double Target::flopsFor(DType t) const {
  auto it = peakFlops.find(t);
  if (it == peakFlops.end()) it = peakFlops.find(DType::F32);
  return it == peakFlops.end() ? 0 : it->second;
}

namespace {

constexpr int64_t kMaxUnits = 1'000'000'000, kMaxDevicesPerNode = 1'000'000;

class TargetReader {
public:
  explicit TargetReader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const YAML::Mark& at, const std::string& message) const {
    std::string where = at.is_null() ? file_ : file_ + ":" + std::to_string(at.line + 1);
    throw Error(where + ": " + message);
  }

  // The fields of map `node`, each checked against `known`; `prefix` names nested fields.
  std::map<std::string, YAML::Node> fields(const YAML::Node& node, const std::string& prefix,
                                           const std::set<std::string>& known) const {
    if (!node.IsMap())
      fail(node.Mark(), prefix.empty() ? "a target file must be a YAML map of fields"
                                       : "field '" + prefix + "' must be a map");
    std::map<std::string, YAML::Node> out;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) fail(kv.first.Mark(), "field names must be plain words");
      std::string key = kv.first.Scalar();
      std::string full = prefix.empty() ? key : prefix + "." + key;
      if (!known.empty() && !known.count(key)) {
        std::string list;
        for (const auto& k : known)
          list += (list.empty() ? "" : ", ") + k;
        fail(kv.first.Mark(), "unknown field '" + full + "' (fields: " + list + ")");
      }
      if (!out.emplace(key, kv.second).second)
        fail(kv.first.Mark(), "field '" + full + "' is given twice");
    }
    return out;
  }

  const YAML::Node& require(const std::map<std::string, YAML::Node>& m, const std::string& key,
                            const std::string& prefix = "") const {
    auto it = m.find(key);
    if (it == m.end()) fail(YAML::Mark::null_mark(), "missing field '" + prefix + key + "'");
    return it->second;
  }

  std::string text(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar() || n.Scalar().empty())
      fail(n.Mark(), "field '" + field + "' must be a non-empty string");
    return n.Scalar();
  }

  // A finite number satisfying `ok`; `rule` says what `ok` wants, for the message.
  double number(const YAML::Node& n, const std::string& field,
                const std::function<bool(double)>& ok, const std::string& rule) const {
    double v = 0;
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      fail(n.Mark(), "field '" + field + "' must be a number (got " + shown(n) + ")");
    }
    if (!std::isfinite(v) || !ok(v))
      fail(n.Mark(), "field '" + field + "' must be " + rule + " (got " + shown(n) + ")");
    return v;
  }
  // A figure within the physical range [lo, hi] of its unit (`range` says it): a typo such
  // as 1e-9 for 1e9 is refused here instead of reaching the cost model as a rate of nothing.
  double physical(const YAML::Node& n, const std::string& field, double lo, double hi,
                  const char* range) const {
    return number(
        n, field, [&](double v) { return v >= lo && v <= hi; }, std::string("within ") + range);
  }
  double flopRate(const YAML::Node& n, const std::string& field) const {
    return physical(n, field, 1e6, 1e18, "[1e6, 1e18] FLOP/s");
  }
  double bandwidth(const YAML::Node& n, const std::string& field) const {
    return physical(n, field, 1e3, 1e16, "[1e3, 1e16] bytes/s");
  }
  double bytes(const YAML::Node& n, const std::string& field) const {
    return physical(n, field, 1, 1e16, "[1, 1e16] bytes");
  }
  double seconds(const YAML::Node& n, const std::string& field) const {
    return physical(n, field, 0, 10, "[0, 10] s");
  }
  double fraction(const YAML::Node& n, const std::string& field) const {
    return number(
        n, field, [](double v) { return v > 0 && v <= 1; }, "in (0, 1]");
  }
  double unitInterval(const YAML::Node& n, const std::string& field) const {
    return number(
        n, field, [](double v) { return v >= 0 && v <= 1; }, "in [0, 1]");
  }
  int64_t integer(const YAML::Node& n, const std::string& field, int64_t min, int64_t max) const {
    int64_t v = 0;
    try {
      v = n.as<int64_t>();
    } catch (const YAML::Exception&) {
      fail(n.Mark(), "field '" + field + "' must be an integer (got " + shown(n) + ")");
    }
    if (v < min || v > max)
      fail(n.Mark(), "field '" + field + "' must be within [" + std::to_string(min) + ", " +
                         std::to_string(max) + "] (got " + shown(n) + ")");
    return v;
  }

  LinkSpec link(const YAML::Node& n, const std::string& field) const {
    auto f = fields(n, field, {"bandwidth", "latency", "oversubscribed_wait"});
    LinkSpec l{bandwidth(require(f, "bandwidth", field + "."), field + ".bandwidth"),
               seconds(require(f, "latency", field + "."), field + ".latency")};
    if (auto it = f.find("oversubscribed_wait"); it != f.end())
      l.oversubscribedWait = seconds(it->second, field + ".oversubscribed_wait");
    return l;
  }

  std::map<DType, double> flops(const YAML::Node& n) const {
    std::map<DType, double> out;
    for (const auto& [key, value] : fields(n, "peak_flops", {})) {
      std::optional<DType> t = parseDType(key);
      if (!t) fail(n.Mark(), "field 'peak_flops' has an unknown dtype '" + key + "'");
      out[*t] = flopRate(value, "peak_flops." + key);
    }
    if (!out.count(DType::F32))
      fail(YAML::Mark::null_mark(),
           "missing field 'peak_flops.f32' (the figure for dtypes without their own)");
    return out;
  }

  SectionSpec section(const YAML::Node& n) const {
    auto f = fields(n, "section",
                    {"model", "compute_units", "memory", "tile_bytes", "weights_on_chip",
                     "switch_overhead", "stage_latency"});
    SectionSpec s;
    std::string model = text(require(f, "model", "section."), "section.model");
    if (model != "kernel" && model != "pipeline")
      fail(f.at("model").Mark(),
           "field 'section.model' must be kernel or pipeline (got " + model + ")");
    s.model = model == "pipeline" ? SectionSpec::Model::Pipeline : SectionSpec::Model::Kernel;
    s.computeUnits =
        integer(require(f, "compute_units", "section."), "section.compute_units", 1, kMaxUnits);
    s.memory = bytes(require(f, "memory", "section."), "section.memory");
    s.tileBytes = bytes(require(f, "tile_bytes", "section."), "section.tile_bytes");
    if (s.tileBytes > s.memory)
      fail(f.at("tile_bytes").Mark(), "field 'section.tile_bytes' exceeds section.memory");
    if (auto it = f.find("weights_on_chip"); it != f.end()) {
      try {
        s.weightsOnChip = it->second.as<bool>();
      } catch (const YAML::Exception&) {
        fail(it->second.Mark(), "field 'section.weights_on_chip' must be true or false (got " +
                                    shown(it->second) + ")");
      }
    }
    if (auto it = f.find("switch_overhead"); it != f.end())
      s.switchOverhead = seconds(it->second, "section.switch_overhead");
    if (auto it = f.find("stage_latency"); it != f.end())
      s.stageLatency = seconds(it->second, "section.stage_latency");
    return s;
  }

private:
  static std::string shown(const YAML::Node& n) {
    return n.IsScalar() ? n.Scalar() : n.IsNull() ? "nothing" : "a list or map";
  }

  std::string file_;
};

bool isPath(const std::string& s) {
  auto endsWith = [&](const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return s.find('/') != std::string::npos || endsWith(".yaml") || endsWith(".yml");
}

} // namespace

Target parseTarget(const std::string& text, const std::string& filename) {
  TargetReader r(filename);
  YAML::Node root = loadOneYamlDocument(text, filename, "a target file");
  auto f = r.fields(root, "",
                    {"name", "description", "peak_flops", "memory_bandwidth", "memory_capacity",
                     "compute_efficiency", "memory_efficiency", "comm_overlap", "op_overhead",
                     "gemm_overhead", "gemm_batch_overhead", "devices_per_node", "intra_node",
                     "inter_node", "compute_units", "device_compute_units", "section", "info"});
  auto optional = [&](const char* key) -> const YAML::Node* {
    auto it = f.find(key);
    return it == f.end() ? nullptr : &it->second;
  };
  Target t;
  t.name = r.text(r.require(f, "name"), "name");
  if (const YAML::Node* n = optional("description")) t.description = r.text(*n, "description");
  t.peakFlops = r.flops(r.require(f, "peak_flops"));
  t.memoryBandwidth = r.bandwidth(r.require(f, "memory_bandwidth"), "memory_bandwidth");
  t.memoryCapacity = r.bytes(r.require(f, "memory_capacity"), "memory_capacity");
  if (const YAML::Node* n = optional("compute_efficiency"))
    t.computeEfficiency = r.fraction(*n, "compute_efficiency");
  if (const YAML::Node* n = optional("memory_efficiency"))
    t.memoryEfficiency = r.fraction(*n, "memory_efficiency");
  if (const YAML::Node* n = optional("comm_overlap"))
    t.commOverlap = r.unitInterval(*n, "comm_overlap");
  if (const YAML::Node* n = optional("op_overhead")) t.opOverhead = r.seconds(*n, "op_overhead");
  if (const YAML::Node* n = optional("gemm_overhead"))
    t.gemmOverhead = r.seconds(*n, "gemm_overhead");
  if (const YAML::Node* n = optional("gemm_batch_overhead"))
    t.gemmBatchOverhead = r.seconds(*n, "gemm_batch_overhead");
  t.devicesPerNode =
      r.integer(r.require(f, "devices_per_node"), "devices_per_node", 1, kMaxDevicesPerNode);
  t.intraNode = r.link(r.require(f, "intra_node"), "intra_node");
  t.interNode = r.link(r.require(f, "inter_node"), "inter_node");
  if (const YAML::Node* n = optional("compute_units"))
    t.computeUnits = r.integer(*n, "compute_units", 0, kMaxUnits);
  if (const YAML::Node* n = optional("device_compute_units")) {
    t.deviceComputeUnits = r.integer(*n, "device_compute_units", 1, kMaxUnits);
    if (t.computeUnits > 0 && t.deviceComputeUnits > t.computeUnits)
      r.fail(n->Mark(), "field 'device_compute_units' (" + std::to_string(t.deviceComputeUnits) +
                            ") exceeds compute_units (" + std::to_string(t.computeUnits) + ")");
  }
  if (const YAML::Node* n = optional("section")) t.section = r.section(*n);
  if (const YAML::Node* n = optional("info")) r.fields(*n, "info", {});
  return t;
}

Target loadTarget(const std::string& nameOrPath) {
  if (isPath(nameOrPath)) return parseTarget(readFile(nameOrPath), nameOrPath);
  std::string name = nameOrPath == "native" ? "cpu" : nameOrPath;
  const auto& files = builtinTargetFiles();
  auto it = files.find(name);
  if (it == files.end()) {
    std::string known;
    for (const auto& n : builtinTargetNames())
      known += n + ", ";
    throw Error("unknown target '" + nameOrPath + "' (targets: " + known +
                "native; or a target file: a path ending in .yaml)");
  }
  return parseTarget(std::string(it->second), "targets/" + name + ".yaml");
}

bool isLibraryGemm(const std::string& op) {
  return op == opname::kMatmul || op.rfind("conv2d", 0) == 0;
}

std::vector<std::string> builtinTargetNames() {
  std::vector<std::string> names;
  for (const auto& kv : builtinTargetFiles())
    names.emplace_back(kv.first);
  return names;
}

} // namespace shardc
