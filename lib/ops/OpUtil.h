// Helpers shared by the op definitions: broadcasting, strides, messages.
#pragma once

#include "shardc/ops/OpRegistry.h"

#include <string>
#include <vector>

namespace shardc::ops {

// Numpy broadcasting of two shapes; returns "" and sets `out`, or an error message.
std::string broadcastShapes(const Shape& a, const Shape& b, Shape& out);

std::vector<int64_t> rowMajorStrides(const Shape& shape);

// For every element of `out` (row-major), the flat index of the element of `in` that numpy
// broadcasting reads (in's shape is right-aligned against out's).
std::vector<int64_t> broadcastIndexMap(const Shape& out, const Shape& in);

// Reads an axis attribute and normalizes it against `rank`; "" on success.
std::string axisAttr(const OpSig& sig, const char* name, int64_t rank, int64_t& axis);

// Reads a list-of-axes attribute: normalized, sorted, unique; "" on success.
std::string axesAttr(const OpSig& sig, const char* name, int64_t rank, std::vector<int64_t>& axes);

std::string typeList(const std::vector<TensorType>& types);

inline double numelD(const TensorType& t) {
  return static_cast<double>(t.numel());
}

// Cost formula: `perElement` flops for every element of result 0.
CostFn flopsPerResultElement(double perElement);

// Sharding rule of numpy-broadcasting elementwise ops (any number of operands, one result):
// one factor per result dimension; an operand dimension broadcast from size 1 has none.
ShardingRule elementwiseRule(const OpSig& sig, const std::vector<TensorType>& results);
// One pass-through factor per dimension of `t`, appended to `rule`; returns the dims.
ShardingRule::Dims newDims(ShardingRule& rule, const Shape& shape,
                           FactorKind kind = FactorKind::PassThrough);
// Factors for a reshape from `in` to `out`: dims that split or merge evenly share factors;
// where sizes do not factor against each other, the dims involved need replication.
void reshapeFactors(ShardingRule& rule, const Shape& in, const Shape& out,
                    ShardingRule::Dims& inDims, ShardingRule::Dims& outDims);

} // namespace shardc::ops
