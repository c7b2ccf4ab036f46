// Hypersection detection: runs of ops repeated back to back within one phase of a program
// ordered by phase (the layers of a transformer, their gradients, their parameters' updates).
// Two runs are instances of one body when, op for op, they have the same op, attributes and
// operand and result types (local shapes and dtypes: the program is partitioned already, so
// equal shardings show as equal local types and equal collectives), their operands come from
// the same relative position inside the run, and the values they read from outside the run
// repeat in the same pattern (the same outside value read at the same places).
#include "SectionUtil.h"

#include "shardc/ir/IR.h"
#include "shardc/ir/Printer.h"

#include <functional>
#include <unordered_map>

namespace shardc {
namespace {

// A body is worth a function of its own from this many ops on, half of them computing.
constexpr int64_t kMinBodyOps = 8;
// Periods tried at each op: the distances to its next occurrences of the same signature.
constexpr int kMaxCandidates = 256;

class RepeatFinder {
public:
  explicit RepeatFinder(const Function& f) {
    for (const auto& op : f.ops()) {
      index_[op.get()] = static_cast<int64_t>(ops_.size());
      ops_.push_back(op.get());
      sig_.push_back(signature(*op));
    }
    computingBefore_.assign(1, 0);
    for (const Op* op : ops_)
      computingBefore_.push_back(computingBefore_.back() + !computesNothing(*op));
    next_.assign(ops_.size(), -1);
    std::unordered_map<uint64_t, int64_t> seen;
    for (size_t i = ops_.size(); i-- > 0;) {
      auto it = seen.find(sig_[i]);
      if (it != seen.end()) next_[i] = it->second;
      seen[sig_[i]] = static_cast<int64_t>(i);
    }
  }

  // "" when [b, b + p) repeats [a, a + p); else what differs, naming the ops.
  std::string differs(int64_t a, int64_t b, int64_t p) const {
    std::unordered_map<const Value*, size_t> outerA, outerB; // outside value -> first-use order
    for (int64_t j = 0; j < p; ++j) {
      const Op& x = *ops_[static_cast<size_t>(a + j)];
      const Op& y = *ops_[static_cast<size_t>(b + j)];
      if (sig_[static_cast<size_t>(a + j)] != sig_[static_cast<size_t>(b + j)] ||
          &x.def() != &y.def() || !(x.attrs() == y.attrs()) || x.numOperands() != y.numOperands() ||
          x.numResults() != y.numResults())
        return describe(b + j) + " differs from " + describe(a + j);
      for (size_t r = 0; r < x.numResults(); ++r)
        if (x.result(r)->type() != y.result(r)->type())
          return describe(b + j) + " makes " + y.result(r)->type().str() + " where " +
                 describe(a + j) + " makes " + x.result(r)->type().str();
      for (size_t i = 0; i < x.numOperands(); ++i) {
        const Value* u = x.operand(i);
        const Value* v = y.operand(i);
        std::string what = "operand " + std::to_string(i) + " of " + describe(b + j);
        if (u->type() != v->type())
          return what + " is " + v->type().str() + " where the body reads " + u->type().str();
        int64_t du = defIndex(u) - a, dv = defIndex(v) - b;
        bool innerU = du >= 0 && du < p, innerV = dv >= 0 && dv < p;
        if (innerU != innerV || (innerU && (du != dv || u->index() != v->index())))
          return what + " comes from a different place than in the body";
        if (innerU) continue;
        size_t ou = outerA.emplace(u, outerA.size()).first->second;
        size_t ov = outerB.emplace(v, outerB.size()).first->second;
        if (ou != ov) return what + " reads its outside inputs in another pattern than the body";
      }
    }
    return "";
  }

  // Ops of [a, a + p) that compute (a body of views and constants is not worth a call).
  int64_t computing(int64_t a, int64_t p) const {
    return computingBefore_[static_cast<size_t>(a + p)] - computingBefore_[static_cast<size_t>(a)];
  }

  // The first occurrence after `i` of an op with its signature, or -1.
  int64_t next(int64_t i) const { return next_[static_cast<size_t>(i)]; }

