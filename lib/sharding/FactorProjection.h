// Moving shardings between tensor dimensions and the factors of an op's sharding rule, the
// one translation that propagation and SPMD lowering share.
#pragma once

#include "shardc/ops/ShardingRule.h"
#include "shardc/sharding/Mesh.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc {

// How one factor is split: over `axes` (major to minor), each of `chunks` equal chunks of
// the factor separately (see TensorSharding's chunked dimensions).
struct FactorSharding {
  std::vector<std::string> axes;
  int64_t chunks = 1;
  bool operator==(const FactorSharding&) const = default;
  // Both could hold at once: the same chunks and one axis list a prefix of the other.
  bool compatibleWith(const FactorSharding& o) const;
};

// The factors' shardings that a tensor with sharding `s` and rule dims `dims` implies, one
// entry per factor of `rule` (nullopt for factors the tensor lacks). Axes a factor cannot
// take (sizes that do not divide) are dropped, with the axes after them in that dimension.
std::vector<std::optional<FactorSharding>> projectToFactors(const TensorSharding& s,
                                                            const ShardingRule::Dims& dims,
                                                            const ShardingRule& rule,
                                                            const Mesh& mesh);

// The tensor sharding that factor shardings `factors` give a tensor with rule dims `dims`
// (no partial axes). Where a dimension's factors cannot be laid out as one block split (a
// factor sharded after one that is partly sharded), the later factors' axes are dropped.
TensorSharding projectToTensor(const std::vector<FactorSharding>& factors,
                               const ShardingRule::Dims& dims, const ShardingRule& rule,
                               const Mesh& mesh);

} // namespace shardc
