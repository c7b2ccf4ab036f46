#include "shardc/sharding/Mesh.h"

#include "shardc/support/Error.h"

#include <cctype>
#include <charconv>
#include <set>

namespace shardc {
namespace {

bool validAxisName(std::string_view n) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

// Splits "a, b" at commas outside braces.
std::vector<std::string_view> splitTop(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '{')
      ++depth;
    else if (s[i] == '}')
      --depth;
    else if (s[i] == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  parts.push_back(trim(s.substr(start)));
  return parts;
}

std::vector<std::string> parseAxisList(std::string_view s, std::string_view whole) {
  s = trim(s);
  if (s.size() < 2 || s.front() != '{' || s.back() != '}')
    throw Error("sharding '" + std::string(whole) + "': expected {axis, ...}, got '" +
                std::string(s) + "'");
  std::vector<std::string> axes;
  std::string_view inner = trim(s.substr(1, s.size() - 2));
  if (inner.empty()) return axes;
  for (std::string_view a : splitTop(inner)) {
    if (!validAxisName(a))
      throw Error("sharding '" + std::string(whole) + "': '" + std::string(a) +
                  "' is not an axis name");
    axes.emplace_back(a);
  }
  return axes;
}

std::string axisListStr(const std::vector<std::string>& axes) {
  std::string s = "{";
  for (size_t i = 0; i < axes.size(); ++i)
    s += (i ? ", " : "") + axes[i];
  return s + "}";
}

} // namespace

Mesh Mesh::parse(std::string_view spec) {
  std::vector<MeshAxis> axes;
  std::string whole(spec);
  if (trim(spec).empty()) throw Error("mesh '" + whole + "' is empty; write AXIS=N[,AXIS=N...]");
  for (std::string_view part : splitTop(spec)) {
    size_t eq = part.find('=');
    if (eq == std::string_view::npos)
      throw Error("mesh '" + whole + "': '" + std::string(part) + "' must be AXIS=N");
    std::string_view name = trim(part.substr(0, eq)), num = trim(part.substr(eq + 1));
    if (!validAxisName(name))
      throw Error("mesh '" + whole + "': '" + std::string(name) + "' is not an axis name");
    int64_t size = 0;
    auto r = std::from_chars(num.data(), num.data() + num.size(), size);
    if (r.ec != std::errc() || r.ptr != num.data() + num.size() || size < 1 || size > 65536)
      throw Error("mesh '" + whole + "': the size of axis '" + std::string(name) +
                  "' must be an integer from 1 to 65536");
    for (const MeshAxis& a : axes)
      if (a.name == name)
        throw Error("mesh '" + whole + "': axis '" + std::string(name) + "' appears twice");
    axes.push_back({std::string(name), size});
  }
  Mesh m(std::move(axes));
  if (m.numDevices() > kMaxDevices)
    throw Error("mesh '" + whole + "' has more than " + std::to_string(kMaxDevices) + " devices");
  return m;
}

int64_t Mesh::numDevices() const {
  int64_t n = 1;
  for (const MeshAxis& a : axes_)
    n *= a.size;
  return n;
}

std::optional<size_t> Mesh::axisIndex(std::string_view name) const {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].name == name) return i;
  return std::nullopt;
}

std::vector<int64_t> Mesh::coordinates(int64_t device) const {
  std::vector<int64_t> c(axes_.size());
  for (size_t i = axes_.size(); i-- > 0;) {
    c[i] = device % axes_[i].size;
    device /= axes_[i].size;
  }
  return c;
}

int64_t Mesh::device(const std::vector<int64_t>& coordinates) const {
  int64_t d = 0;
  for (size_t i = 0; i < axes_.size(); ++i)
    d = d * axes_[i].size + coordinates[i];
  return d;
}

int64_t Mesh::axisSize(std::string_view name) const {
  return axes_[*axisIndex(name)].size;
}

int64_t Mesh::groupSize(const std::vector<std::string>& axes) const {
  int64_t n = 1;
  for (const std::string& a : axes)
    n *= axisSize(a);
  return n;
}

std::string Mesh::str() const {
  std::string s;
  for (size_t i = 0; i < axes_.size(); ++i)
    s += (i ? "," : "") + axes_[i].name + "=" + std::to_string(axes_[i].size);
  return s;
}

bool TensorSharding::isReplicated() const {
  if (!partial.empty()) return false;
  for (const auto& d : dims)
    if (!d.empty()) return false;
  return true;
}

void TensorSharding::setChunks(size_t dim, int64_t c) {
  if (chunks.empty() && c == 1) return;
  chunks.resize(dims.size(), 1);
  chunks[dim] = c;
}

