// Collective ops of per-device (SPMD) programs. `axes` names the mesh axes of the group
// (major to minor, comma-separated) and `group` is the product of their sizes, so shape
// rules need no mesh. Kernels run through the device's Communicator (KernelArgs::comm).
#include "OpFamilies.h"
#include "OpUtil.h"

#include "shardc/ops/Communicator.h"
#include "shardc/support/Error.h"

namespace shardc {
namespace {
using namespace ops;

// "data,model" -> {data, model}; "" -> no axes.
std::string parseAxes(const std::string& text, std::vector<std::string>& axes) {
  axes.clear();
  if (text.empty()) return "";
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string axis = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (axis.empty()) return "axes '" + text + "' has an empty axis name";
    for (const std::string& a : axes)
      if (a == axis) return "axes '" + text + "' lists '" + axis + "' twice";
    axes.push_back(axis);
    if (comma == std::string::npos) return "";
    start = comma + 1;
  }
}

std::string checkGroup(const OpSig& sig) {
  std::vector<std::string> axes;
  std::string err = parseAxes(sig.attrs.getString("axes"), axes);
  if (!err.empty()) return err;
  int64_t g = sig.attrs.getInt("group");
  if (g < 1) return "group must be at least 1, got " + std::to_string(g);
  if (axes.empty() && g != 1) return "group = " + std::to_string(g) + " needs mesh axes";
  return "";
}

// Checks the group and `name` (a dim that must divide into `group` pieces when `split`);
// returns "" and the normalized dim.
std::string groupDim(const OpSig& sig, const char* name, bool split, int64_t& dim) {
  std::string err = checkGroup(sig);
  if (err.empty()) err = axisAttr(sig, name, sig.operands[0].rank(), dim);
  if (!err.empty() || !split) return err;
  const TensorType& x = sig.operands[0];
  int64_t g = sig.attrs.getInt("group"), n = x.shape[static_cast<size_t>(dim)];
  if (n % g)
    return "dim " + std::to_string(dim) + " of " + x.str() + " does not divide into " +
           std::to_string(g) + " pieces";
  return "";
}

// Multiplies `dim` of `t` by the group size, refusing sizes past kMaxElements.
std::string gatherDim(const OpSig& sig, TensorType& t, int64_t dim) {
  int64_t g = sig.attrs.getInt("group");
  int64_t& n = t.shape[static_cast<size_t>(dim)];
  if (n > kMaxElements / g) return "dim " + std::to_string(dim) + " times the group is too large";
  n *= g;
  return "";
}

// The device's communicator, after checking that the op's group matches the mesh.
Communicator& deviceComm(const KernelArgs& a, const std::string& op,
                         std::vector<std::string>& axes) {
  if (!a.comm)
    throw Error("op '" + op +
                "' needs a device mesh (run the partitioned program with shardc run)");
  parseAxes(a.attrs.getString("axes"), axes);
  int64_t g = a.comm->groupSize(axes);
  if (g != a.attrs.getInt("group"))
    throw Error("axes '" + a.attrs.getString("axes") + "' span " + std::to_string(g) +
                " devices of the mesh " + a.comm->meshText() +
                ", the op says group = " + std::to_string(a.attrs.getInt("group")));
  return *a.comm;
}

using CollectiveFn = std::function<Tensor(Communicator&, const std::vector<std::string>& axes,
                                          const Tensor& x, const AttrDict& attrs)>;

// Bytes each device sends: the operand's bytes times `share(group)`.
void registerCollective(OpRegistry& r, const std::string& name, const std::string& summary,
                        std::vector<AttrSpec> extraAttrs, ShapeFn shape,
                        std::function<double(double group)> share, CollectiveFn run) {
  OpDef d;
  d.name = name;
  d.summary = summary;
  d.attrs = {{"axes", AttrKind::String, std::nullopt}, {"group", AttrKind::Int, std::nullopt}};
  d.attrs.insert(d.attrs.end(), extraAttrs.begin(), extraAttrs.end());
  d.inferTypes = std::move(shape);
  d.bytes = [share](const OpSig& sig, const std::vector<TensorType>&) {
    return static_cast<double>(sig.operands[0].bytes()) *
           share(static_cast<double>(sig.attrs.getInt("group")));
  };
  d.kernel = [name, run](const KernelArgs& a) {
    std::vector<std::string> axes;
    Communicator& comm = deviceComm(a, name, axes);
    return std::vector<Tensor>{run(comm, axes, *a.inputs[0], a.attrs)};
  };
  // Per-device programs are never partitioned again.
  d.shardingRule = [](const OpSig& sig, const std::vector<TensorType>& res) {
    ShardingRule rule;
    rule.operands = {newDims(rule, sig.operands[0].shape, FactorKind::NeedReplication)};
    rule.results = {newDims(rule, res[0].shape, FactorKind::NeedReplication)};
    return rule;
  };
  d.communicates = true;
  r.add(std::move(d));
}

std::string checkPairs(const OpSig& sig) {
  int64_t g = sig.attrs.getInt("group");
  const auto& pairs = sig.attrs.getInts("pairs");
  if (pairs.size() % 2) return "pairs must list (source, target) ranks, got an odd count";
  std::vector<bool> source(static_cast<size_t>(g)), target(static_cast<size_t>(g));
  for (size_t i = 0; i < pairs.size(); i += 2) {
    int64_t s = pairs[i], t = pairs[i + 1];
    std::string pair = "pair (" + std::to_string(s) + ", " + std::to_string(t) + ")";
    if (s < 0 || s >= g || t < 0 || t >= g)
      return pair + " names a rank outside the group of " + std::to_string(g);
    if (source[static_cast<size_t>(s)] || target[static_cast<size_t>(t)])
      return pair + " reuses a source or a target";
    source[static_cast<size_t>(s)] = target[static_cast<size_t>(t)] = true;
  }
  return "";
}

} // namespace

