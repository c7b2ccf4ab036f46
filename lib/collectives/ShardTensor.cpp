#include "shardc/collectives/ShardTensor.h"

#include "shardc/support/Error.h"

#include <cstring>

namespace shardc {
namespace {

void checkLayout(const TensorSharding& s, const TensorType& whole, const Mesh& mesh) {
  if (!s.partial.empty())
    throw Error("sharding " + s.str() + " holds partial sums, not pieces of a tensor");
  std::string err = checkSharding(s, whole, mesh);
  if (!err.empty()) throw Error(err);
}

// For every element of `device`'s piece, in row-major order, its flat index in the whole
// tensor of shape `shape`.
std::vector<int64_t> pieceOffsets(const TensorSharding& s, const Shape& shape, const Mesh& mesh,
                                  int64_t device) {
  std::vector<int64_t> coords = mesh.coordinates(device);
  // Per dimension, the whole index of each local index.
  std::vector<std::vector<int64_t>> maps;
  int64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t pieces = 1, p = 0;
    for (const std::string& axis : s.dims[d]) {
      size_t i = *mesh.axisIndex(axis);
      pieces *= mesh.axes()[i].size;
      p = p * mesh.axes()[i].size + coords[i];
    }
    int64_t chunks = s.chunksOf(d), chunk = shape[d] / chunks, len = chunk / pieces;
    std::vector<int64_t> map;
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t j = 0; j < len; ++j)
        map.push_back(c * chunk + p * len + j);
    count *= static_cast<int64_t>(map.size());
    maps.push_back(std::move(map));
  }
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  std::vector<int64_t> offsets;
  std::vector<size_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t at = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      at += maps[d][idx[d]] * strides[d];
    offsets.push_back(at);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < maps[d].size()) break;
      idx[d] = 0;
    }
  }
  return offsets;
}

} // namespace

Tensor shardOf(const Tensor& whole, const TensorSharding& s, const Mesh& mesh, int64_t device) {
  checkLayout(s, whole.type(), mesh);
  if (device < 0 || device >= mesh.numDevices())
    throw Error("device " + std::to_string(device) + " is not in the mesh " + mesh.str());
  Tensor local(TensorType{whole.dtype(), localShape(s, whole.type(), mesh)});
  size_t es = dtypeSize(whole.dtype()), k = 0;
  for (int64_t at : pieceOffsets(s, whole.shape(), mesh, device))
    std::memcpy(local.data() + es * k++, whole.data() + es * static_cast<size_t>(at), es);
  return local;
}

Tensor assemble(const std::vector<Tensor>& perDevice, const TensorSharding& s, const Mesh& mesh) {
  if (static_cast<int64_t>(perDevice.size()) != mesh.numDevices())
    throw Error("got " + std::to_string(perDevice.size()) + " pieces for the " +
                std::to_string(mesh.numDevices()) + " devices of the mesh " + mesh.str());
  const TensorType& local = perDevice[0].type();
  if (static_cast<int64_t>(s.dims.size()) != local.rank())
    throw Error("sharding " + s.str() + " does not fit the pieces' type " + local.str());
  TensorType type = local;
  std::vector<bool> used(mesh.axes().size(), false);
  for (size_t d = 0; d < s.dims.size(); ++d)
    for (const std::string& axis : s.dims[d]) {
      auto i = mesh.axisIndex(axis);
      if (!i) throw Error("axis '" + axis + "' is not in the mesh " + mesh.str());
      type.shape[d] *= mesh.axes()[*i].size;
      used[*i] = true;
    }
  checkLayout(s, type, mesh);
  Tensor whole(type);
  size_t es = dtypeSize(type.dtype);
  for (int64_t dev = 0; dev < mesh.numDevices(); ++dev) {
    const Tensor& piece = perDevice[static_cast<size_t>(dev)];
    if (piece.type() != local)
      throw Error("device " + std::to_string(dev) + " holds " + piece.type().str() +
                  ", device 0 holds " + local.str());
    // One replica of each piece: the device at coordinate 0 on every axis `s` leaves unused.
    std::vector<int64_t> coords = mesh.coordinates(dev);
    bool replica = false;
    for (size_t i = 0; i < coords.size(); ++i)
      replica |= !used[i] && coords[i] != 0;
    if (replica) continue;
    size_t k = 0;
    for (int64_t at : pieceOffsets(s, type.shape, mesh, dev))
      std::memcpy(whole.data() + es * static_cast<size_t>(at), piece.data() + es * k++, es);
  }
  return whole;
}

} // namespace shardc
