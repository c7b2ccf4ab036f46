#include "shardc/transforms/OutlineBlocks.h"

#include "shardc/ir/Builder.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Printer.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"

#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

namespace shardc {
namespace {

bool isConstant(const Op& op) {
  return op.name() == opname::kConstant && op.numOperands() == 0;
}

// The block index `origin` names: the number standing where the pattern has N.
std::optional<int64_t> blockOf(const std::string& origin, const std::string& prefix,
                               const std::string& suffix) {
  for (size_t at = origin.find(prefix); at != std::string::npos; at = origin.find(prefix, at + 1)) {
    size_t d = at + prefix.size(), e = d;
    while (e < origin.size() && e - d < 9 && std::isdigit(static_cast<unsigned char>(origin[e])))
      ++e;
    if (e > d && origin.compare(e, suffix.size(), suffix) == 0)
      return std::stoll(origin.substr(d, e - d));
  }
  return std::nullopt;
}

// Whether `op` computes from parameters, state and constants alone (a mask from a buffer).
bool fromWeightsAlone(const Op& op, std::unordered_map<const Op*, bool>& memo) {
  if (auto it = memo.find(&op); it != memo.end()) return it->second;
  bool alone = true;
  for (const Value* v : op.operands())
    alone = alone && (v->isArgument() ? v->argKind() != ArgKind::Input
                                      : fromWeightsAlone(*v->definingOp(), memo));
  memo[&op] = alone;
  return alone;
}

// A block that reads what another block computed from weights alone (the exporter's merged
// mask buffer, whose comparison the first layer makes for all) gets its own copy of those
// ops, so that the blocks read alike.
void untangle(Function& f, std::unordered_map<const Op*, int64_t>& member) {
  std::unordered_map<const Op*, bool> memo;
  std::vector<Op*> order;
  for (const auto& op : f.ops())
    if (member.count(op.get())) order.push_back(op.get());
  for (Op* user : order) {
    int64_t k = member.at(user);
    std::unordered_map<const Value*, Value*> copies; // per reading op: the copies it reads
    Builder b(f);
    b.setInsertionPoint(user);
    std::function<Value*(Value*)> own = [&](Value* v) -> Value* {
      const Op* d = v->definingOp();
      auto it = d ? member.find(d) : member.end();
      if (it == member.end() || it->second == k || !fromWeightsAlone(*d, memo)) return v;
      if (auto c = copies.find(v); c != copies.end()) return c->second;
      std::unordered_map<const Value*, Value*> map;
      for (Value* x : d->operands())
        map[x] = own(x);
      Op* copy = b.clone(*d, map);
      member[copy] = k;
      for (size_t r = 0; r < d->numResults(); ++r)
        copies[d->result(r)] = copy->result(r);
      return copies.at(v);
    };
    for (size_t i = 0; i < user->numOperands(); ++i)
      if (Value* mine = own(user->operand(i)); mine != user->operand(i)) user->setOperand(i, mine);
  }
}

// One block: its ops (program order), what it reads from outside (first-use order;
// constants apart, copied into the body) and its values read after it.
struct Block {
  int64_t index = 0;
  std::vector<Op*> ops;
  std::vector<Value*> reads, constants, escaping;
  std::vector<Op*> after; // ops between its first and last that depend on it
  std::string text;       // its body, printed without names
};

// Fills reads/escaping/after; returns "" or why the block cannot be a call.
std::string analyze(Function& f, Block& b) {
  std::unordered_set<const Op*> in(b.ops.begin(), b.ops.end()), dependent;
  std::unordered_set<const Value*> seen;
  for (Op* op : b.ops)
    for (Value* v : op->operands()) {
      if (v->definingOp() && in.count(v->definingOp())) continue;
      if (!seen.insert(v).second) continue;
      (v->definingOp() && isConstant(*v->definingOp()) ? b.constants : b.reads).push_back(v);
    }
  for (Op* op : b.ops)
    for (size_t r = 0; r < op->numResults(); ++r)
      for (const Use& u : op->result(r)->uses())
        if (!u.user || !in.count(u.user)) {
          b.escaping.push_back(op->result(r));
          break;
        }
  // Between its first and last op: an outside op reading the block must not feed it.
  for (auto it = f.position(b.ops.front()); it != std::next(f.position(b.ops.back())); ++it) {
    Op* op = it->get();
    bool inside = in.count(op) > 0, reads = false;
    for (Value* v : op->operands()) {
      const Op* d = v->definingOp();
      if (!d) continue;
      if (inside && dependent.count(d))
        return "op '" + op->name() + "' reads, through '" + d->name() +
               "' outside the block, what the block computes";
      reads |= !inside && (in.count(d) || dependent.count(d));
    }
    if (reads) {
      dependent.insert(op);
      b.after.push_back(op);
    }
  }
  return "";
}

// The body of `b` built into `into` (empty).
void build(Function& into, const Block& b) {
  Builder builder(into);
  std::unordered_map<const Value*, Value*> map;
  for (size_t k = 0; k < b.reads.size(); ++k) {
    const Value* v = b.reads[k];
    map[v] = into.addArgument("in" + std::to_string(k), v->type(),
                              v->isArgument() ? v->argKind() : ArgKind::Input);
  }
  for (Value* c : b.constants)
    builder.clone(*c->definingOp(), map);
  for (Op* op : b.ops)
    builder.clone(*op, map);
  for (auto& op : into.ops())
    for (size_t r = 0; r < op->numResults(); ++r)
      op->result(r)->setName("");
  for (size_t k = 0; k < b.escaping.size(); ++k)
    into.addResult("out" + std::to_string(k), map.at(b.escaping[k]));
}

// The first line where two printed bodies differ.
std::string firstDifference(const std::string& a, const std::string& b) {
  size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at])
    ++at;
  size_t begin = a.rfind('\n', at == 0 ? 0 : at - 1);
  begin = begin == std::string::npos ? 0 : begin + 1;
  size_t end = a.find('\n', at);
  return a.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

void replaceByCall(Function& f, const Block& b, const Function& body) {
  Builder builder(f);
  auto next = std::next(f.position(b.ops.back()));
  if (next == f.ops().end())
    builder.setInsertionPointToEnd();
  else
    builder.setInsertionPoint(next->get());
  Op* call = builder.call(body, b.reads);
  for (size_t k = 0; k < b.escaping.size(); ++k) {
    call->result(k)->setName(b.escaping[k]->name());
    b.escaping[k]->replaceAllUsesWith(call->result(k));
  }
  auto insertAt = std::next(f.position(call));
  for (Op* op : b.after)
    f.ops().splice(insertAt, f.ops(), f.position(op));
  for (auto it = b.ops.rbegin(); it != b.ops.rend(); ++it)
    f.eraseOp(*it);
}

} // namespace

