#include "ShardingView.h"

#include "Html.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <tuple>

namespace shardc::report {
namespace {

std::string roleOf(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      out += name[i];
      continue;
    }
    out += '#';
    while (i + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 1])))
      ++i;
  }
  return out;
}

int64_t axisSize(const std::vector<AxisSize>& mesh, const std::string& axis) {
  for (const AxisSize& a : mesh)
    if (a.name == axis) return a.size;
  return 1;
}

// How one dimension is cut: pieces along it, and the class of the cut before piece i.
struct Cuts {
  int64_t pieces = 1, perChunk = 1;
  std::vector<std::pair<std::string, int64_t>> axes; // class, pieces between its cuts; major first
  std::string classBefore(int64_t i) const {
    if (i % perChunk == 0) return "cut chunk";
    for (const auto& [cls, block] : axes)
      if (i % block == 0) return "cut " + cls;
    return "cut";
  }
  bool mine(int64_t i) const { return i % perChunk == 0; } // device 0's pieces
};

Cuts cutsOf(const ArgView& a, size_t dim, const std::vector<AxisSize>& mesh) {
  Cuts c;
  if (dim >= a.dims.size()) return c;
  // An axis cuts between blocks of the pieces of the axes after it (minor ones).
  int64_t block = 1;
  for (auto axis = a.dims[dim].rbegin(); axis != a.dims[dim].rend(); ++axis) {
    c.axes.emplace_back(axisClass(mesh, *axis), block);
    block *= axisSize(mesh, *axis);
  }
  std::reverse(c.axes.begin(), c.axes.end());
  c.perChunk = block;
  c.pieces = block * (dim < a.chunks.size() ? std::max<int64_t>(a.chunks[dim], 1) : 1);
  return c;
}

std::string line(double x1, double y1, double x2, double y2, const std::string& cls) {
  return "<line class=\"" + cls + "\" x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) +
         "\" y2=\"" + px(y2) + "\"/>";
}

} // namespace

std::string axisClass(const std::vector<AxisSize>& mesh, const std::string& axis) {
  for (size_t i = 0; i < mesh.size(); ++i)
    if (mesh[i].name == axis) return "ax" + std::to_string(i % 6);
  return "ax-unknown";
}

std::string axisChips(const ArgView& arg, const std::vector<AxisSize>& mesh) {
  std::string out;
  for (const AxisSize& a : mesh)
    for (const auto& dim : arg.dims)
      if (std::find(dim.begin(), dim.end(), a.name) != dim.end()) {
        out += " <span class=\"chip " + axisClass(mesh, a.name) + "\">" + esc(a.name) + "</span>";
        break;
      }
  return out;
}

std::vector<ArgGroup> groupByRole(const std::vector<ArgView>& args) {
  std::map<std::tuple<std::string, std::string, std::vector<int64_t>, std::string>, size_t> index;
  std::vector<ArgGroup> groups;
  for (const ArgView& a : args) {
    std::string role = roleOf(a.name);
    auto [it, added] = index.try_emplace({a.kind, role, a.shape, a.sharding}, groups.size());
    if (added) groups.push_back({role, {}});
    groups[it->second].members.push_back(&a);
  }
  return groups;
}

std::string meshGrid(const std::vector<AxisSize>& mesh) {
  int64_t rows = mesh.size() > 1 ? mesh[0].size : 1, cols = 1;
  std::string across;
  for (size_t i = mesh.size() > 1 ? 1 : 0; i < mesh.size(); ++i) {
    cols *= mesh[i].size;
    across += (across.empty() ? "" : " x ") + mesh[i].name + " " + std::to_string(mesh[i].size);
  }
  double cell = std::clamp(640.0 / static_cast<double>(cols), 8.0, 44.0);
  double left = 110, top = 28;
  double w = left + cell * static_cast<double>(cols) + 10,
         h = top + cell * static_cast<double>(rows) + 10;
  std::string out = svgOpen("mesh-grid", w, h);
  std::string acrossClass = mesh.size() > 1 ? axisClass(mesh, mesh[1].name) : "ax0";
  out += svgText(left, 16, "→ " + across, "axis-label " + acrossClass);
  if (mesh.size() > 1)
    out += svgText(4, top + 14, "↓ " + mesh[0].name + " " + std::to_string(mesh[0].size),
                   "axis-label ax0");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int64_t d = r * cols + c;
      // The device's coordinate on each axis, the last axis fastest.
      std::string where;
      int64_t rest = d;
      for (size_t i = mesh.size(); i-- > 0;) {
        where = mesh[i].name + "=" + std::to_string(rest % mesh[i].size) +
                (where.empty() ? "" : ", ") + where;
        rest /= mesh[i].size;
      }
      double x = left + cell * static_cast<double>(c), y = top + cell * static_cast<double>(r);
      out += "<g class=\"device\"><rect x=\"" + px(x + 1) + "\" y=\"" + px(y + 1) + "\" width=\"" +
             px(cell - 2) + "\" height=\"" + px(cell - 2) + "\"><title>device " +
             std::to_string(d) + ": " + esc(where) + "</title></rect>";
      if (cell >= 20)
        out += svgText(x + cell / 2, y + cell / 2 + 4, std::to_string(d), "cell-label");
      out += "</g>";
    }
  return out + "</svg>";
}

