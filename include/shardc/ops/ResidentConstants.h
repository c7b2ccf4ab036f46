// The values a program computes once, when it is loaded, and keeps for every step: constants,
// and ops whose operands are all such values (not collectives, not calls), each result at most
// kMaxResidentBytes, larger ones being cheaper to produce in the step that reads them (a
// broadcast of a scalar to a gradient's shape, an iota counted in a loop). The compiled
// runtime folds exactly these (lib/exec/PlanBuilder.cpp), and the memory model counts them for
// the whole step (lib/cost/Memory.cpp).
#pragma once

#include <cstdint>
#include <unordered_set>

namespace shardc {
class Function;
class Value;

inline constexpr int64_t kMaxResidentBytes = int64_t(1) << 20;

std::unordered_set<const Value*> residentConstants(const Function& f);

} // namespace shardc
