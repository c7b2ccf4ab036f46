// The executable plan of one device program: which kernel runs which ops, in what order,
// and where every value lives during a step. Made at compile time (buildPlan), stored in the
// PEF, and bound to native kernels when the PEF is loaded (CompiledFunction).
//
// Values are numbered: the function's arguments first, then every op's results in program
// order. A value lives in one of:
//   Arena     bytes [offset, offset + size) of the device's one arena, shared over time by
//             values that are never live at once (assigned from liveness);
//   Argument  the buffer of argument `base` (an input, a parameter or optimizer state); a
//             tied result written in place into its argument's buffer is one;
//   View      bytes of value `base` starting at byte `offset` (reshape; contiguous slices);
//   Constant  computed once when the plan is bound (constants, small iotas, and small ops on
//             constants only, e.g. a causal mask), kept for every step;
//   Fused     never stored: an intermediate of a fused kernel that no other step reads;
//   Result    the output buffer of untied function result `base` (counting untied results
//             only), which the caller reads after the step: no copy out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {
class Function;
struct OpDef;

enum class ValueHome : uint8_t { Arena, Argument, View, Constant, Fused, Result };
std::string_view valueHomeName(ValueHome h);

struct PlanValue {
  ValueHome home = ValueHome::Arena;
  int64_t offset = 0; // Arena: arena offset; View: offset in the base value
  int64_t base = -1;  // Argument: argument index; View: the viewed value; Result: its index
};

// One kernel invocation. `ops` are indices into the function's op list (program order); a
// fused kernel covers several, the last of which is its anchor (where it runs).
struct PlanStep {
  std::string kernel; // kernel name: an op name, or a fused kernel's ("fused_elementwise", ...)
  std::vector<int64_t> ops;
  bool reference = false; // no native kernel: runs the op's reference kernel (listed by inspect)
};

struct ExecPlan {
  int64_t arenaBytes = 0;
  std::vector<PlanValue> values;
  std::vector<PlanStep> steps;

  // Steps that run a reference kernel, as "op name" strings, once each.
  std::vector<std::string> referenceOps() const;
  // Bytes of values kept as constants (computed at bind time), each distinct one once.
  int64_t constantBytes(const Function& f) const;
  // Per value id: for a constant, the id of the first constant computed by the same op (same
  // kind, attributes and result type) from the same constants, which holds its bytes; -1 for
  // other values. Micro-batches and rematerialized iotas repeat such constants.
  std::vector<int64_t> constantSources(const Function& f) const;
  // Per op of the planned function (program order): the step that runs it, or -1 for an op
  // no step runs (a view, a constant computed at bind time).
  std::vector<int64_t> stepOfOps(int64_t numOps) const;
};

// Plans `f` (a per-device program or an unpartitioned one). Deterministic. `sectionOf` (the
// section of each op, program order; empty: one section) bounds the fused kernels: a kernel
// never spans two sections.
ExecPlan buildPlan(const Function& f, const std::vector<int64_t>& sectionOf = {});
// The ops of each kernel buildPlan(f, sectionOf) runs (ordered by their last op), without
// laying out memory.
std::vector<std::vector<int64_t>> planKernelOps(const Function& f,
                                                const std::vector<int64_t>& sectionOf);

// Checks a plan read from a file against `f`: value and op numbering, every offset and view
// inside its buffer, each op covered once, steps in an order that respects the data flow.
// Returns "" or a message naming what is wrong.
std::string checkPlan(const ExecPlan& plan, const Function& f);

// A short human-readable account: steps by kernel, fused groups, arena size, views,
// in-place results, reference fallbacks.
std::string describePlan(const ExecPlan& plan, const Function& f);

// The family of native kernels that runs op `def` ("lanes", "wide", "matmul", "conv", "row",
// "reduce", "shape", "index", "pool", "random", "collective", "call"), or "" when its
// reference kernel runs it. Some families take only some element types (f32 for most).
std::string_view nativeKernelFamily(const OpDef& def);

} // namespace shardc