void registerCollectiveOps(OpRegistry& r) {
  registerCollective(
      r, "all_reduce", "sum over the group", {},
      [](const OpSig& sig, std::vector<TensorType>& res) {
        res = {sig.operands[0]};
        return checkGroup(sig);
      },
      [](double g) { return 2 * (g - 1) / g; },
      [](Communicator& c, const auto& axes, const Tensor& x, const AttrDict&) {
        return c.allReduce(x, axes);
      });
  registerCollective(
      r, "all_gather", "concatenate the group's tensors along `dim`, in rank order",
      {{"dim", AttrKind::Int, std::nullopt}},
      [](const OpSig& sig, std::vector<TensorType>& res) {
        int64_t dim;
        std::string err = groupDim(sig, "dim", false, dim);
        res = {sig.operands[0]};
        return err.empty() ? gatherDim(sig, res[0], dim) : err;
      },
      [](double g) { return g - 1; },
      [](Communicator& c, const auto& axes, const Tensor& x, const AttrDict& attrs) {
        return c.allGather(x, axes, attrs.getInt("dim"));
      });
  registerCollective(
      r, "reduce_scatter", "sum over the group; rank r keeps piece r of `dim`",
      {{"dim", AttrKind::Int, std::nullopt}},
      [](const OpSig& sig, std::vector<TensorType>& res) {
        int64_t dim;
        std::string err = groupDim(sig, "dim", true, dim);
        if (!err.empty()) return err;
        res = {sig.operands[0]};
        res[0].shape[static_cast<size_t>(dim)] /= sig.attrs.getInt("group");
        return std::string();
      },
      [](double g) { return (g - 1) / g; },
      [](Communicator& c, const auto& axes, const Tensor& x, const AttrDict& attrs) {
        return c.reduceScatter(x, axes, attrs.getInt("dim"));
      });
  registerCollective(
      r, "all_to_all",
      "piece r of `split_dim` goes to rank r; received pieces concatenate along `concat_dim`",
      {{"split_dim", AttrKind::Int, std::nullopt}, {"concat_dim", AttrKind::Int, std::nullopt}},
      [](const OpSig& sig, std::vector<TensorType>& res) {
        int64_t split, cat;
        std::string err = groupDim(sig, "split_dim", true, split);
        if (err.empty()) err = axisAttr(sig, "concat_dim", sig.operands[0].rank(), cat);
        if (!err.empty()) return err;
        res = {sig.operands[0]};
        res[0].shape[static_cast<size_t>(split)] /= sig.attrs.getInt("group");
        return gatherDim(sig, res[0], cat);
      },
      [](double g) { return (g - 1) / g; },
      [](Communicator& c, const auto& axes, const Tensor& x, const AttrDict& attrs) {
        return c.allToAll(x, axes, attrs.getInt("split_dim"), attrs.getInt("concat_dim"));
      });
  registerCollective(
      r, "collective_permute",
      "rank pairs[2i] sends to rank pairs[2i+1]; a rank that receives nothing gets zeros",
      {{"pairs", AttrKind::Ints, std::nullopt}},
      [](const OpSig& sig, std::vector<TensorType>& res) {
        res = {sig.operands[0]};
        std::string err = checkGroup(sig);
        return err.empty() ? checkPairs(sig) : err;
      },
      [](double) { return 1.0; },
      [](Communicator& c, const auto& axes, const Tensor& x, const AttrDict& attrs) {
        return c.permute(x, axes, attrs.getInts("pairs"));
      });
  registerCollective(
      r, "shard_slice", "this device's piece of `dim` (rank r keeps piece r); no communication",
      {{"dim", AttrKind::Int, std::nullopt}},
      [](const OpSig& sig, std::vector<TensorType>& res) {
        int64_t dim;
        std::string err = groupDim(sig, "dim", true, dim);
        if (!err.empty()) return err;
        res = {sig.operands[0]};
        res[0].shape[static_cast<size_t>(dim)] /= sig.attrs.getInt("group");
        return std::string();
      },
      [](double) { return 0.0; },
      [](Communicator& c, const auto& axes, const Tensor& x, const AttrDict& attrs) {
        return c.shardSlice(x, axes, attrs.getInt("dim"));
      });
}

} // namespace shardc
