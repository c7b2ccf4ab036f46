// What the kernels of collective ops call: the device's communication within its groups of
// the mesh. Declared here, below the kernels; lib/collectives implements it (threads, MPI),
// so the op registry needs no mesh and no transport. Semantics: shardc/collectives/Collectives.h.
#pragma once

#include "shardc/ir/Tensor.h"

#include <string>
#include <vector>

namespace shardc {

class Communicator {
public:
  virtual ~Communicator() = default;

  // The devices in this device's group for `axes`; throws shardc::Error for an axis the mesh
  // lacks.
  virtual int64_t groupSize(const std::vector<std::string>& axes) const = 0;
  // The mesh, as error messages show it.
  virtual std::string meshText() const = 0;

  virtual Tensor allReduce(const Tensor& x, const std::vector<std::string>& axes) = 0;
  virtual Tensor allGather(const Tensor& x, const std::vector<std::string>& axes, int64_t dim) = 0;
  virtual Tensor reduceScatter(const Tensor& x, const std::vector<std::string>& axes,
                               int64_t dim) = 0;
  virtual Tensor allToAll(const Tensor& x, const std::vector<std::string>& axes, int64_t splitDim,
                          int64_t concatDim) = 0;
  virtual Tensor permute(const Tensor& x, const std::vector<std::string>& axes,
                         const std::vector<int64_t>& pairs) = 0;
  virtual Tensor shardSlice(const Tensor& x, const std::vector<std::string>& axes,
                            int64_t dim) const = 0;
};

} // namespace shardc
