// A device mesh (named axes with sizes) and tensor shardings over it.
#pragma once

#include "shardc/ir/Types.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardc {

struct MeshAxis {
  std::string name;
  int64_t size;
  bool operator==(const MeshAxis&) const = default;
};

// Devices are numbered row-major over the axes: the first axis varies slowest, so for
// data=2,model=2 devices 0 and 1 share data coordinate 0.
class Mesh {
public:
  // The most devices a mesh the user describes may have (--mesh, -ws, --n-chips).
  static constexpr int64_t kMaxDevices = 65536;

public:
  Mesh() = default;
  explicit Mesh(std::vector<MeshAxis> axes) : axes_(std::move(axes)) {}
  // "data=4,model=2"; throws shardc::Error naming the bad part.
  static Mesh parse(std::string_view spec);

  const std::vector<MeshAxis>& axes() const { return axes_; }
  int64_t numDevices() const;
  std::optional<size_t> axisIndex(std::string_view name) const;
  // Size of a known axis; the product of the sizes of `axes` (1 for none).
  int64_t axisSize(std::string_view name) const;
  int64_t groupSize(const std::vector<std::string>& axes) const;
  std::vector<int64_t> coordinates(int64_t device) const;
  int64_t device(const std::vector<int64_t>& coordinates) const;
  std::string str() const;
  bool operator==(const Mesh&) const = default;

private:
  std::vector<MeshAxis> axes_;
};

// How a tensor is laid out on a mesh: per dimension the mesh axes it is split over
// (major to minor; none: replicated along that dimension), and the axes over which the
// values are partial sums still to be reduced.
//
// A dimension may also be "chunked": viewed as [c, n/c] (c equal chunks, e.g. the fused
// q|k|v columns of an attention projection), with each chunk split over the axes, so a
// device holds its slice of every chunk, chunk after chunk. Written `{model}:3`.
struct TensorSharding {
  std::vector<std::vector<std::string>> dims;
  std::vector<std::string> partial;
  std::vector<int64_t> chunks; // empty, or one per dimension (1: not chunked)

  int64_t chunksOf(size_t dim) const { return dim < chunks.size() ? chunks[dim] : 1; }
  void setChunks(size_t dim, int64_t c);

  static TensorSharding replicated(int64_t rank) {
    return {std::vector<std::vector<std::string>>(static_cast<size_t>(rank)), {}, {}};
  }
  bool isReplicated() const;
  // "[{data}, {}]", with " partial{model}" when partial.
  std::string str() const;
  // Equal as layouts (chunks of 1 and an empty chunks list are the same).
  bool operator==(const TensorSharding& o) const;
};

// Parses the str() form; throws shardc::Error.
TensorSharding parseSharding(std::string_view text);

// "" when `s` is valid for a tensor of type `t` on `mesh`: one entry per dimension, known
// axes, each axis used at most once, every sharded dimension divisible by its chunks times
// its axes' sizes.
// Otherwise a message naming the dimension and axis.
std::string checkSharding(const TensorSharding& s, const TensorType& t, const Mesh& mesh);

// The shape each device holds (checkSharding must have passed).
Shape localShape(const TensorSharding& s, const TensorType& t, const Mesh& mesh);

} // namespace shardc
