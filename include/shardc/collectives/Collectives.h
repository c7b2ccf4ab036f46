// Collective communication between the devices of a mesh, as the per-device (SPMD) program
// sees it. Every device runs the same sequence of collectives; each call works within the
// device's group for `axes`: the devices whose mesh coordinates agree on every axis not in
// `axes`. A device's rank in its group is its coordinates on `axes`, row-major in the order
// listed (the first axis varies slowest).
//
// Results are bitwise identical on every device of a group and for every implementation
// (threads or MPI): sums are taken in double (integers in int64), in group-rank order, then
// rounded once. Bad arguments (an unknown axis, a dim out of range or that does not divide,
// invalid pairs) throw shardc::Error, on every device alike.
#pragma once

#include "shardc/ops/Communicator.h"
#include "shardc/sharding/Mesh.h"

#include <string>
#include <vector>

namespace shardc {

class Collectives : public Communicator {
public:
  virtual const Mesh& mesh() const = 0;
  virtual int64_t device() const = 0;

  // Sum over the group; same shape.
  Tensor allReduce(const Tensor& x, const std::vector<std::string>& axes) override;
  // Concatenation of the group's tensors along `dim`, in rank order.
  Tensor allGather(const Tensor& x, const std::vector<std::string>& axes, int64_t dim) override;
  // Sum over the group, then rank r keeps piece r of `dim` (which must divide).
  Tensor reduceScatter(const Tensor& x, const std::vector<std::string>& axes, int64_t dim) override;
  // Piece r of `splitDim` goes to rank r; received pieces are concatenated along `concatDim`.
  Tensor allToAll(const Tensor& x, const std::vector<std::string>& axes, int64_t splitDim,
                  int64_t concatDim) override;
  // Rank pairs[2i] sends to rank pairs[2i+1]; a rank that receives nothing gets zeros.
  Tensor permute(const Tensor& x, const std::vector<std::string>& axes,
                 const std::vector<int64_t>& pairs) override;
  // Piece r of `dim` for this device's rank r (no communication).
  Tensor shardSlice(const Tensor& x, const std::vector<std::string>& axes,
                    int64_t dim) const override;

  // From now on, every sum over a group that spans `axis` (all_reduce, reduce_scatter) is
  // multiplied by `factor`, in double before it is rounded; integer sums then throw.
  void scaleSums(const std::string& axis, double factor) {
    scaledAxis_ = axis;
    sumScale_ = factor;
  }

  // This device's rank in its group for `axes`, and the group's size. Throw shardc::Error
  // for an axis the mesh lacks or one listed twice.
  int64_t groupRank(const std::vector<std::string>& axes) const;
  int64_t groupSize(const std::vector<std::string>& axes) const override;
  std::string meshText() const override { return mesh().str(); }

protected:
  // The device holding rank `rank` in this device's group for `axes`.
  int64_t groupDevice(const std::vector<std::string>& axes, int64_t rank) const;

  // The one primitive every collective above is built on: within the group for `axes`,
  // send[r] goes to rank r, and the result holds what each rank sent to this device, whose
  // types the caller knows (`recvTypes[r]`; a zero-element type where nothing is sent).
  virtual std::vector<Tensor> exchange(const std::vector<std::string>& axes,
                                       const std::vector<Tensor>& send,
                                       const std::vector<TensorType>& recvTypes) = 0;

private:
  // The sum of `parts` in order, times scaleSums' factor when `axes` span its axis.
  Tensor sum(const std::vector<Tensor>& parts, const std::vector<std::string>& axes) const;

  std::string scaledAxis_;
  double sumScale_ = 1;
};

} // namespace shardc