std::vector<std::string> outlineBlocks(Function& f,
                                       const std::unordered_map<const Op*, std::string>& origins,
                                       const std::string& pattern) {
  size_t n = pattern.find('N');
  if (n == std::string::npos || pattern.find('N', n + 1) != std::string::npos)
    throw Error("--hypersection-pattern '" + pattern +
                "' must hold exactly one N, standing for the block's index (as in '/h.N/')");
  std::string prefix = pattern.substr(0, n), suffix = pattern.substr(n + 1);
  std::unordered_map<const Op*, int64_t> member;
  for (const auto& op : f.ops()) {
    auto it = origins.find(op.get());
    if (it == origins.end() || isConstant(*op)) continue;
    if (std::optional<int64_t> k = blockOf(it->second, prefix, suffix)) member[op.get()] = *k;
  }
  untangle(f, member);
  std::map<int64_t, Block> blocks;
  for (const auto& op : f.ops())
    if (auto it = member.find(op.get()); it != member.end()) {
      Block& b = blocks[it->second];
      b.index = it->second;
      b.ops.push_back(op.get());
    }
  std::vector<std::string> log;
  if (blocks.size() < 2) {
    log.push_back("--hypersection-pattern '" + pattern + "' names " +
                  std::to_string(blocks.size()) + " block(s) of @" + f.name() +
                  ": nothing to share");
    return log;
  }
  // Blocks by body, in block order.
  std::map<std::string, std::vector<int64_t>> byText;
  std::vector<std::string> texts;
  for (auto& [k, b] : blocks) {
    std::string why = analyze(f, b);
    if (!why.empty()) {
      log.push_back("block " + std::to_string(k) + " stays inline: " + why);
      continue;
    }
    Function candidate("block");
    build(candidate, b);
    b.text = printFunction(candidate);
    auto [it, fresh] = byText.try_emplace(b.text);
    if (fresh) texts.push_back(b.text);
    it->second.push_back(k);
  }
  Module* m = f.module();
  const std::string* common = nullptr; // the body most blocks share
  for (const auto& [text, members] : byText)
    if (!common || members.size() > byText.at(*common).size()) common = &text;
  int bodies = 0;
  for (const std::string& text : texts) {
    const std::vector<int64_t>& members = byText.at(text);
    const Block& first = blocks.at(members.front());
    if (members.size() < 2) {
      log.push_back("block " + std::to_string(first.index) + " stays inline: " +
                    (*common != text
                         ? "it differs from the others, first at: " + firstDifference(text, *common)
                         : std::string("no other block is like it")));
      continue;
    }
    std::string name = f.name() + "_block" + (bodies ? "_" + std::to_string(bodies + 1) : "");
    while (m->findFunction(name))
      name += "_";
    ++bodies;
    Function* body = m->addFunction(name);
    build(*body, first);
    std::string shown;
    for (int64_t k : members)
      shown += (shown.empty() ? "" : ", ") + std::to_string(k);
    log.push_back("--hypersection-pattern '" + pattern + "': blocks " + shown + " share @" + name +
                  " (" + std::to_string(body->ops().size()) + " ops)");
    // Analyzed again: an earlier block's call now stands for what this one reads.
    for (int64_t k : members) {
      Block now;
      now.ops = blocks.at(k).ops;
      if (analyze(f, now).empty()) replaceByCall(f, now, *body);
    }
  }
  return log;
}

} // namespace shardc