  std::string describe(int64_t i) const {
    const Op& op = *ops_[static_cast<size_t>(i)];
    std::string s = "op " + std::to_string(i) + " (" + op.name();
    if (!op.result(0)->name().empty()) s += " %" + op.result(0)->name();
    return s + ")";
  }

private:
  int64_t defIndex(const Value* v) const {
    return v->definingOp() ? index_.at(v->definingOp()) : -1;
  }

  static uint64_t signature(const Op& op) {
    std::string s = op.name();
    for (const auto& [name, value] : op.attrs().entries())
      s += "|" + name + "=" + printAttr(value);
    for (const Value* v : op.operands())
      s += "|" + v->type().str();
    s += "->";
    for (size_t r = 0; r < op.numResults(); ++r)
      s += "|" + op.result(r)->type().str();
    return std::hash<std::string>()(s);
  }

  std::vector<const Op*> ops_;
  std::unordered_map<const Op*, int64_t> index_;
  std::vector<uint64_t> sig_;
  std::vector<int64_t> next_;
  std::vector<int64_t> computingBefore_; // computing ops among the first i
};

struct Candidate {
  int64_t period = 0, count = 0;
  std::string stop; // why the run of instances ended before the phase did ("" if it did not)
};

} // namespace

std::vector<HyperInstance> findRepeats(const Function& f, const std::vector<Phase>& phase,
                                       const SectionLog& log) {
  RepeatFinder finder(f);
  std::vector<HyperInstance> out;
  int64_t n = static_cast<int64_t>(phase.size()), bodies = 0;
  for (int64_t begin = 0; begin < n;) {
    int64_t end = begin + 1;
    while (end < n && phase[static_cast<size_t>(end)] == phase[static_cast<size_t>(begin)])
      ++end;
    for (int64_t s = begin; s < end;) {
      Candidate best;
      int tries = 0;
      for (int64_t j = finder.next(s); j >= 0 && tries < kMaxCandidates; j = finder.next(j)) {
        ++tries;
        int64_t p = j - s;
        if (s + 2 * p > end) break;
        // k periods of the best run repeat exactly when it does and cover no more than it, so
        // trying them (every multiple of a layer, each over the whole phase) would only cost.
        if (best.count >= 2 && p % best.period == 0 && p / best.period <= best.count) continue;
        if (p < kMinBodyOps || finder.computing(s, p) < kMinBodyOps / 2 ||
            !finder.differs(s, j, p).empty())
          continue;
        Candidate c{p, 2, ""};
        while (s + (c.count + 1) * p <= end) {
          std::string why = finder.differs(s, s + c.count * p, p);
          if (!why.empty()) {
            c.stop = std::move(why);
            break;
          }
          ++c.count;
        }
        if (c.period * c.count > best.period * best.count) best = std::move(c);
      }
      if (best.count < 2) {
        ++s;
        continue;
      }
      // The same body may repeat again later in the phase (after a different block).
      int64_t body = bodies;
      for (const HyperInstance& h : out)
        if (h.numOps == best.period &&
            phase[static_cast<size_t>(h.firstOp)] == phase[static_cast<size_t>(s)] &&
            finder.differs(h.firstOp, s, best.period).empty()) {
          body = h.body;
          break;
        }
      std::string at;
      for (int64_t k = 0; k < best.count; ++k) {
        out.push_back({body, s + k * best.period, best.period});
        if (k < 8) at += (k ? ", " : "") + std::to_string(s + k * best.period);
      }
      if (best.count > 8) at += ", ...";
      if (log && body < bodies) {
        log("hypersection body " + std::to_string(body) + ": " + std::to_string(best.count) +
            " more instances, at ops " + at);
      } else if (log) {
        log("hypersection body " + std::to_string(bodies) + " (" +
            std::string(phaseName(phase[static_cast<size_t>(s)])) + ", " +
            std::to_string(best.period) + " ops from " + finder.describe(s) +
            "): " + std::to_string(best.count) + " instances share it, at ops " + at);
        if (!best.stop.empty())
          log("hypersection body " + std::to_string(bodies) + ": the run at op " +
              std::to_string(s + best.count * best.period) + " cannot join it: " + best.stop);
      }
      if (body == bodies) ++bodies;
      s += best.period * best.count;
    }
    begin = end;
  }
  return out;
}

} // namespace shardc