bool TensorSharding::operator==(const TensorSharding& o) const {
  if (dims != o.dims || partial != o.partial) return false;
  for (size_t d = 0; d < dims.size(); ++d)
    if (chunksOf(d) != o.chunksOf(d)) return false;
  return true;
}

std::string TensorSharding::str() const {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    s += (i ? ", " : "") + axisListStr(dims[i]);
    if (chunksOf(i) != 1) s += ":" + std::to_string(chunksOf(i));
  }
  s += "]";
  if (!partial.empty()) s += " partial" + axisListStr(partial);
  return s;
}

TensorSharding parseSharding(std::string_view text) {
  std::string whole(text);
  std::string_view s = trim(text);
  TensorSharding out;
  size_t close = s.find(']');
  if (s.empty() || s.front() != '[' || close == std::string_view::npos)
    throw Error("sharding '" + whole + "': expected [{axes}, ...] with one {} per dimension");
  std::string_view dims = trim(s.substr(1, close - 1));
  if (!dims.empty())
    for (std::string_view d : splitTop(dims)) {
      int64_t chunks = 1;
      size_t colon = d.rfind(':');
      if (colon != std::string_view::npos && d.find('}') < colon) {
        std::string_view num = trim(d.substr(colon + 1));
        auto r = std::from_chars(num.data(), num.data() + num.size(), chunks);
        if (r.ec != std::errc() || r.ptr != num.data() + num.size() || chunks < 1)
          throw Error("sharding '" + whole + "': chunk count '" + std::string(num) +
                      "' must be a positive integer");
        d = d.substr(0, colon);
      }
      out.dims.push_back(parseAxisList(d, whole));
      out.setChunks(out.dims.size() - 1, chunks);
    }
  std::string_view rest = trim(s.substr(close + 1));
  if (!rest.empty()) {
    if (rest.substr(0, 7) != "partial")
      throw Error("sharding '" + whole + "': unexpected '" + std::string(rest) + "'");
    out.partial = parseAxisList(rest.substr(7), whole);
    if (out.partial.empty())
      throw Error("sharding '" + whole + "': partial{} needs at least one axis");
  }
  return out;
}

std::string checkSharding(const TensorSharding& s, const TensorType& t, const Mesh& mesh) {
  if (!s.chunks.empty() && s.chunks.size() != s.dims.size())
    return "sharding " + s.str() + " has chunk counts for " + std::to_string(s.chunks.size()) +
           " of its " + std::to_string(s.dims.size()) + " dimensions";
  if (static_cast<int64_t>(s.dims.size()) != t.rank())
    return "sharding " + s.str() + " has " + std::to_string(s.dims.size()) +
           " dimensions, the tensor " + t.str() + " has " + std::to_string(t.rank());
  std::set<std::string> used;
  auto use = [&](const std::string& axis) -> std::string {
    if (!mesh.axisIndex(axis)) return "axis '" + axis + "' is not in the mesh " + mesh.str();
    if (!used.insert(axis).second) return "axis '" + axis + "' is used twice in " + s.str();
    return "";
  };
  for (size_t d = 0; d < s.dims.size(); ++d) {
    int64_t ways = 1, chunks = s.chunksOf(d);
    for (const std::string& axis : s.dims[d]) {
      std::string err = use(axis);
      if (!err.empty()) return err;
      int64_t size = mesh.axes()[*mesh.axisIndex(axis)].size;
      if (size < 1 || __builtin_mul_overflow(ways, size, &ways))
        return "dimension " + std::to_string(d) + " of " + s.str() +
               " is split over more devices "
               "than a count can hold";
    }
    if (chunks < 1)
      return "sharding " + s.str() + " has a chunk count below 1 on dimension " + std::to_string(d);
    // Without forming ways * chunks, which may overflow.
    if (t.shape[d] % ways || (t.shape[d] / ways) % chunks)
      return "dimension " + std::to_string(d) + " of " + t.str() + " (size " +
             std::to_string(t.shape[d]) + ") does not divide evenly over " +
             axisListStr(s.dims[d]) + " (" + std::to_string(ways) + " devices" +
             (s.chunksOf(d) > 1 ? " per chunk of " + std::to_string(s.chunksOf(d)) : "") + ")";
  }
  for (const std::string& axis : s.partial) {
    std::string err = use(axis);
    if (!err.empty()) return err;
  }
  return "";
}

Shape localShape(const TensorSharding& s, const TensorType& t, const Mesh& mesh) {
  Shape out = t.shape;
  for (size_t d = 0; d < s.dims.size(); ++d)
    for (const std::string& axis : s.dims[d])
      out[d] /= mesh.axes()[*mesh.axisIndex(axis)].size;
  return out;
}

} // namespace shardc
