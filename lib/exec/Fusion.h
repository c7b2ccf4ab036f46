// Kernel groups of a device program: which ops run together as one kernel. The one pass that
// decides fusion legality; the plan builder lays out memory around its groups, and the
// sections of the optimization levels bound it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {
class Function;
class Op;

// Ops computed per element on f32 (and i1) lanes: unary and binary arithmetic, compare,
// where, casts between them, gelu, broadcast (an index map), iota (an index, exact in f32
// up to kMaxExactIndex), and a compare of integers with such an iota (one-hot masks).
bool isLaneOp(const Op& op);
// Whether the lane kernels' table (KernelsElementwise.cpp) has op `name`.
bool isLaneOpName(std::string_view name);
bool isLaneIota(const Op& op);
constexpr int64_t kMaxExactIndex = int64_t(1) << 24;

struct KernelGroup {
  std::string kernel;       // "fused_elementwise", "matmul", or the single op's name
  std::vector<int64_t> ops; // indices in program order; the last runs the group
};

// `constant[i]`: op i is computed once at bind time (it and its operands are constants).
// `sectionOf[i]`: op i's section (lib/dataflow); a group never spans two sections. Empty: the
// whole program is one section.
// Returns the groups of the remaining ops, ordered by their last op.
std::vector<KernelGroup> formGroups(const Function& f, const std::vector<const Op*>& ops,
                                    const std::vector<bool>& constant,
                                    const std::vector<int64_t>& sectionOf);

} // namespace shardc
