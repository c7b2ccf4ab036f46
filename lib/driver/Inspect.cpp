#include "shardc/cost/CostModel.h"
#include "shardc/cost/Memory.h"
#include "shardc/driver/Driver.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/pef/Pef.h"
#include "shardc/support/Error.h"
#include "shardc/support/JsonDepth.h"

#include <nlohmann/json.hpp>

#include <algorithm>
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

// What a partitioned program holds and sends per device.
struct PartitionInfo {
  struct Arg {
    std::string name, kind, sharding;
    TensorType whole, local;
    TensorSharding layout;
  };
  struct Collective {
    std::string kind, axes, value;
    int64_t group, bytes;
  };
  std::vector<Arg> args;
  std::vector<Collective> collectives;
  int64_t paramBytes = 0, stateBytes = 0, inputBytes = 0, peakActivations = 0;
};

PartitionInfo partitionInfo(const LoadedPef& l) {
  PartitionInfo info;
  const Function& f = *l.entry;
  std::map<std::string, TensorType> whole;
  for (const auto& b : l.pef.buffers)
    whole[b.tensor.name] = b.tensor.type;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    info.args.push_back({a->name(), std::string(argKindName(a->argKind())), l.argShardings[i].str(),
                         whole.at(a->name()), a->type(), l.argShardings[i]});
    int64_t& total = a->argKind() == ArgKind::Param      ? info.paramBytes
                     : a->argKind() == ArgKind::OptState ? info.stateBytes
                                                         : info.inputBytes;
    total += a->type().bytes();
  }
  // A call's collectives are its body's, once per call (a scan's once per step).
  std::vector<const Op*> ops;
  for (const auto& op : f.ops()) {
    if (!op->def().callsFunction) {
      ops.push_back(op.get());
      continue;
    }
    for (int64_t n = 0; n < runsOf(*op); ++n)
      for (const auto& inner : l.module->callee(*op)->ops())
        ops.push_back(inner.get());
  }
  for (const Op* op : ops) {
    if (!op->def().communicates || op->name() == opname::kShardSlice) continue;
    std::vector<TensorType> in{op->operand(0)->type()}, out{op->result(0)->type()};
    const Value* v = op->operand(0);
    while (!v->isArgument() && v->name().empty() && v->definingOp()->numOperands() == 1 &&
           v->definingOp()->name() == opname::kReshape)
      v = v->definingOp()->operand(0); // name the value a chunked collective works on
    std::string value = (v->isArgument() ? "argument" : v->definingOp()->name()) + " %" + v->name();
    info.collectives.push_back(
        {op->name(), op->attrs().getString("axes"), value, op->attrs().getInt("group"),
         static_cast<int64_t>(op->def().byteCount(OpSig{in, op->attrs()}, out))});
  }
  info.peakActivations = peakActivationBytes(f);
  return info;
}

// `s` with every control character but newline and tab shown as \xNN, so that a PEF's text
// fields cannot drive the terminal they are printed on.
std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string inspectText(const std::string& path, bool json, bool sections);

// JSON text a PEF holds (`what`), parsed. Shallow by construction (costReportJson,
// searchResultJson); a deep one is a forged file, and parsing it would recurse without bound.
nlohmann::json embeddedJson(const std::string& text, const std::string& path, const char* what) {
  if (jsonDepth(text) > 32) throw Error(path + ": " + what + " nests too deep");
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error(path + ": " + what + " is not valid JSON");
  return j;
}

} // namespace

std::string pefProgram(const std::string& path) {
  return printable(loadPef(path).pef.programs[0].ir);
}

std::string inspectPef(const std::string& path, bool json, bool sections) {
  return printable(inspectText(path, json, sections));
}

