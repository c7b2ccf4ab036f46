#include "shardc/pef/Pef.h"

#include "pef.pb.h"
#include "shardc/support/Digest.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <sys/mman.h>
#include <unistd.h>

namespace shardc {
namespace {

constexpr char kMagic[8] = {'S', 'H', 'A', 'R', 'D', 'P', 'E', 'F'};
constexpr size_t kHeaderSize = 32, kTrailerSize = 8;
// The weights block starts on a page (mapped, it is page-aligned in memory); each weight on a
// cache line, as the kernels' vector loads prefer.
constexpr uint64_t kBlockAlign = 4096, kWeightAlign = 64;

uint64_t roundUp(uint64_t n, uint64_t to) {
  return (n + to - 1) / to * to;
}

template <typename T> void putLE(std::string& s, T v) {
  for (size_t i = 0; i < sizeof(T); ++i)
    s += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
}
template <typename T> T getLE(const char* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return static_cast<T>(v);
}

void toProto(const PefTensor& t, pef::TensorSpec* p) {
  p->set_name(t.name);
  p->set_dtype(std::string(dtypeName(t.type.dtype)));
  for (int64_t d : t.type.shape)
    p->add_shape(d);
  p->set_index_bound(t.indexBound);
}

PefTensor fromProto(const pef::TensorSpec& p, const std::string& path) {
  auto dt = parseDType(p.dtype());
  if (!dt)
    throw Error(path + ": tensor '" + p.name() + "' has unknown element type '" + p.dtype() + "'");
  Shape shape(p.shape().begin(), p.shape().end());
  if (!checkedNumel(shape)) throw Error(path + ": tensor '" + p.name() + "' has an invalid shape");
  if (p.index_bound() < 0)
    throw Error(path + ": tensor '" + p.name() + "' has a negative index bound");
  return {p.name(), TensorType{*dt, shape}, p.index_bound()};
}

pef::BufferKind kindToProto(BufferKind k) {
  switch (k) {
  case BufferKind::Input:
    return pef::BUFFER_INPUT;
  case BufferKind::Param:
    return pef::BUFFER_PARAM;
  case BufferKind::OptState:
    return pef::BUFFER_OPT_STATE;
  case BufferKind::Output:
    return pef::BUFFER_OUTPUT;
  }
  return pef::BUFFER_UNSPECIFIED;
}

void planToProto(const ExecPlan& plan, pef::ExecPlan* p) {
  p->set_arena_bytes(plan.arenaBytes);
  for (const PlanValue& v : plan.values) {
    auto* pv = p->add_values();
    pv->set_home(static_cast<pef::PlanValue::Home>(v.home));
    pv->set_offset(v.offset);
    pv->set_base(v.base);
  }
  for (const PlanStep& s : plan.steps) {
    auto* ps = p->add_steps();
    ps->set_kernel(s.kernel);
    for (int64_t i : s.ops)
      ps->add_ops(i);
    ps->set_reference(s.reference);
  }
}

void sectionToProto(const Section& s, pef::Section* p) {
  p->set_phase(std::string(phaseName(s.phase)));
  p->set_first_op(s.firstOp);
  p->set_num_ops(s.numOps);
  p->set_rule(s.rule);
  for (int64_t v : s.inputs)
    p->add_inputs(v);
  for (int64_t v : s.outputs)
    p->add_outputs(v);
  p->set_input_bytes(s.inputBytes);
  p->set_output_bytes(s.outputBytes);
  p->set_on_chip_bytes(s.onChipBytes);
  p->set_compute_units(s.computeUnits);
  p->set_body(s.body + 1);
}

// The encoding only; checkSections compares the sections with their program.
template <typename Sections>
std::vector<Section> sectionsFromProto(const Sections& sections, const std::string& path) {
  std::vector<Section> out;
  for (const pef::Section& p : sections) {
    Section s;
    std::optional<Phase> phase = parsePhase(p.phase());
    if (!phase)
      throw Error(path + ": section " + std::to_string(out.size()) +
                  " has an unknown phase (phases: forward, backward, grad-reduce, optimizer)");
    s.phase = *phase;
    s.firstOp = p.first_op();
    s.numOps = p.num_ops();
    s.rule = p.rule();
    s.inputs.assign(p.inputs().begin(), p.inputs().end());
    s.outputs.assign(p.outputs().begin(), p.outputs().end());
    s.inputBytes = p.input_bytes();
    s.outputBytes = p.output_bytes();
    s.onChipBytes = p.on_chip_bytes();
    s.computeUnits = p.compute_units();
    s.body = p.body() - 1;
    out.push_back(std::move(s));
  }
  return out;
}

// Only the encoding is checked here; checkPlan compares the plan with its program.
ExecPlan planFromProto(const pef::ExecPlan& p, const std::string& path) {
  ExecPlan plan;
  plan.arenaBytes = p.arena_bytes();
  if (plan.arenaBytes < 0 || plan.arenaBytes > (int64_t(1) << 46))
    throw Error(path + ": the executable plan's arena size " + std::to_string(plan.arenaBytes) +
                " is out of range");
  for (const auto& v : p.values()) {
    if (v.home() < pef::PlanValue::ARENA || v.home() > pef::PlanValue::RESULT)
      throw Error(path + ": the executable plan has a value of unknown placement");
    plan.values.push_back({static_cast<ValueHome>(v.home()), v.offset(), v.base()});
  }
  for (const auto& s : p.steps())
    plan.steps.push_back({s.kernel(), {s.ops().begin(), s.ops().end()}, s.reference()});
  return plan;
}

} // namespace

std::string_view bufferKindName(BufferKind k) {
  switch (k) {
  case BufferKind::Input:
    return "input";
  case BufferKind::Param:
    return "param";
  case BufferKind::OptState:
    return "opt_state";
  case BufferKind::Output:
    return "output";
  }
  return "?";
}

namespace {

// Each weight's offset in the weights block, and the block's length last.
std::vector<uint64_t> weightOffsets(const Pef& in) {
  std::vector<uint64_t> at;
  uint64_t end = 0;
  for (const auto& w : in.weights) {
    at.push_back(roundUp(end, kWeightAlign));
    end = at.back() + w.second.byteSize();
  }
  at.push_back(roundUp(end, kWeightAlign));
  return at;
}

pef::Package toPackage(const Pef& in, const std::vector<uint64_t>& offsets) {
  pef::Package p;
  p.set_shardc_version(in.shardcVersion);
  for (const auto& a : in.compileArgs)
    p.add_compile_args(a);
  p.set_created_utc(in.createdUtc);
  p.set_mode(in.mode);
  p.set_arch(in.arch);
  for (const auto& [name, size] : in.mesh) {
    auto* ax = p.mutable_mesh()->add_axes();
    ax->set_name(name);
    ax->set_size(size);
  }
  for (const auto& t : in.inputs)
    toProto(t, p.add_inputs());
  for (const auto& t : in.outputs)
    toProto(t, p.add_outputs());
  for (const auto& b : in.buffers) {
    auto* pb = p.add_buffers();
    toProto(b.tensor, pb->mutable_spec());
    pb->set_kind(kindToProto(b.kind));
    pb->set_bytes(b.tensor.type.bytes());
  }
  for (const auto& prog : in.programs) {
    auto* pp = p.add_programs();
    for (int64_t d : prog.devices)
      pp->add_devices(d);
    pp->set_entry(prog.entry);
    pp->set_ir(prog.ir);
    for (const auto& sh : prog.argShardings)
      pp->add_arg_shardings(sh);
    for (const auto& sh : prog.resultShardings)
      pp->add_result_shardings(sh);
    planToProto(prog.plan, pp->mutable_plan());
    for (const Section& sec : prog.sections)
      sectionToProto(sec, pp->add_sections());
    for (const PefBody& b : prog.bodies) {
      auto* pb = pp->add_bodies();
      pb->set_function(b.function);
      pb->set_phase(std::string(phaseName(b.phase)));
      planToProto(b.plan, pb->mutable_plan());
      for (const Section& sec : b.sections)
        sectionToProto(sec, pb->add_sections());
      pb->set_instances(b.instances);
    }
  }
  p.set_cost_text(in.costText);
  p.set_cost_json(in.costJson);
  p.set_search_json(in.searchJson);
  p.set_optimization_level(in.optimizationLevel);
  p.set_optimization_rules(in.optimizationRules);
  for (double f : in.scalingFactors)
    p.add_scaling_factors(f);
  if (in.training) {
    const PefTraining& t = *in.training;
    auto* pt = p.mutable_training();
    pt->set_loss(t.loss);
    pt->set_optimizer(t.optimizer);
    pt->set_learning_rate(t.learningRate);
    pt->set_momentum(t.momentum);
    pt->set_nesterov(t.nesterov);
    pt->set_weight_decay(t.weightDecay);
    pt->set_beta1(t.beta1);
    pt->set_beta2(t.beta2);
    pt->set_epsilon(t.epsilon);
    pt->set_recompute(t.recompute);
    pt->set_micro_batches(t.microBatches);
    pt->set_precision(t.precision);
  }
  for (size_t i = 0; i < in.weights.size(); ++i) {
    auto* w = p.add_weights();
    w->set_name(in.weights[i].first);
    toProto(PefTensor{in.weights[i].first, in.weights[i].second.type()}, w->mutable_spec());
    w->set_offset(static_cast<int64_t>(offsets[i]));
  }
  return p;
}

// The payload, refused past protobuf's limit on one message.
std::string serializePayload(const pef::Package& p) {
  size_t size = p.ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX))
    throw Error("cannot serialize the PEF: its program and plans take " + std::to_string(size) +
                " bytes, over protobuf's 2 GiB message limit");
  std::string out;
  out.reserve(size);
  if (!p.SerializeToString(&out)) throw Error("cannot serialize the PEF");
  return out;
}

