#include "shardc/ir/Attribute.h"
#include "shardc/support/Error.h"

#include <algorithm>
#include <bit>

namespace shardc {

std::string_view attrKindName(AttrKind k) {
  switch (k) {
  case AttrKind::Bool:
    return "bool";
  case AttrKind::Int:
    return "integer";
  case AttrKind::Float:
    return "float";
  case AttrKind::String:
    return "string";
  case AttrKind::Ints:
    return "integer list";
  case AttrKind::Floats:
    return "float list";
  case AttrKind::Type:
    return "element type";
  case AttrKind::Tensor:
    return "dense tensor";
  }
  return "?";
}

bool Attr::operator==(const Attr& other) const {
  if (kind() != other.kind()) return false;
  switch (kind()) {
  case AttrKind::Float:
    return std::bit_cast<uint64_t>(asFloat()) == std::bit_cast<uint64_t>(other.asFloat());
  case AttrKind::Floats: {
    const auto &a = asFloats(), &b = other.asFloats();
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::bit_cast<uint64_t>(a[i]) != std::bit_cast<uint64_t>(b[i])) return false;
    return true;
  }
  case AttrKind::Tensor:
    return tensorRef() == other.tensorRef() || asTensor().identical(other.asTensor());
  default:
    return v_ == other.v_;
  }
}

void AttrDict::set(const std::string& name, Attr value) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const auto& e, const std::string& n) { return e.first < n; });
  if (it != entries_.end() && it->first == name)
    it->second = std::move(value);
  else
    entries_.insert(it, {name, std::move(value)});
}

const Attr* AttrDict::find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  return it != entries_.end() && it->first == name ? &it->second : nullptr;
}

const Attr& AttrDict::get(std::string_view name) const {
  const Attr* a = find(name);
  SHARDC_CHECK(a, "attribute missing: the verifier should have caught this");
  return *a;
}

} // namespace shardc
