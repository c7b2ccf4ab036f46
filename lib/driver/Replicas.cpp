#include "Replicas.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/pef/Pef.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <sstream>

namespace shardc {
namespace {

bool usesData(const TensorSharding& s) {
  for (const auto& axes : s.dims)
    if (std::find(axes.begin(), axes.end(), kDataAxis) != axes.end()) return true;
  return std::find(s.partial.begin(), s.partial.end(), kDataAxis) != s.partial.end();
}

std::vector<std::string> axesOf(const Op& op) {
  std::vector<std::string> axes;
  std::stringstream in(op.attrs().getString("axes"));
  for (std::string a; std::getline(in, a, ',');)
    axes.push_back(a);
  return axes;
}

// A PEF's input or output whose layout splits a dim over the data axis: that dim of its whole
// type, N replicas' worth, becomes R replicas' worth.
void rescaleWhole(PefTensor& t, const TensorSharding& s, int64_t n, int64_t r) {
  for (size_t d = 0; d < s.dims.size() && d < t.type.shape.size(); ++d)
    if (std::find(s.dims[d].begin(), s.dims[d].end(), kDataAxis) != s.dims[d].end())
      t.type.shape[d] = t.type.shape[d] / n * r;
}

} // namespace

int64_t compiledReplicas(const LoadedPef& l) {
  std::optional<size_t> axis = l.mesh.axisIndex(kDataAxis);
  return l.partitioned() && axis ? l.mesh.axes()[*axis].size : 0;
}

int64_t replicasForRanks(const LoadedPef& l, int64_t ranks) {
  int64_t n = compiledReplicas(l);
  if (!n)
    throw Error("the PEF's mesh " + (l.partitioned() ? l.mesh.str() : std::string("(one device)")) +
                " has " + std::to_string(l.partitioned() ? l.mesh.numDevices() : 1) +
                " devices, but mpirun started " + std::to_string(ranks) +
                " ranks; only a PEF compiled with --data-parallel -ws N runs on more ranks");
  int64_t perReplica = l.mesh.numDevices() / n;
  if (ranks % perReplica)
    throw Error("mpirun started " + std::to_string(ranks) + " ranks; the PEF's replicas have " +
                std::to_string(perReplica) + " devices each (mesh " + l.mesh.str() +
                "), so the ranks must be a multiple of " + std::to_string(perReplica) +
                " (replicas x devices per replica)");
  return ranks / perReplica;
}

std::string setReplicas(LoadedPef& l, int64_t replicas, const std::string& why) {
  int64_t n = compiledReplicas(l);
  if (!n)
    throw Error(why + ": replicas are chosen at run time for a PEF compiled with "
                      "--data-parallel -ws N; this one has no data axis");
  if (replicas < n)
    throw Error(why + ": the PEF was compiled for at least " + std::to_string(n) +
                " replicas (-ws " + std::to_string(n) + "); run it on " + std::to_string(n) +
                " or more" +
                (l.mesh.numDevices() > n
                     ? " (" + std::to_string(n * (l.mesh.numDevices() / n)) + " or more ranks)"
                     : ""));
  if (replicas == n) return "";
  const Function& f = *l.entry;
  for (size_t i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->argKind() != ArgKind::Input && usesData(l.argShardings[i]))
      throw Error(why + ": '" + f.argument(i)->name() + "' is split over the data axis (" +
                  l.argShardings[i].str() +
                  ", optimizer-state sharding); such a PEF runs on its compiled " +
                  std::to_string(n) + " replicas only");
  std::vector<Op*> sums;
  for (const auto& fn : l.module->functions())
    for (const auto& op : fn->ops()) {
      if (!op->def().communicates) continue;
      std::vector<std::string> axes = axesOf(*op);
      if (std::find(axes.begin(), axes.end(), kDataAxis) == axes.end()) continue;
      if (op->name() != opname::kAllReduce || !isFloat(op->operand(0)->type().dtype))
        throw Error(why + ": @" + fn->name() + " has a " + op->name() + " of " +
                    op->operand(0)->type().str() +
                    " over the data axis (only float sums scale with the replicas); this PEF "
                    "runs on its compiled " +
                    std::to_string(n) + " replicas only");
      sums.push_back(op.get());
    }
  // The gradients' average over the replicas is such a sum; without one the replicas would
  // train apart.
  if (sums.empty() && l.pef.mode == "training")
    throw Error(why + ": the PEF's training step sums nothing over the data axis, so its "
                      "replicas would not share their gradients");
  for (Op* op : sums)
    op->attrs().set("group", op->attrs().getInt("group") / n * replicas);
  std::vector<MeshAxis> axes = l.mesh.axes();
  for (MeshAxis& a : axes)
    if (a.name == kDataAxis) a.size = replicas;
  for (size_t k = 0, i = 0; i < f.numArguments(); ++i)
    if (f.argument(i)->argKind() == ArgKind::Input)
      rescaleWhole(l.pef.inputs[k++], l.argShardings[i], n, replicas);
  for (size_t k = 0, i = 0; i < f.results().size(); ++i)
    if (f.results()[i].tiedArg < 0)
      rescaleWhole(l.pef.outputs[k++], l.resultShardings[i], n, replicas);
  l.mesh = Mesh(axes);
  l.dataSumScale = static_cast<double>(n) / static_cast<double>(replicas);
  std::string line = "running " + std::to_string(replicas) + " replicas of the PEF's " +
                     std::to_string(n) + " (mesh " + l.mesh.str() + "): each step takes " +
                     std::to_string(replicas) + " replicas' batches";
  if (!sums.empty())
    line += "; the " + std::to_string(sums.size()) + " sums over the data axis are scaled by " +
            std::to_string(n) + "/" + std::to_string(replicas);
  return line;
}

} // namespace shardc
