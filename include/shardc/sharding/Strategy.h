// Strategy files: the user's shardings for a model's arguments, by argument name.
//
//   # comment
//   mesh data=2, model=2
//   wte: [{}, {model}]
//   "h0.attn.w": [{}, {model}:3]
//
// The mesh line is optional when the IR declares the mesh. Names are written as in the
// text IR: bare when they are identifiers, double-quoted otherwise.
#pragma once

#include "shardc/sharding/Plan.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {
class Function;

struct StrategyEntry {
  std::string name; // of a function argument
  TensorSharding sharding;
  int64_t line;
};

struct Strategy {
  std::optional<Mesh> mesh;
  int64_t meshLine = 0;
  std::vector<StrategyEntry> entries;
};

// Checks the syntax, the mesh and that no argument is named twice; throws shardc::Error
// "file:line: message".
Strategy parseStrategy(std::string_view text, const std::string& filename);

// Checks every entry against `f`'s arguments and the mesh (the strategy's, else the
// plan's), then fixes them in `plan` as OriginKind::User. A plan without a mesh takes the
// strategy's; it must not hold shardings yet. Throws shardc::Error "file:line: message".
void applyStrategy(const Strategy& strategy, const Function& f, ShardingPlan& plan,
                   const std::string& filename);

// The plan's mesh and every argument's sharding, replicated ones too, so that applying it
// to the unannotated function gives the same argument shardings.
std::string writeStrategy(const Function& f, const ShardingPlan& plan);

} // namespace shardc
