// PEF: shardc's executable package. On disk:
//   "SHARDPEF" | u32 format version | u32 reserved (0) | u64 payload length |
//   u64 weights length | payload (the shardc.pef.Package protobuf, lib/pef/pef.proto) |
//   zeros to a multiple of 4096 bytes | the weights block (each weight's bytes at a multiple
//   of 64 bytes, zeros between) | u64 checksum (StreamDigest) of every byte before it;
// integers little-endian. The checksum detects any single changed byte and any truncation (it
// is not a signature). The weights stay out of the protobuf message, so that readPef maps them
// from the file instead of parsing and copying them, and a PEF's weights are not bounded by
// protobuf's 2 GiB message limit.
#pragma once

#include "shardc/dataflow/Sections.h"
#include "shardc/exec/ExecPlan.h"
#include "shardc/ir/Tensor.h"
#include "shardc/sharding/Mesh.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardc {
class Value;
class Module;

// Version 2 added the executable plan, version 3 the weights block; older PEFs are refused
// (recompile them).
inline constexpr uint32_t kPefFormatVersion = 3;

enum class BufferKind { Input, Param, OptState, Output };
std::string_view bufferKindName(BufferKind k);

struct PefTensor {
  std::string name;
  TensorType type;
  int64_t indexBound = 0; // an integer input's values lie in [0, indexBound) (0: any)
};

struct PefBuffer {
  PefTensor tensor;
  BufferKind kind;
};

// A hypersection body of a program: its function (in the program's IR), plan and sections.
struct PefBody {
  std::string function;
  Phase phase = Phase::Forward;
  ExecPlan plan;
  std::vector<Section> sections;
  int64_t instances = 0;
};

struct PefProgram {
  std::vector<int64_t> devices;
  std::string entry;
  std::string ir;
  std::vector<std::string> argShardings, resultShardings; // empty: not partitioned
  ExecPlan plan;
  std::vector<Section> sections; // empty in PEFs of shardc before sections
  std::vector<PefBody> bodies;   // --enable-hypersection
};

// A training PEF's step as compiled: what `run` reports (the learning rate) and `inspect` shows.
struct PefTraining {
  std::string loss; // "": the model's own scalar output
  std::string optimizer;
  double learningRate = 0, momentum = 0;
  bool nesterov = false;
  double weightDecay = 0, beta1 = 0, beta2 = 0, epsilon = 0;
  std::string recompute = "none"; // none | selective | full
  int64_t microBatches = 1;
  std::string precision = "f32"; // f32 | bf16
};

struct Pef {
  std::string shardcVersion;
  std::vector<std::string> compileArgs;
  std::string createdUtc;
  std::string mode; // "inference" or "training"
  std::string arch;
  std::vector<std::pair<std::string, int64_t>> mesh; // empty: one device
  std::vector<PefTensor> inputs, outputs;
  std::vector<PefBuffer> buffers;
  std::vector<PefProgram> programs;
  std::vector<std::pair<std::string, Tensor>> weights;
  std::string costText, costJson;      // the cost model's estimate; empty in older PEFs
  std::string searchJson;              // --auto-partition's search (searchResultJson); else empty
  std::string optimizationLevel;       // o0, o1, o3 ("" in older PEFs)
  std::string optimizationRules;       // -o1: the rules file, "default" or "nlp"
  std::vector<double> scalingFactors;  // per phase: forward, backward, grad-reduce, optimizer
  std::optional<PefTraining> training; // training PEFs (absent in those of older shardc)
  uint64_t checksum = 0;               // set when read: the file's checksum (same file, same sum)
};

// Container format only: header, checksum, protobuf. Throws shardc::Error naming `path`.
std::string serializePef(const Pef& pef);
// The container around a protobuf payload and a weights block: how the PEF fuzzer makes files
// whose checksum holds.
std::string wrapPefPayload(const std::string& payload, const std::string& weights = "");
// The weights are copies of `bytes`' (the tensors own them).
Pef parsePef(const std::string& bytes, const std::string& path);
// Writes `pef` atomically (see AtomicFileWriter), each weight written from its tensor (the
// file is not assembled in memory first); returns the file's bytes.
int64_t writePef(const std::string& path, const Pef& pef);
// Maps the file (private, copy on write): the weights are tensors over the mapping, which the
// kernels read and a training step updates in place without writing the file. The whole file
// is checksummed first.
Pef readPef(const std::string& path);
// A checksum as 16 hex digits, as inspect --json and run --stats-json name their PEF.
std::string checksumText(uint64_t checksum);

// A PEF's program ready to run: parsed and verified IR, weights checked against the
// entry function's parameters (names, types: a partitioned program's local pieces against the
// whole weights), the executable plan checked against the program. Throws shardc::Error on
// any mismatch.
struct LoadedPef {
  Pef pef;
  std::unique_ptr<Module> module;
  const class Function* entry = nullptr;
  // Partitioned programs: the mesh and the layout of each argument and result.
  Mesh mesh;
  std::vector<TensorSharding> argShardings, resultShardings;
  bool partitioned() const { return !argShardings.empty(); }
  // Set when the data axis runs more replicas than compiled (setReplicas): every sum over it
  // is multiplied by this, N / R.
  double dataSumScale = 1;
  LoadedPef();
  LoadedPef(LoadedPef&&);
  LoadedPef& operator=(LoadedPef&&);
  ~LoadedPef();
};
LoadedPef loadPef(const std::string& path);

// The indexBound a PEF records for integer input `in` of its (per-device) program: the class
// count when the program one-hot encodes it (compares it for equality, directly or through
// reshapes, with an iota along the classes), so that `run` refuses out-of-range labels
// instead of training on all-zero rows; 0 when it does not, or when the program also
// compares it with a constant for inequality (ONNX's ignore_index: that label is valid too).
// loadPef refuses a PEF whose spec says otherwise.
int64_t programIndexBound(const Value* in);

} // namespace shardc