// Bytes of the weights block: `bytes` at `offset`, in increasing offsets.
struct BlockPiece {
  const void* bytes;
  size_t size;
  uint64_t offset;
};

// The file's bytes in order, each piece given to `sink` and digested; the checksum last.
void emitPef(const std::string& payload, const std::vector<BlockPiece>& block, uint64_t blockBytes,
             const std::function<void(const char*, size_t)>& sink) {
  StreamDigest digest;
  auto put = [&](const void* data, size_t n) {
    digest.update(data, n);
    sink(static_cast<const char*>(data), n);
  };
  static const std::string zeros(kBlockAlign, '\0');
  auto pad = [&](uint64_t n) {
    for (; n > 0; n -= std::min<uint64_t>(n, kBlockAlign))
      put(zeros.data(), std::min<uint64_t>(n, kBlockAlign));
  };
  std::string head(kMagic, sizeof kMagic);
  putLE<uint32_t>(head, kPefFormatVersion);
  putLE<uint32_t>(head, 0);
  putLE<uint64_t>(head, payload.size());
  putLE<uint64_t>(head, blockBytes);
  put(head.data(), head.size());
  put(payload.data(), payload.size());
  uint64_t before = kHeaderSize + payload.size();
  pad(roundUp(before, kBlockAlign) - before);
  uint64_t at = 0;
  for (const BlockPiece& b : block) {
    pad(b.offset - at);
    put(b.bytes, b.size);
    at = b.offset + b.size;
  }
  pad(blockBytes - at);
  std::string trailer;
  putLE<uint64_t>(trailer, digest.finish());
  sink(trailer.data(), trailer.size());
}

