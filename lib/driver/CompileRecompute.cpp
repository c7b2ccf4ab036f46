// The recompute stage (--recompute): which activations the training step's backward pass
// recomputes. It rewrites the program the PEF runs (the per-device program when partitioned),
// after the last CSE, which would merge the recomputed copies back into the forward pass.
#include "CompileState.h"

#include "shardc/train/Recompute.h"

namespace shardc {
namespace {

// auto: the cheapest mode whose step fits the target's memory as the estimate prices it (in
// sections), each tried on a copy of the program; full when none fits (the memory stage then
// says by how much).
Recompute chooseRecompute(CompileState& s) {
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    CostReport c = priceProgramCopy(s, [r](Function& f) { recomputeActivations(f, r); });
    s.log.line(std::string("recompute auto: ") + recomputeName(r) + " gives a step of " +
               formatSeconds(c.stepSeconds) + " in " +
               formatBytes(static_cast<double>(c.memory.peak())) + " per device" +
               (c.fits() ? "" : " (does not fit)"));
    if (c.fits()) return r;
  }
  return Recompute::Full;
}

} // namespace

std::string recomputeMode(const CompileOptions& o) {
  if (!o.recompute.empty()) return o.recompute;
  return o.partition.autoPartition ? "auto" : "none";
}

std::vector<std::function<void(Function&)>> recomputeVariants(const std::string& mode) {
  std::vector<Recompute> modes;
  if (mode == "auto")
    modes = {Recompute::None, Recompute::Selective, Recompute::Full};
  else if (mode != "none")
    modes = {*parseRecompute(mode)};
  std::vector<std::function<void(Function&)>> variants;
  for (Recompute r : modes)
    variants.push_back([r](Function& f) { recomputeActivations(f, r); });
  return variants;
}

void recompute(CompileState& s) {
  std::string mode = recomputeMode(s.o);
  Recompute r = mode == "auto" ? chooseRecompute(s) : *parseRecompute(mode);
  RecomputeSummary summary = recomputeActivations(s.program(), r);
  if (s.pef.training) s.pef.training->recompute = recomputeName(r);
  s.log.line(std::string("recompute ") + recomputeName(r) + (mode == "auto" ? " (auto)" : "") +
             ": " + summary.str());
}

} // namespace shardc
