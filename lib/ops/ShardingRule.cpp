#include "shardc/ops/ShardingRule.h"

namespace shardc {
namespace {

std::string factorName(int f) {
  // i..z, then i1, j1, ... for programs with many factors.
  int letters = 'z' - 'i' + 1;
  std::string n(1, static_cast<char>('i' + f % letters));
  if (f >= letters) n += std::to_string(f / letters);
  return n;
}

std::string dimsStr(const ShardingRule::Dims& dims) {
  std::string s = "[";
  for (size_t d = 0; d < dims.size(); ++d) {
    s += d ? "," : "";
    for (int f : dims[d])
      s += factorName(f);
    if (dims[d].empty()) s += "1"; // a size-1 (broadcast) dimension with no factor
  }
  return s + "]";
}

std::string listStr(const std::vector<ShardingRule::Dims>& list) {
  std::string s = "(";
  for (size_t i = 0; i < list.size(); ++i)
    s += (i ? "," : "") + dimsStr(list[i]);
  return s + ")";
}

} // namespace

int ShardingRule::addFactor(int64_t size, FactorKind kind) {
  factorSizes.push_back(size);
  factorKinds.push_back(kind);
  return static_cast<int>(factorSizes.size()) - 1;
}

std::string ShardingRule::str() const {
  std::string s = listStr(operands) + "->" + listStr(results) + " {";
  for (size_t f = 0; f < factorSizes.size(); ++f)
    s += (f ? ", " : "") + factorName(static_cast<int>(f)) + "=" + std::to_string(factorSizes[f]);
  s += "}";
  for (FactorKind kind : {FactorKind::Reduction, FactorKind::NeedReplication}) {
    std::string names;
    for (size_t f = 0; f < factorKinds.size(); ++f)
      if (factorKinds[f] == kind)
        names += (names.empty() ? "" : ",") + factorName(static_cast<int>(f));
    if (!names.empty())
      s += std::string(kind == FactorKind::Reduction ? " reduction={" : " need_replication={") +
           names + "}";
  }
  return s;
}

} // namespace shardc
