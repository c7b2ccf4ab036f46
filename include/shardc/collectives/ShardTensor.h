// Moving whole tensors to and from their per-device pieces on the host: weights and inputs
// given whole are cut with shardOf, outputs are put back together with assemble.
#pragma once

#include "shardc/ir/Tensor.h"
#include "shardc/sharding/Mesh.h"

#include <vector>

namespace shardc {

// The piece of `whole` that `device` holds under `s`: along each dimension, piece p of the
// equal pieces over s.dims[d], p being the device's coordinates on those axes, row-major
// (major to minor). A chunked dimension (s.chunksOf(d) = c > 1) is cut into c chunks first,
// each split the same way; the piece is the device's slice of every chunk, in chunk order.
// Throws shardc::Error when `s` does not fit `whole` on `mesh` or is partial.
Tensor shardOf(const Tensor& whole, const TensorSharding& s, const Mesh& mesh, int64_t device);

// The inverse of shardOf over all devices (perDevice[d] is device d's piece). Where `s`
// replicates over an axis, the device at coordinate 0 on that axis is taken. Throws
// shardc::Error for a partial sharding (its sum is not a layout) or mismatched pieces.
Tensor assemble(const std::vector<Tensor>& perDevice, const TensorSharding& s, const Mesh& mesh);

} // namespace shardc
