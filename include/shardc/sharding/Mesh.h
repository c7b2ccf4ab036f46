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
  Mesh() = default;
  explicit Mesh(std::vector<MeshAxis> axes) : axes_(std::move(axes)) {}
  // "data=4,model=2"; throws shardc::Error naming the bad part.
  static Mesh parse(std::string_view spec);

  const std::vector<MeshAxis>& axes() const { return axes_; }
  int64_t numDevices() const;
  std::optional<size_t> axisIndex(std::string_view name) const;
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
struct TensorSharding {
  std::vector<std::vector<std::string>> dims;
  std::vector<std::string> partial;

  static TensorSharding replicated(int64_t rank) {
    return {std::vector<std::vector<std::string>>(static_cast<size_t>(rank)), {}};
  }
  bool isReplicated() const;
  // "[{data}, {}]", with " partial{model}" when partial.
  std::string str() const;
  bool operator==(const TensorSharding&) const = default;
};

// Parses the str() form; throws shardc::Error.
TensorSharding parseSharding(std::string_view text);

// "" when `s` is valid for a tensor of type `t` on `mesh`: one entry per dimension, known
// axes, each axis used at most once, every sharded dimension divisible by its axes' sizes.
// Otherwise a message naming the dimension and axis.
std::string checkSharding(const TensorSharding& s, const TensorType& t, const Mesh& mesh);

// The shape each device holds (checkSharding must have passed).
Shape localShape(const TensorSharding& s, const TensorType& t, const Mesh& mesh);

} // namespace shardc
