// Structural grouping of arguments: the same role in repeated blocks gives the same signature.
#include "shardc/search/Search.h"

#include "shardc/ir/IR.h"

#include <algorithm>
#include <map>

namespace shardc {
namespace {

// The uses of `v`, `depth` ops deep, as a canonical string: per use the op name and operand
// position, then the signatures of the op's results. Sorted, so use order does not matter.
std::string useSignature(const Value* v, int depth) {
  if (depth == 0) return "";
  std::vector<std::string> parts;
  for (const Use& u : v->uses()) {
    if (!u.user) {
      parts.push_back("return");
      continue;
    }
    std::string p = u.user->name() + "#" + std::to_string(u.index) + "(";
    for (size_t r = 0; r < u.user->numResults(); ++r)
      p += useSignature(u.user->result(r), depth - 1) + ";";
    parts.push_back(p + ")");
  }
  std::sort(parts.begin(), parts.end());
  std::string s;
  for (const std::string& p : parts)
    s += p + ",";
  return s;
}

} // namespace

std::string ArgumentGroup::str() const {
  std::string s = args.front()->name();
  if (args.size() > 1) s += " (+" + std::to_string(args.size() - 1) + " more)";
  return s;
}

std::vector<ArgumentGroup> groupArguments(const Function& f, const ShardingPlan& fixed,
                                          int signatureDepth) {
  std::vector<ArgumentGroup> groups;
  std::map<std::string, size_t> bySignature;
  for (size_t i = 0; i < f.numArguments(); ++i) {
    const Value* a = f.argument(i);
    const ValueSharding* s = fixed.find(a);
    if (s && s->origin.fixed()) continue;
    std::string sig = std::string(argKindName(a->argKind())) + " " + a->type().str() + " " +
                      useSignature(a, signatureDepth);
    auto [it, fresh] = bySignature.try_emplace(sig, groups.size());
    if (fresh) groups.push_back({{}, sig});
    groups[it->second].args.push_back(a);
  }
  // Inputs first (the batch decision carries furthest), then the largest groups, which weigh
  // most in memory and communication: the tree decides its first levels best. Ties keep
  // function order, so a parameter comes before its optimizer state.
  auto bytes = [](const ArgumentGroup& g) {
    int64_t n = 0;
    for (const Value* v : g.args)
      n += v->type().bytes();
    return n;
  };
  std::stable_sort(groups.begin(), groups.end(),
                   [&](const ArgumentGroup& x, const ArgumentGroup& y) {
                     bool xi = x.args.front()->argKind() == ArgKind::Input;
                     bool yi = y.args.front()->argKind() == ArgKind::Input;
                     return xi != yi ? xi : bytes(x) > bytes(y);
                   });
  return groups;
}

} // namespace shardc
