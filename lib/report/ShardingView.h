// The partition drawn: the mesh as a grid of devices, and each argument as a box cut along the
// dimensions the mesh axes split, arguments grouped by structural role.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardc::report {

struct AxisSize {
  std::string name;
  int64_t size = 1;
};

// An argument of the per-device program, as `shardc inspect --json` lists it.
struct ArgView {
  std::string name, kind, sharding;
  std::vector<int64_t> shape, local;
  std::vector<std::vector<std::string>> dims; // mesh axes splitting each dimension, major first
  std::vector<int64_t> chunks;                // empty, or one per dimension
  int64_t localBytes = 0;
};

// Arguments of one role: the same kind, name up to its numbers (a layer's index), whole
// shape and sharding. 96 layers' `h.#.mlp.fc.weight` are one group.
struct ArgGroup {
  std::string role; // the name with each run of digits as '#'
  std::vector<const ArgView*> members;
};
// Groups in order of their first member.
std::vector<ArgGroup> groupByRole(const std::vector<ArgView>& args);

// CSS class of an axis' colour ("ax0".."ax5"): its position in the mesh.
std::string axisClass(const std::vector<AxisSize>& mesh, const std::string& axis);
// The mesh axes splitting `arg`, as coloured labels.
std::string axisChips(const ArgView& arg, const std::vector<AxisSize>& mesh);

// The devices as a grid: the first axis down, the others across (the last fastest), each
// cell numbered as the runtime numbers devices.
std::string meshGrid(const std::vector<AxisSize>& mesh);
// One argument: its box (the last two dimensions; leading ones drawn as layers behind), cut
// at every boundary between devices' pieces in the splitting axis' colour, device 0's piece
// filled; beside it, each dimension's whole size, axes and per-device size.
std::string shardingDrawing(const ArgView& arg, const std::vector<AxisSize>& mesh);

} // namespace shardc::report
