// ONNX model loading and the graph walk; the per-op mappings live in OnnxOps*.cpp.
#include "shardc/import/OnnxImporter.h"

#include "OnnxContext.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/Verifier.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"
#include "shardc/transforms/Passes.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>

namespace shardc {
namespace {
using namespace onnximport;

const OpTable& opTable() {
  static const OpTable table = [] {
    OpTable t;
    registerMathImports(t);
    registerShapeImports(t);
    registerNNImports(t);
    registerReduceImports(t);
    registerElementwiseImports(t);
    registerIndexImports(t);
    registerGatherImports(t);
    registerEinsumImports(t);
    registerNormImports(t);
    registerConvImports(t);
    registerRecurrentImports(t);
    registerGridSampleImports(t);
    registerSignalImports(t);
    return t;
  }();
  return table;
}

// Whether every element is finite: f32 read as floats (a 96-layer model's weights read
// element by element as double took an eighth of its import), other dtypes as double.
bool allFinite(const Tensor& t) {
  if (t.dtype() == DType::F32) {
    const auto* f = reinterpret_cast<const float*>(t.data());
    return std::all_of(f, f + t.numel(), [](float x) { return std::isfinite(x); });
  }
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.getDouble(i))) return false;
  return true;
}

// The index of the first NaN, or -1.
int64_t firstNaN(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (std::isnan(t.getDouble(i))) return i;
  return -1;
}

std::string firstLine(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// A non-negative decimal integer, all of `text`, or nullopt.
std::optional<int64_t> parseCount(const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

// The file an external-data location names, which ONNX requires to be relative to the
// model's folder and inside it: absolute paths, ".." and symbolic links leading out are
// refused (before anything is read or measured, so that a model cannot embed or probe
// other files).
std::string externalDataPath(const std::filesystem::path& dir, const std::string& location,
                             const std::string& where) {
  namespace fs = std::filesystem;
  fs::path rel(location);
  bool escapes = rel.is_absolute() || rel.has_root_name();
  for (const auto& part : rel)
    escapes = escapes || part == "..";
  std::error_code ec;
  fs::path root = fs::canonical(dir.empty() ? fs::path(".") : dir, ec);
  fs::path target = escapes || ec ? fs::path() : fs::weakly_canonical(root / rel, ec);
  if (!escapes && !ec) {
    auto [r, t] = std::mismatch(root.begin(), root.end(), target.begin(), target.end());
    escapes = r != root.end();
  }
  if (escapes || ec)
    throw Error(where + ": external data location '" + location +
                "' is not inside the model's folder (ONNX locations are relative to it)");
  return target.string();
}

void inlineExternalData(onnx::GraphProto& g, const std::string& modelPath) {
  std::filesystem::path dir = std::filesystem::path(modelPath).parent_path();
  std::map<std::string, std::string> files;
  for (auto& t : *g.mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    std::string where = modelPath + ": initializer '" + t.name() + "'";
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") {
        location = kv.value();
      } else if (kv.key() == "offset" || kv.key() == "length") {
        std::optional<int64_t> v = parseCount(kv.value());
        if (!v)
          throw Error(where + ": external_data " + kv.key() + " '" + kv.value() +
                      "' is not a non-negative integer");
        (kv.key() == "offset" ? offset : length) = *v;
      }
    }
    if (location.empty()) throw Error(where + " has external data without a location");
    auto it = files.find(location);
    if (it == files.end())
      it = files.emplace(location, readFile(externalDataPath(dir, location, where))).first;
    const std::string& data = it->second;
    auto size = static_cast<int64_t>(data.size());
    if (offset > size || (length >= 0 && length > size - offset))
      throw Error(where + " reads " +
                  (length < 0
                       ? "from byte " + std::to_string(offset)
                       : std::to_string(length) + " bytes at offset " + std::to_string(offset)) +
                  " of " + location + ", which has " + std::to_string(size));
    if (length < 0) length = size - offset;
    t.set_raw_data(data.substr(static_cast<size_t>(offset), static_cast<size_t>(length)));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
}

TensorType inputType(const onnx::ValueInfoProto& vi, const ImportOptions& opts,
                     const std::string& path) {
  std::string where = path + ": input '" + vi.name() + "'";
  if (!vi.type().has_tensor_type()) throw Error(where + " is not a tensor");
  const auto& tt = vi.type().tensor_type();
  TensorType t;
  t.dtype = dtypeFromOnnx(tt.elem_type(), where);
  if (!tt.has_shape()) throw Error(where + " has no shape; shardc needs static shapes");
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (i == 0 && (opts.batchSize || (opts.batchReplicas > 1 && d.has_dim_value()))) {
      int64_t one = opts.batchSize ? *opts.batchSize : d.dim_value();
      if (one > std::numeric_limits<int64_t>::max() / opts.batchReplicas)
        throw Error(where + ": a batch of " + std::to_string(one) + " per replica times " +
                    std::to_string(opts.batchReplicas) + " replicas is too large");
      t.shape.push_back(one * opts.batchReplicas);
    } else if (d.has_dim_value()) {
      t.shape.push_back(d.dim_value());
    } else {
      std::string sym = d.has_dim_param() ? "'" + d.dim_param() + "'" : "unnamed";
      throw Error(
          where + ": dimension " + std::to_string(i) + " is symbolic (" + sym + ")" +
          (i == 0 ? "; give the batch size with -b/--batch-size" : "; shardc needs static shapes"));
    }
  }
  if (!checkedNumel(t.shape)) throw Error(where + " has an invalid shape " + shapeStr(t.shape));
  return t;
}

} // namespace