std::string shardingDrawing(const ArgView& a, const std::vector<AxisSize>& mesh) {
  size_t rank = a.shape.size();
  double rows = rank >= 2 ? static_cast<double>(std::max<int64_t>(a.shape[rank - 2], 1)) : 1;
  double cols = rank >= 1 ? static_cast<double>(std::max<int64_t>(a.shape[rank - 1], 1)) : 1;
  double bw = 150, bh = 12;
  if (rank >= 2 && rows >= cols)
    bh = 120, bw = std::clamp(120 * std::sqrt(cols / rows), 14.0, 120.0);
  else if (rank >= 2)
    bh = std::clamp(150 * std::sqrt(rows / cols), 10.0, 120.0);
  if (rank == 0) bw = bh = 12;
  int layers = rank >= 3 ? (a.shape[0] > 1 || rank > 3 ? 2 : 1) : 0;
  double off = 7, x0 = 8, y0 = 8 + off * layers;
  double textX = 190, lineH = 15;
  double h = std::max(y0 + bh + 8, 12 + lineH * static_cast<double>(rank + 1));
  std::string out = svgOpen("sharding-drawing", 640, h);
  // Leading dimensions: layers behind the box, outlined in the colour of an axis splitting one.
  std::string leadClass = "layer";
  for (size_t d = 0; d + 2 < rank; ++d)
    if (d < a.dims.size() && !a.dims[d].empty())
      leadClass += " split " + axisClass(mesh, a.dims[d][0]);
  for (int k = layers; k >= 1; --k)
    out += "<rect class=\"" + leadClass + "\" x=\"" + px(x0 + off * k) + "\" y=\"" +
           px(y0 - off * k) + "\" width=\"" + px(bw) + "\" height=\"" + px(bh) + "\"/>";
  Cuts across = rank >= 1 ? cutsOf(a, rank - 1, mesh) : Cuts{};
  Cuts down = rank >= 2 ? cutsOf(a, rank - 2, mesh) : Cuts{};
  out += "<rect class=\"box\" x=\"" + px(x0) + "\" y=\"" + px(y0) + "\" width=\"" + px(bw) +
         "\" height=\"" + px(bh) + "\"/>";
  // Device 0's pieces, and the cuts between pieces; past 64 pieces along a dimension (chunks
  // times axis sizes) only its first piece is drawn, uncut.
  constexpr int64_t kMaxPieces = 64;
  double pw = bw / static_cast<double>(across.pieces), ph = bh / static_cast<double>(down.pieces);
  int64_t shownAcross = across.pieces <= kMaxPieces ? across.pieces : 1;
  int64_t shownDown = down.pieces <= kMaxPieces ? down.pieces : 1;
  if (across.pieces * down.pieces > 1)
    for (int64_t i = 0; i < shownAcross; ++i)
      for (int64_t j = 0; j < shownDown; ++j)
        if (across.mine(i) && down.mine(j))
          out += "<rect class=\"mine\" x=\"" + px(x0 + pw * static_cast<double>(i)) + "\" y=\"" +
                 px(y0 + ph * static_cast<double>(j)) + "\" width=\"" + px(pw) + "\" height=\"" +
                 px(ph) + "\"/>";
  if (across.pieces <= kMaxPieces)
    for (int64_t i = 1; i < across.pieces; ++i)
      out += line(x0 + pw * static_cast<double>(i), y0, x0 + pw * static_cast<double>(i), y0 + bh,
                  across.classBefore(i));
  if (down.pieces <= kMaxPieces)
    for (int64_t j = 1; j < down.pieces; ++j)
      out += line(x0, y0 + ph * static_cast<double>(j), x0 + bw, y0 + ph * static_cast<double>(j),
                  down.classBefore(j));
  out +=
      svgText(textX, 18, shapeText(a.shape) + " → " + shapeText(a.local) + " per device", "shape");
  for (size_t d = 0; d < rank; ++d) {
    std::string s = "dim " + std::to_string(d) + ": " + std::to_string(a.shape[d]);
    std::string cls = "dim";
    if (d < a.dims.size() && !a.dims[d].empty()) {
      s += " split over";
      for (const std::string& axis : a.dims[d])
        s += " " + axis + " (" + std::to_string(axisSize(mesh, axis)) + ")";
      cls += " split " + axisClass(mesh, a.dims[d][0]);
    }
    if (d < a.chunks.size() && a.chunks[d] > 1)
      s += " in " + std::to_string(a.chunks[d]) + " chunks";
    if (d < a.local.size()) s += " → " + std::to_string(a.local[d]);
    out += svgText(textX, 18 + lineH * static_cast<double>(d + 1), s, cls);
  }
  return out + "</svg>";
}

} // namespace shardc::report
