// Factor-based sharding rules (as in OpenXLA Shardy): every dimension of every operand and
// result is a list of factors (usually one; a reshape that merges dims gives the merged dim
// several), and each factor has a size and a kind saying what sharding it costs. matmul is
// ([i,k],[k,j])->([i,j]) {i=.., j=.., k=..} reduction={k}: sharding k leaves partial sums.
// Propagation, reshard insertion, the cost model and SPMD lowering all read this one rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardc {

enum class FactorKind {
  PassThrough,     // shard freely; operands and results agree
  Reduction,       // summed (or maxed) over: sharding it leaves a partial result
  NeedReplication, // must be whole on every device (softmax axis, concat axis, ...)
};

struct ShardingRule {
  std::vector<int64_t> factorSizes;
  std::vector<FactorKind> factorKinds;
  using Dims = std::vector<std::vector<int>>; // per dimension, its factors (major to minor)
  std::vector<Dims> operands;
  std::vector<Dims> results;

  // Adds a factor and returns its index.
  int addFactor(int64_t size, FactorKind kind = FactorKind::PassThrough);
  // "([i,k],[k,j])->([i,j]) {i=4, j=8, k=16} reduction={k}"; factors are named i, j, k, ...
  // in order of creation, a merged dimension prints as "ij".
  std::string str() const;
};

} // namespace shardc