// `pef`'s file, piece by piece.
void emitPef(const Pef& pef, const std::function<void(const char*, size_t)>& sink) {
  std::vector<uint64_t> offsets = weightOffsets(pef);
  std::vector<BlockPiece> block;
  for (size_t i = 0; i < pef.weights.size(); ++i)
    block.push_back({pef.weights[i].second.data(), pef.weights[i].second.byteSize(), offsets[i]});
  emitPef(serializePayload(toPackage(pef, offsets)), block, offsets.back(), sink);
}

} // namespace

std::string serializePef(const Pef& in) {
  std::string out;
  emitPef(in, [&](const char* data, size_t n) { out.append(data, n); });
  return out;
}

std::string wrapPefPayload(const std::string& payload, const std::string& weights) {
  std::string out;
  emitPef(payload, {{weights.data(), weights.size(), 0}}, weights.size(),
          [&](const char* data, size_t n) { out.append(data, n); });
  return out;
}

namespace {

// A PEF's bytes at `base`: the weights are tensors over them, kept alive by `keeper`, or with
// no keeper copies.
Pef parseImage(uint8_t* base, size_t size, const std::string& path,
               const std::shared_ptr<const void>& keeper) {
  const char* bytes = reinterpret_cast<const char*>(base);
  if (size < kHeaderSize + kTrailerSize || std::memcmp(bytes, kMagic, sizeof kMagic) != 0)
    throw Error(path + ": not a shardc PEF file (bad magic or too short)");
  uint32_t version = getLE<uint32_t>(bytes + 8);
  if (version > kPefFormatVersion)
    throw Error(path + ": PEF format version " + std::to_string(version) +
                " is newer than this shardc reads (" + std::to_string(kPefFormatVersion) +
                "); recompile the model or update shardc");
  if (version == 0) throw Error(path + ": corrupt PEF header (format version 0)");
  if (version < kPefFormatVersion)
    throw Error(path + ": PEF format version " + std::to_string(version) +
                " is older than this shardc reads (" + std::to_string(kPefFormatVersion) +
                "); recompile the model with shardc compile");
  uint64_t length = getLE<uint64_t>(bytes + 16), blockBytes = getLE<uint64_t>(bytes + 24);
  uint64_t room = size - kHeaderSize - kTrailerSize;
  uint64_t blockAt = length <= room ? roundUp(kHeaderSize + length, kBlockAlign) : 0;
  if (length > room || blockBytes > room || blockAt + blockBytes + kTrailerSize != size)
    throw Error(path + ": PEF is truncated or has trailing bytes (header says " +
                std::to_string(length) + " payload bytes and " + std::to_string(blockBytes) +
                " bytes of weights, the file has " + std::to_string(size) + " bytes)");
  uint64_t stored = getLE<uint64_t>(bytes + size - kTrailerSize);
  StreamDigest digest;
  digest.update(bytes, size - kTrailerSize);
  if (stored != digest.finish())
    throw Error(path + ": PEF checksum mismatch: the file is corrupt or was modified");
  pef::Package p;
  if (length > static_cast<uint64_t>(INT_MAX) ||
      !p.ParseFromArray(bytes + kHeaderSize, static_cast<int>(length)))
    throw Error(path + ": PEF payload does not parse");
  Pef out;
  out.checksum = stored;
  out.shardcVersion = p.shardc_version();
  out.compileArgs.assign(p.compile_args().begin(), p.compile_args().end());
  out.createdUtc = p.created_utc();
  out.mode = p.mode();
  out.arch = p.arch();
  for (const auto& ax : p.mesh().axes())
    out.mesh.emplace_back(ax.name(), ax.size());
  for (const auto& t : p.inputs())
    out.inputs.push_back(fromProto(t, path));
  for (const auto& t : p.outputs())
    out.outputs.push_back(fromProto(t, path));
  for (const auto& b : p.buffers()) {
    BufferKind k;
    switch (b.kind()) {
    case pef::BUFFER_INPUT:
      k = BufferKind::Input;
      break;
    case pef::BUFFER_PARAM:
      k = BufferKind::Param;
      break;
    case pef::BUFFER_OPT_STATE:
      k = BufferKind::OptState;
      break;
    case pef::BUFFER_OUTPUT:
      k = BufferKind::Output;
      break;
    default:
      throw Error(path + ": buffer '" + b.spec().name() + "' has an unknown kind");
    }
    out.buffers.push_back({fromProto(b.spec(), path), k});
  }
  for (const auto& prog : p.programs()) {
    out.programs.push_back({{prog.devices().begin(), prog.devices().end()},
                            prog.entry(),
                            prog.ir(),
                            {prog.arg_shardings().begin(), prog.arg_shardings().end()},
                            {prog.result_shardings().begin(), prog.result_shardings().end()},
                            planFromProto(prog.plan(), path),
                            sectionsFromProto(prog.sections(), path),
                            {}});
    for (const pef::Body& b : prog.bodies()) {
      std::optional<Phase> phase = parsePhase(b.phase());
      if (!phase)
        throw Error(path + ": hypersection body @" + b.function() + " has an unknown phase");
      out.programs.back().bodies.push_back({b.function(), *phase, planFromProto(b.plan(), path),
                                            sectionsFromProto(b.sections(), path), b.instances()});
    }
  }
  out.costText = p.cost_text();
  out.costJson = p.cost_json();
  out.searchJson = p.search_json();
  out.optimizationLevel = p.optimization_level();
  out.optimizationRules = p.optimization_rules();
  out.scalingFactors.assign(p.scaling_factors().begin(), p.scaling_factors().end());
  if (p.has_training()) {
    const auto& t = p.training();
    out.training = PefTraining{t.loss(),
                               t.optimizer(),
                               t.learning_rate(),
                               t.momentum(),
                               t.nesterov(),
                               t.weight_decay(),
                               t.beta1(),
                               t.beta2(),
                               t.epsilon(),
                               t.recompute().empty() ? "none" : t.recompute(),
                               std::max<int64_t>(t.micro_batches(), 1),
                               t.precision().empty() ? "f32" : t.precision()};
  }
  std::vector<std::pair<uint64_t, uint64_t>> spans; // [offset, end) of each weight
  for (const auto& w : p.weights()) {
    PefTensor spec = fromProto(w.spec(), path);
    // Checked before anything is allocated: a forged shape must not allocate terabytes.
    uint64_t at = static_cast<uint64_t>(w.offset()), n = static_cast<uint64_t>(spec.type.bytes());
    if (!w.data().empty() || w.offset() < 0 || at % kWeightAlign != 0 || at > blockBytes ||
        n > blockBytes - at)
      throw Error(path + ": weight '" + w.name() + "' (" + spec.type.str() + ", " +
                  std::to_string(n) + " bytes at offset " + std::to_string(w.offset()) +
                  ") does not lie on a 64-byte boundary inside the " + std::to_string(blockBytes) +
                  "-byte weights block");
    spans.emplace_back(at, at + n);
    uint8_t* from = base + blockAt + at;
    if (keeper && n > 0) {
      out.weights.emplace_back(w.name(), Tensor(spec.type, from, keeper));
      continue;
    }
    Tensor t(spec.type);
    if (n) std::memcpy(t.data(), from, n);
    out.weights.emplace_back(w.name(), std::move(t));
  }
  // Weights share no bytes: a step writes each in place.
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second)
      throw Error(path + ": two weights overlap in the weights block (at offset " +
                  std::to_string(spans[i].first) + ")");
  return out;
}

} // namespace