namespace {

// Op kinds of a section, most frequent first: "matmul 2, add 1".
std::string sectionOps(const Section& s, const std::vector<const Op*>& ops) {
  std::map<std::string, int64_t> kinds;
  for (int64_t i = s.firstOp; i < s.firstOp + s.numOps; ++i)
    ++kinds[ops[static_cast<size_t>(i)]->name()];
  std::vector<std::pair<int64_t, std::string>> sorted;
  for (const auto& [k, n] : kinds)
    sorted.emplace_back(-n, k);
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (size_t i = 0; i < sorted.size() && i < 4; ++i)
    out += (i ? ", " : "") + sorted[i].second + " " + std::to_string(-sorted[i].first);
  if (sorted.size() > 4) out += ", ...";
  return out;
}

// What inspect counts over a PEF's program and buffers.
struct PefSummary {
  std::map<std::string, int64_t> opCounts;
  int64_t paramTensors = 0, paramCount = 0, paramBytes = 0;
  int64_t stateTensors = 0, stateCount = 0, stateBytes = 0;
};

PefSummary summarize(const LoadedPef& l) {
  PefSummary sum;
  for (const auto& op : l.entry->ops())
    ++sum.opCounts[op->name()];
  for (const auto& b : l.pef.buffers) {
    int64_t n = b.tensor.type.numel(), bytes = b.tensor.type.bytes();
    if (b.kind == BufferKind::Param)
      ++sum.paramTensors, sum.paramCount += n, sum.paramBytes += bytes;
    if (b.kind == BufferKind::OptState)
      ++sum.stateTensors, sum.stateCount += n, sum.stateBytes += bytes;
  }
  return sum;
}

nlohmann::json trainingJson(const PefTraining& t) {
  return {{"loss", t.loss},
          {"optimizer", t.optimizer},
          {"learning_rate", t.learningRate},
          {"momentum", t.momentum},
          {"nesterov", t.nesterov},
          {"weight_decay", t.weightDecay},
          {"beta1", t.beta1},
          {"beta2", t.beta2},
          {"epsilon", t.epsilon},
          {"recompute", t.recompute},
          {"micro_batches", t.microBatches},
          {"precision", t.precision}};
}

nlohmann::json planJson(const LoadedPef& l) {
  const ExecPlan& plan = l.pef.programs[0].plan;
  std::map<std::string, int> kernels;
  for (const PlanStep& st : plan.steps)
    ++kernels[st.kernel];
  return {{"kernels", plan.steps.size()},
          {"kernel_counts", kernels},
          {"arena_bytes", plan.arenaBytes},
          {"constant_bytes", plan.constantBytes(*l.entry)},
          {"reference_ops", plan.referenceOps()}};
}

nlohmann::json sectionsJson(const std::vector<Section>& sections) {
  nlohmann::json out = nlohmann::json::array();
  for (const Section& s : sections)
    out.push_back({{"phase", std::string(phaseName(s.phase))},
                   {"first_op", s.firstOp},
                   {"num_ops", s.numOps},
                   {"rule", s.rule},
                   {"inputs", s.inputs},
                   {"outputs", s.outputs},
                   {"input_bytes", s.inputBytes},
                   {"output_bytes", s.outputBytes},
                   {"on_chip_bytes", s.onChipBytes},
                   {"compute_units", s.computeUnits},
                   {"body", s.body}});
  return out;
}

nlohmann::json hypersectionsJson(const LoadedPef& l) {
  nlohmann::json out = nlohmann::json::array();
  for (const PefBody& b : l.pef.programs[0].bodies) {
    const Function& fn = *l.module->findFunction(b.function);
    nlohmann::json bs = nlohmann::json::array();
    for (const Section& s : b.sections)
      bs.push_back({{"phase", std::string(phaseName(s.phase))},
                    {"first_op", s.firstOp},
                    {"num_ops", s.numOps},
                    {"on_chip_bytes", s.onChipBytes},
                    {"compute_units", s.computeUnits}});
    out.push_back({{"function", b.function},
                   {"phase", std::string(phaseName(b.phase))},
                   {"ops", fn.ops().size()},
                   {"instances", b.instances},
                   {"kernels", b.plan.steps.size()},
                   {"arena_bytes", b.plan.arenaBytes},
                   {"sections", bs}});
  }
  return out;
}

nlohmann::json partitionJson(const LoadedPef& l) {
  PartitionInfo info = partitionInfo(l);
  nlohmann::json pj;
  pj["devices"] = l.mesh.numDevices();
  pj["arguments"] = nlohmann::json::array();
  for (const auto& a : info.args)
    pj["arguments"].push_back({{"name", a.name},
                               {"kind", a.kind},
                               {"sharding", a.sharding},
                               {"dims", a.layout.dims},
                               {"chunks", a.layout.chunks},
                               {"partial", a.layout.partial},
                               {"shape", a.whole.shape},
                               {"local_shape", a.local.shape},
                               {"local_bytes", a.local.bytes()}});
  pj["per_device_bytes"] = {{"parameters", info.paramBytes},
                            {"optimizer_state", info.stateBytes},
                            {"inputs", info.inputBytes},
                            {"peak_activations", info.peakActivations}};
  pj["collectives"] = nlohmann::json::array();
  for (const auto& c : info.collectives)
    pj["collectives"].push_back({{"kind", c.kind},
                                 {"axes", c.axes},
                                 {"group", c.group},
                                 {"value", c.value},
                                 {"bytes_per_step", c.bytes}});
  return pj;
}

std::string inspectJson(const LoadedPef& l, const std::string& path) {
  const Pef& p = l.pef;
  PefSummary sum = summarize(l);
  nlohmann::json j;
  j["shardc_version"] = p.shardcVersion;
  j["format_version"] = kPefFormatVersion;
  j["created_utc"] = p.createdUtc;
  j["checksum"] = checksumText(p.checksum);
  j["mode"] = p.mode;
  if (p.training) j["training"] = trainingJson(*p.training);
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
  j["parameter_count"] = sum.paramCount;
  j["parameter_bytes"] = sum.paramBytes;
  j["optimizer_state_count"] = sum.stateCount;
  j["optimizer_state_bytes"] = sum.stateBytes;
  j["op_count"] = l.entry->ops().size();
  j["ops"] = sum.opCounts;
  j["plan"] = planJson(l);
  j["optimization_level"] = p.optimizationLevel;
  if (!p.optimizationRules.empty()) j["optimization_rules"] = p.optimizationRules;
  j["scaling_factors"] = p.scalingFactors;
  j["sections"] = sectionsJson(p.programs[0].sections);
  j["hypersections"] = hypersectionsJson(l);
  if (!p.costJson.empty()) j["cost"] = embeddedJson(p.costJson, path, "the cost estimate");
  if (!p.searchJson.empty())
    j["search"] = embeddedJson(p.searchJson, path, "the auto-partition search");
  if (l.partitioned()) j["partition"] = partitionJson(l);
  return j.dump(2) + "\n";
}

// The header: version, mode (and a training PEF's optimizer), signature, parameters, ops.
void describeHeader(std::ostream& os, const LoadedPef& l, const std::string& path) {
  const Pef& p = l.pef;
  PefSummary sum = summarize(l);
  os << "PEF " << path << "\n";
  os << "  format version " << kPefFormatVersion << ", shardc " << p.shardcVersion << ", created "
     << p.createdUtc << "\n";
  os << "  mode: " << p.mode << ", arch: " << p.arch
     << ", devices: " << (l.partitioned() ? l.mesh.numDevices() : 1) << "\n";
  if (p.training) {
    const PefTraining& t = *p.training;
    os << "  training: loss " << (t.loss.empty() ? "(the model's output)" : t.loss)
       << ", optimizer " << t.optimizer << ", learning rate " << t.learningRate << ", precision "
       << t.precision << ", recompute " << t.recompute << ", micro-batches " << t.microBatches
       << "\n";
  }
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
  list(BufferKind::Param, "parameters", sum.paramTensors, sum.paramCount, sum.paramBytes);
  list(BufferKind::OptState, "optimizer state", sum.stateTensors, sum.stateCount, sum.stateBytes);
  os << "  ops: " << l.entry->ops().size() << " (";
  bool first = true;
  for (const auto& [name, n] : sum.opCounts) {
    os << (first ? "" : ", ") << name << " " << n;
    first = false;
  }
  os << ")\n";
}

std::vector<const Op*> opsOf(const Function& f) {
  std::vector<const Op*> ops;
  for (const auto& op : f.ops())
    ops.push_back(op.get());
  return ops;
}

// The plan, the sections (each one with `listSections`) and the hypersection bodies.
void describeSectionsAndBodies(std::ostream& os, const LoadedPef& l, bool listSections) {
  const Pef& p = l.pef;
  const std::vector<Section>& sections = p.programs[0].sections;
  std::istringstream plan(describePlan(p.programs[0].plan, *l.entry));
  os << "  executable plan:\n";
  for (std::string line; std::getline(plan, line);)
    os << "    " << line << "\n";
  os << "  sections: ";
  if (sections.empty()) {
    os << "none (compiled by a shardc before sections; recompile to have them)\n";
  } else {
    os << describeSections(sections) << ", -" << p.optimizationLevel;
    if (!p.optimizationRules.empty()) os << " rules " << p.optimizationRules;
    os << "\n";
  }
  const std::vector<PefBody>& bodies = p.programs[0].bodies;
  auto sectionLine = [&](const std::string& indent, size_t k, const Section& s,
                         const std::vector<const Op*>& in) {
    os << indent << "#" << k << " " << phaseName(s.phase) << " ops " << s.firstOp << ".."
       << s.firstOp + s.numOps - 1 << " (" << sectionOps(s, in) << ")";
    if (!s.rule.empty()) os << " rule " << s.rule;
    if (s.body >= 0)
      os << " hypersection " << s.body << " @" << bodies[static_cast<size_t>(s.body)].function;
    os << ": in " << formatBytes(static_cast<double>(s.inputBytes)) << ", out "
       << formatBytes(static_cast<double>(s.outputBytes)) << ", on chip "
       << formatBytes(static_cast<double>(s.onChipBytes)) << ", " << s.computeUnits << " units\n";
  };
  if (listSections)
    for (size_t k = 0; k < sections.size(); ++k)
      sectionLine("    ", k, sections[k], opsOf(*l.entry));
  if (bodies.empty()) return;
  os << "  hypersections: " << bodies.size() << " bodies, each compiled once\n";
  for (size_t b = 0; b < bodies.size(); ++b) {
    const Function& fn = *l.module->findFunction(bodies[b].function);
    os << "    " << b << " @" << fn.name() << ": " << phaseName(bodies[b].phase) << ", "
       << fn.ops().size() << " ops, " << bodies[b].instances << " instances, "
       << bodies[b].sections.size() << " sections, " << bodies[b].plan.steps.size()
       << " kernels, arena " << formatBytes(static_cast<double>(bodies[b].plan.arenaBytes)) << "\n";
    if (!listSections) continue;
    for (size_t k = 0; k < bodies[b].sections.size(); ++k)
      sectionLine("      ", k, bodies[b].sections[k], opsOf(fn));
  }
}

void describePartition(std::ostream& os, const LoadedPef& l) {
  PartitionInfo info = partitionInfo(l);
  os << "  mesh: " << l.mesh.str() << "\n  shardings (whole -> per device):\n";
  for (const auto& a : info.args)
    os << "    " << a.kind << " " << a.name << ": " << a.whole.str() << " " << a.sharding << " -> "
       << a.local.str() << "\n";
  os << "  per device: parameters " << info.paramBytes << " bytes, optimizer state "
     << info.stateBytes << " bytes, inputs " << info.inputBytes << " bytes, peak activations "
     << info.peakActivations << " bytes\n";
  int64_t total = 0;
  for (const auto& c : info.collectives)
    total += c.bytes;
  os << "  collectives: " << info.collectives.size() << ", " << total
     << " bytes sent per device per step\n";
  for (const auto& c : info.collectives)
    os << "    " << c.kind << " " << c.value << " over {" << c.axes << "} (" << c.group
       << " devices): " << c.bytes << " bytes\n";
}

std::string inspectText(const std::string& path, bool json, bool listSections) {
  LoadedPef l = loadPef(path);
  if (json) return inspectJson(l, path);
  std::ostringstream os;
  describeHeader(os, l, path);
  describeSectionsAndBodies(os, l, listSections);
  if (!l.pef.costText.empty()) os << "  " << l.pef.costText << "\n";
  if (l.partitioned()) describePartition(os, l);
  return os.str();
}

} // namespace

} // namespace shardc
