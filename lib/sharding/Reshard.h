// Emits the collectives that move a tensor from one sharding to another in the per-device
// program: reduce-scatter or all-reduce for pending sums, all-to-all where an axis moves
// from one dimension to another, collective-permute where one axis takes another's place,
// all-gather for axes a dimension loses, and a local shard_slice for axes it gains.
#pragma once

#include "shardc/sharding/Mesh.h"

namespace shardc {
class Builder;
class Value;

// `local` holds this device's piece of a tensor laid out as `from`; returns the piece laid
// out as `to` (which has no partial axes).
Value* emitReshard(Builder& b, const Mesh& mesh, Value* local, TensorSharding from,
                   const TensorSharding& to);

} // namespace shardc
