// Sections of a device program: groups of ops that run as one unit on a chip. A section reads
// its inputs from device memory (DDR/HBM/RAM), keeps its intermediates on chip and writes its
// outputs back; the optimization levels decide how the program is cut into sections:
//   -o0  one op per section;
//   -o1  the ops a fusion rule matches form a section, every other op its own;
//   -o3  a whole-graph pass cuts each phase into the sections of least estimated time that
//        fit the target's per-section budget.
// Formation first orders the program's ops by phase (forward, backward, gradient reduction,
// optimizer; a valid order, see opPhases) and makes every section a contiguous run of ops, so
// a section runs as one unit wherever it starts.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {
class Function;
struct Target;
class FusionRules;

enum class Phase : uint8_t { Forward, Backward, GradReduce, Optimizer };
std::string_view phaseName(Phase p); // forward, backward, grad-reduce, optimizer
std::optional<Phase> parsePhase(std::string_view name);

// Each op's phase, in program order, from the program's structure alone (so it holds for any
// per-device program, partitioned or not):
//   forward     the ops the untied results (the loss, the outputs) depend on;
//   optimizer   elementwise ops outside the forward whose every reader is an optimizer op or a
//               tied result (the new parameters and state), walked back from those results;
//   grad-reduce collectives outside the forward whose every reader is an optimizer op or a
//               tied result (the data-parallel gradient all-reduce);
//   backward    the rest (gradients, recomputed activations, tensor-parallel collectives).
// Every operand of a forward op is forward, and nothing that feeds a backward op is a
// grad-reduce or optimizer op, so ordering ops by phase keeps the data flow.
std::vector<Phase> opPhases(const Function& f);

// Replaces the gradient reduction's all-reduces (grad-reduce phase, floating point) by
// bucketed ones: those over the same axes, in program order, concatenated up to
// `bucketBytes`, reduced once and split back. Returns how many all-reduces were merged.
int64_t bucketGradientReductions(Function& f, int64_t bucketBytes);

// Rewrites add(all_reduce(a), all_reduce(b)) over one group, each reduction read by the add
// alone (through reshapes, transposes and widening casts), as all_reduce(add(a, b)) (a sum is
// linear): gradient accumulation's sum of the micro-batches' gradients then reduces once, after
// the last micro-batch, and in f32 where bf16 gradients are cast to f32 parameters' type.
// Returns how many all-reduces it removed.
int64_t sinkReductionsIntoSums(Function& f);

struct Section {
  Phase phase = Phase::Forward;
  int64_t firstOp = 0, numOps = 0; // a contiguous run of ops in program order
  std::string rule;                // -o1: the fusion rule that formed it
  // Values (plan numbering: arguments, then op results in program order) read from and
  // written to device memory, and their bytes.
  std::vector<int64_t> inputs, outputs;
  int64_t inputBytes = 0, outputBytes = 0;
  // On-chip resources: buffers of intermediates in flight plus, where the target holds them on
  // chip, the weights read; and compute units (one per op that computes).
  int64_t onChipBytes = 0, computeUnits = 0;
  int64_t body = -1; // hypersection body: sections of one body share their compiled form
};

// Resource-scaling factors: the fraction of the section budget assumed per phase.
struct ScalingFactors {
  std::array<double, 4> byPhase{1, 1, 1, 1}; // indexed by Phase
  double of(Phase p) const { return byPhase[static_cast<size_t>(p)]; }
};

struct SectionOptions {
  int level = 3;                      // 0, 1 or 3
  const FusionRules* rules = nullptr; // -o1
  ScalingFactors scaling;
  bool hypersections = false; // --enable-hypersection
  // -o3: the ops the executor would run as one kernel were each phase one section (`phaseOf`:
  // each op's phase). A cut never splits one where the budget allows, so the kernels, and the
  // numbers they compute, do not depend on where the cuts fall: a recomputed copy of a forward
  // region fuses as the region did. Unset: cuts ignore kernels.
  std::function<std::vector<std::vector<int64_t>>(const Function& f,
                                                  const std::vector<int64_t>& phaseOf)>
      kernels;
};

// One instance of a hypersection body: ops [firstOp, firstOp + numOps) of the program ordered
// by phase. Every instance of a body has the same ops, types and inner data flow.
struct HyperInstance {
  int64_t body = 0, firstOp = 0, numOps = 0;
};

// A hypersection body made a function of the module (outlineHypersections): the ops of its
// first instance, run by a `call` op in place of each instance.
struct HypersectionBody {
  std::string function;
  Phase phase = Phase::Forward;
  std::vector<Section> sections; // of the body function, in its own numbering
  int64_t instances = 0;
};

using SectionLog = std::function<void(const std::string&)>;

// Orders `f`'s ops by phase (stable, sections contiguous) and cuts them into sections.
// Throws shardc::Error when an op cannot fit a section even alone at the phase's scaling
// factor (naming the op and the smallest factor that fits it).
// With o.hypersections, repeated runs (see findRepeats) are found after the ordering and put
// in `instances`: every instance is cut like the body's first one, its sections name the body.
std::vector<Section> formSections(Function& f, const Target& t, const SectionOptions& o,
                                  const SectionLog& log,
                                  std::vector<HyperInstance>* instances = nullptr);

// Makes each body of `instances` a function of f's module (a copy of its first instance's
// ops; arguments: the values it reads from outside, results: those read after it) and every
// instance one `call` of it. `sections` (formSections' for the flat program) become f's own:
// each call is one section naming its body. A body result that is in every instance an updated
// parameter or state, written over the argument the body reads, is tied to that argument in
// the body too, so the update stays in place.
std::vector<HypersectionBody> outlineHypersections(Function& f, const Target& t,
                                                   const std::vector<HyperInstance>& instances,
                                                   std::vector<Section>& sections);

// The bodies of a program that calls functions of its module (a model written with them and
// compiled with --enable-hypersection): each callee is one body, cut into sections on its own
// with the phase of its calls (all must share one), in the numbering formSections gave the
// calls' sections (`sections`, whose call sections take their bodies' largest on-chip needs).
std::vector<HypersectionBody> sectionCalledBodies(const Function& f, const Target& t,
                                                  const SectionOptions& o,
                                                  std::vector<Section>& sections,
                                                  const SectionLog& log);

// Fills each section's inputs, outputs and resources from the ops it covers.
void measureSections(const Function& f, const Target& t, std::vector<Section>& sections);

// The section model's time of each section on `t` (sectionSeconds of its arithmetic and its
// device-memory traffic), for comparison with measured times.
std::vector<double> estimateSections(const Function& f, const Target& t,
                                     const std::vector<Section>& sections);

// Section id of every op (program order), from contiguous sections covering the program.
std::vector<int64_t> sectionOfOps(const std::vector<Section>& sections, int64_t numOps);

// Checks sections read from a file against `f`: contiguous runs covering every op once, in
// order, with value ids and figures in range; a section naming a body is one call of
// bodyFunctions[body]. A body's own sections (bodyPhase set) all have its phase and name no
// body. Returns "" or a message naming what is wrong.
std::string checkSections(const std::vector<Section>& sections, const Function& f,
                          const std::vector<std::string>& bodyFunctions = {},
                          std::optional<Phase> bodyPhase = std::nullopt);

// Sections per phase and the largest ones, for the compile log.
std::string describeSections(const std::vector<Section>& sections);

} // namespace shardc