Tensor readOnnxTensor(const std::string& path, std::optional<DType> as) {
  onnx::TensorProto t;
  if (!t.ParseFromString(readFile(path))) throw Error(path + ": not a serialized ONNX tensor");
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error(path + ": external tensor data is not supported here");
  if (as == DType::BF16 && t.data_type() == onnx::TensorProto::UINT16)
    t.set_data_type(onnx::TensorProto::BFLOAT16);
  return tensorFromProto(t, path);
}

std::vector<std::string> supportedOnnxOps() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : opTable())
    names.push_back(name);
  return names;
}

ImportedModel::ImportedModel() = default;
ImportedModel::ImportedModel(ImportedModel&&) = default;
ImportedModel& ImportedModel::operator=(ImportedModel&&) = default;
ImportedModel::~ImportedModel() = default;

ImportedModel importOnnx(const std::string& path, const ImportOptions& opts) {
  // Parsed from the file as it is read: the model's bytes are not held a second time.
  onnx::ModelProto model;
  size_t size = 0;
  google::protobuf::io::FileInputStream file(openRegularFile(path, size));
  file.SetCloseOnDelete(true);
  if (!model.ParseFromZeroCopyStream(&file))
    throw Error(
        path +
        ": not a valid ONNX model (the protobuf does not parse; truncated or not an .onnx file?)");
  if (!model.has_graph()) throw Error(path + ": the ONNX model has no graph");
  int64_t opset = -1;
  for (const auto& os : model.opset_import())
    if (os.domain().empty() || os.domain() == "ai.onnx") opset = os.version();
  if (opset < 0) throw Error(path + ": the model imports no version of the default ONNX opset");
  // The newest opset whose changes the op mappings follow (Pad's axes input of 18 and wrap
  // mode of 19); a later one may change an op's meaning without a word.
  constexpr int64_t newest = 19;
  if (opset > newest)
    throw Error(path + ": the model imports ONNX opset " + std::to_string(opset) +
                ", newer than any this shardc knows (up to " + std::to_string(newest) +
                "); export with an older opset_version");
  if (opts.batchSize && *opts.batchSize <= 0)
    throw Error("--batch-size must be positive, got " + std::to_string(*opts.batchSize));
  onnx::GraphProto& g = *model.mutable_graph();
  inlineExternalData(g, path);

  // Unsupported ops first: that message is more useful than a shape-inference failure.
  {
    Function scratch("scratch");
    Context probe(scratch, path, opset);
    for (const auto& node : g.node()) {
      probe.setNode(&node);
      if (!node.domain().empty() && node.domain() != "ai.onnx")
        probe.fail("ops of domain '" + node.domain() + "' are not supported");
      if (!opTable().count(node.op_type()))
        probe.fail("unsupported ONNX op '" + node.op_type() + "'");
      // ONNX's shape inference divides by these (a zero stride is SIGFPE inside it).
      for (const auto& a : node.attribute())
        if (a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape")
          for (int64_t v : a.ints())
            if (v < 1)
              probe.fail("attribute '" + a.name() + "' entries must be positive, got " +
                         std::to_string(v));
    }
  }
  // ONNX's own checks and shape inference catch malformed graphs early (two nodes writing one
  // value, repeated attributes, dangling inputs), with their messages.
  // The checker reads ops by the schemas of the ONNX library it comes with, so it checks
  // only models of an opset that library knows (Debian's stops at 17; Pad gained an input in
  // 18).
  int64_t checkerKnows =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
  try {
    if (opset <= checkerKnows) onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw Error(path + ": not a valid ONNX model: " + firstLine(e.what()));
  }
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    throw Error(path + ": ONNX shape inference failed: " + e.what());
  }

  ImportedModel result;
  result.module = std::make_unique<Module>();
  result.module->filename = path;
  Function* f = result.module->addFunction("main");
  Context ctx(*f, path, opset);
  ctx.setTraining(opts.training);
  for (const auto& vi : g.output())
    ctx.graphOutputs.insert(vi.name());

  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& t : g.initializer())
    initializers[t.name()] = &t;
  std::string fixedBatchNote;
  for (const auto& vi : g.input()) {
    if (initializers.count(vi.name())) continue; // an initializer listed as input (old exporters)
    const auto& shape = vi.type().tensor_type().shape();
    if ((opts.batchSize || opts.batchReplicas > 1) && shape.dim_size() > 0 &&
        shape.dim(0).has_dim_value() &&
        shape.dim(0).dim_value() !=
            opts.batchSize.value_or(shape.dim(0).dim_value()) * opts.batchReplicas &&
        fixedBatchNote.empty())
      fixedBatchNote =
          " (note: input '" + vi.name() + "' was exported with a fixed batch of " +
          std::to_string(shape.dim(0).dim_value()) + "; -b and -ws rebind it, which works " +
          "for models exported with a dynamic batch axis, e.g. torch.onnx.export(..., " +
          "dynamic_axes={'" + vi.name() + "': {0: 'batch'}}))";
    ctx.define(vi.name(),
               Entry{f->addArgument(vi.name(), inputType(vi, opts, path), ArgKind::Input), nullptr,
                     nullptr});
  }
  // In a training import the running statistics of training-mode batch norms are state
  // the step carries, not parameters.
  std::set<std::string> runningStats;
  for (const auto& node : g.node())
    if (opts.training && node.op_type() == "BatchNormalization" && node.input_size() == 5 &&
        onnximport::batchNormTrains(node, opset))
      runningStats.insert({node.input(3), node.input(4)});
  for (auto& t : *g.mutable_initializer()) {
    Tensor value = tensorFromProto(t, path + ": initializer '" + t.name() + "'");
    // Its bytes now live in `value` alone (clearing keeps a string's capacity; a swap frees
    // it): a model's weights are held about once.
    std::string().swap(*t.mutable_raw_data());
    google::protobuf::RepeatedField<float>().Swap(t.mutable_float_data());
    auto ref = std::make_shared<Tensor>(std::move(value));
    // Weights are parameters; integer and bool tensors (shapes, indices, masks) are constants,
    // and so are float tensors holding an infinity or NaN: PyTorch exports buffers such as
    // additive attention masks (-inf above the diagonal) beside the parameters, and no weight
    // that gradient descent can move holds one.
    bool state = runningStats.count(t.name()) > 0;
    bool weight = isFloat(ref->dtype()) && (state || allFinite(*ref));
    if (isFloat(ref->dtype()) && !weight)
      result.constantInitializers.emplace_back(t.name(), firstNaN(*ref));
    Value* param =
        weight ? f->addArgument(t.name(), ref->type(), state ? ArgKind::OptState : ArgKind::Param)
               : nullptr;
    if (param) (state ? result.state : result.weights)[t.name()] = ref;
    ctx.define(t.name(), param ? Entry{param, nullptr, ref} : Entry{nullptr, ref, nullptr});
  }

  const OpTable& table = opTable();
  for (const auto& node : g.node()) {
    ctx.setNode(&node);
    if (node.op_type() == "Identity" && node.input_size() == 1 && node.output_size() == 1 &&
        !node.output(0).empty() && result.weights.count(node.input(0))) {
      result.mergedInitializers[node.input(0)].push_back(node.output(0));
      if (opts.untieInitializers) {
        TensorRef w = result.weights.at(node.input(0));
        Value* copy = f->addArgument(node.output(0), w->type(), ArgKind::Param);
        result.weights[node.output(0)] = w;
        ctx.define(node.output(0), Entry{copy, nullptr, w});
        continue;
      }
    }
    std::vector<Entry> outs;
    Op* lastBefore = f->ops().empty() ? nullptr : f->ops().back().get();
    try {
      outs = table.at(node.op_type())(ctx);
      ctx.checkAllAttrsRead();
    } catch (const Error& e) {
      // A batch rebound on a model exported with a fixed batch breaks its baked-in shapes.
      if (!fixedBatchNote.empty()) throw Error(std::string(e.what()) + fixedBatchNote);
      throw;
    }
    if (!node.name().empty())
      for (auto it = lastBefore ? std::next(f->position(lastBefore)) : f->ops().begin();
           it != f->ops().end(); ++it)
        result.opOrigins.insert_or_assign(it->get(), node.name());
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      if (static_cast<size_t>(i) >= outs.size() ||
          (!outs[static_cast<size_t>(i)].value && !outs[static_cast<size_t>(i)].constant))
        ctx.fail("output " + std::to_string(i) + " ('" + node.output(i) + "') is not supported");
      ctx.define(node.output(i), outs[static_cast<size_t>(i)]);
    }
  }
  ctx.setNode(nullptr);
  // Only ops still in @main (an address freed by an erased op may be reused).
  std::unordered_map<const Op*, std::string> origins;
  for (const auto& op : f->ops())
    if (auto it = result.opOrigins.find(op.get()); it != result.opOrigins.end())
      origins.emplace(op.get(), std::move(it->second));
  result.opOrigins = std::move(origins);
  if (g.output_size() == 0) throw Error(path + ": the graph has no outputs");
  std::set<std::string> outputNames;
  for (const auto& vi : g.output()) {
    if (!outputNames.insert(vi.name()).second)
      throw Error(path + ": graph output '" + vi.name() + "' is listed twice");
    const Entry* e = ctx.lookup(vi.name());
    if (!e) throw Error(path + ": graph output '" + vi.name() + "' is never computed");
    Entry copy = *e;
    f->addResult(vi.name(), ctx.materialize(copy));
  }
  for (auto& [state, next] : ctx.carried)
    f->addResult(state->name(), ctx.materialize(next), static_cast<int64_t>(state->index()));
  result.state.insert(ctx.initialState.begin(), ctx.initialState.end());
  // Drop what the folding left unused and merge repeated constants.
  eliminateCommonSubexpressions(*f);
  eliminateDeadCode(*f);
  DiagEngine diags(path);
  if (!verifyFunction(*f, diags))
    throw InternalError("imported IR is invalid: " + diags.format(diags.diagnostics()[0]));
  return result;
}

} // namespace shardc