Pef parsePef(const std::string& bytes, const std::string& path) {
  return parseImage(reinterpret_cast<uint8_t*>(const_cast<char*>(bytes.data())), bytes.size(), path,
                    nullptr);
}

int64_t writePef(const std::string& path, const Pef& pef) {
  AtomicFileWriter file(path);
  int64_t written = 0;
  emitPef(pef, [&](const char* data, size_t n) {
    file.append(data, n);
    written += static_cast<int64_t>(n);
  });
  file.commit();
  return written;
}

Pef readPef(const std::string& path) {
  size_t size = 0;
  int fd = openRegularFile(path, size);
  if (size < kHeaderSize + kTrailerSize) {
    ::close(fd);
    throw Error(path + ": not a shardc PEF file (bad magic or too short)");
  }
  // Private: a training step's writes to the weights stay in this process's pages. Populated:
  // the checksum reads every page at once, faster than one fault per page.
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) throw Error(path + ": cannot map: " + std::strerror(err));
  std::shared_ptr<const void> keeper(
      map, [size](const void* m) { ::munmap(const_cast<void*>(m), size); });
  return parseImage(static_cast<uint8_t*>(map), size, path, keeper);
}

std::string checksumText(uint64_t checksum) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(checksum));
  return buf;
}

} // namespace shardc
