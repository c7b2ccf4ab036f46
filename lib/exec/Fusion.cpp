#include "Fusion.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"

#include <algorithm>
#include <map>
#include <set>

namespace shardc {
namespace {

// Row kernels that take an elementwise prologue, and the longest row they buffer.
const std::set<std::string_view> kRowOps = {"softmax", "log_softmax", "layer_norm"};
constexpr int64_t kMaxRow = 1 << 16;

bool laneType(DType t) {
  return t == DType::F32 || t == DType::I1;
}

// Epilogue ops a matmul kernel applies to its result before storing it (oneDNN post-ops).
// Not gelu: oneDNN 2.6's gelu post-op made the GPT's [1024,256]x[256,1024] GEMM 3.7 ms
// slower, where gelu's own loop over the stored result takes 1.6 ms.
const std::set<std::string_view> kEpilogueUnary = {"relu", "tanh", "sigmoid", "exp", "abs"};
const std::set<std::string_view> kEpilogueBinary = {"add", "sub", "mul"};

// A reduce_sum or reduce_mean of f32 over a leading or a trailing run of axes (not all of
// them): the reductions that take an elementwise prologue.
bool reducesRun(const Op& op) {
  if ((op.name() != opname::kReduceSum && op.name() != opname::kReduceMean) ||
      op.result(0)->type().dtype != DType::F32)
    return false;
  int64_t rank = op.operand(0)->type().rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : op.attrs().getInts("axes"))
    reduced[static_cast<size_t>(*normalizeAxis(a, rank))] = true;
  size_t changes = 0;
  for (size_t d = 1; d < reduced.size(); ++d)
    changes += reduced[d] != reduced[d - 1];
  return changes == 1;
}

bool isResult(const Function& f, const Value* v) {
  for (const auto& r : f.results())
    if (r.value == v) return true;
  return false;
}

bool swapsLastTwo(const Op& t) {
  const auto& perm = t.attrs().getInts("perm");
  size_t n = perm.size();
  if (n < 2) return false;
  for (size_t i = 0; i + 2 < n; ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return perm[n - 2] == static_cast<int64_t>(n - 1) && perm[n - 1] == static_cast<int64_t>(n - 2);
}

// A transpose a matmul reads (or writes) through strides: the source's innermost dim stays
// one of the last two, so each matrix keeps a unit stride (oneDNN's GEMM needs one).
bool keepsInnerDim(const Op& t) {
  const auto& perm = t.attrs().getInts("perm");
  size_t n = perm.size();
  if (n < 2) return false;
  int64_t inner = static_cast<int64_t>(n - 1);
  return perm[n - 1] == inner || perm[n - 2] == inner;
}

class GroupFormer {
public:
  GroupFormer(const Function& f, const std::vector<const Op*>& ops,
              const std::vector<bool>& constant, const std::vector<int64_t>& sectionOf)
      : f_(f), ops_(ops), constant_(constant), sectionOf_(sectionOf), groupOf_(ops.size(), -1) {
    for (size_t i = 0; i < ops.size(); ++i)
      index_[ops[i]] = static_cast<int64_t>(i);
  }

  std::vector<KernelGroup> run() {
    for (size_t i = 0; i < ops_.size(); ++i)
      if (!constant_[i]) place(static_cast<int64_t>(i));
    for (size_t i = 0; i < ops_.size(); ++i)
      if (!constant_[i] && ops_[i]->name() == opname::kMatmul) fuseMatmul(static_cast<int64_t>(i));
    for (size_t i = 0; i < ops_.size(); ++i)
      if (!constant_[i] && (kRowOps.count(ops_[i]->name()) || reducesRun(*ops_[i])))
        fuseRowPrologue(static_cast<int64_t>(i));
    std::vector<KernelGroup> out;
    for (Group& g : groups_) {
      if (g.ops.empty()) continue;
      std::sort(g.ops.begin(), g.ops.end());
      if (g.kernel == "fused_elementwise" && g.ops.size() == 1)
        g.kernel = ops_[static_cast<size_t>(g.ops[0])]->name();
      out.push_back({g.kernel, g.ops});
    }
    std::sort(out.begin(), out.end(), [](const KernelGroup& a, const KernelGroup& b) {
      return a.ops.back() < b.ops.back();
    });
    return out;
  }

private:
  struct Group {
    std::string kernel;
    std::vector<int64_t> ops;
    Shape shape;
    bool open = true; // no op outside it has read one of its values yet
  };

  int64_t producer(const Value* v) const {
    if (v->isArgument()) return -1;
    auto it = index_.find(v->definingOp());
    return it == index_.end() ? -1 : it->second;
  }

  // Ops a and b may share a kernel: they are in one section.
  bool together(int64_t a, int64_t b) const {
    return sectionOf_.empty() ||
           sectionOf_[static_cast<size_t>(a)] == sectionOf_[static_cast<size_t>(b)];
  }

  // The op whose bytes `v` reads: its producer, or through views (a reshape, a contiguous
  // slice: marked constant, as they run in no step) the op they view; -1 for arguments and
  // folded constants.
  int64_t source(const Value* v) const {
    int64_t p = producer(v);
    while (p >= 0 && constant_[static_cast<size_t>(p)]) {
      const Op& op = *ops_[static_cast<size_t>(p)];
      if (op.numOperands() == 0) return -1;
      p = producer(op.operand(0));
    }
    return p;
  }

  void place(int64_t i) {
    const Op& op = *ops_[static_cast<size_t>(i)];
    int64_t target = -1;
    if (isLaneOp(op)) {
      // Join the open elementwise groups over the same shape that feed this op, merged into
      // one: an open group has no reader outside it yet, so it may run as late as this op
      // (the two halves of an Adam moment, a where over two broadcasts).
      std::vector<int64_t> feeding;
      for (Value* v : op.operands()) {
        int64_t p = producer(v);
        if (p < 0 || constant_[static_cast<size_t>(p)] || !together(p, i)) continue;
        int64_t g = groupOf_[static_cast<size_t>(p)];
        if (g >= 0 && groups_[static_cast<size_t>(g)].kernel == "fused_elementwise" &&
            groups_[static_cast<size_t>(g)].open &&
            groups_[static_cast<size_t>(g)].shape == op.result(0)->type().shape) {
          target = std::max(target, g);
          feeding.push_back(g);
        }
      }
      if (target < 0) {
        target = static_cast<int64_t>(groups_.size());
        groups_.push_back({"fused_elementwise", {}, op.result(0)->type().shape});
      }
      for (int64_t g : feeding)
        if (g != target)
          for (int64_t m : std::vector<int64_t>(groups_[static_cast<size_t>(g)].ops))
            moveTo(m, target);
    } else {
      target = static_cast<int64_t>(groups_.size());
      groups_.push_back({op.name(), {}, {}});
    }
    groups_[static_cast<size_t>(target)].ops.push_back(i);
    groupOf_[static_cast<size_t>(i)] = target;
    // A group read from outside (also through a view) must run before this op: it takes no
    // later members.
    for (Value* v : op.operands()) {
      int64_t p = source(v);
      if (p >= 0 && groupOf_[static_cast<size_t>(p)] != target)
        groups_[static_cast<size_t>(groupOf_[static_cast<size_t>(p)])].open = false;
    }
  }

  // The single op reading `v`, or -1 (several readers, a function result, none).
  int64_t soleUser(const Value* v) const {
    if (v->uses().size() != 1 || isResult(f_, v)) return -1;
    return index_.at(v->uses()[0].user);
  }

  void moveTo(int64_t op, int64_t group) {
    auto& from = groups_[static_cast<size_t>(groupOf_[static_cast<size_t>(op)])].ops;
    from.erase(std::find(from.begin(), from.end(), op));
    groups_[static_cast<size_t>(group)].ops.push_back(op);
    groupOf_[static_cast<size_t>(op)] = group;
  }

  // A softmax, log_softmax or layer_norm over the last dim, or a sum or mean over leading or
  // trailing axes, takes the elementwise group that makes its operand (a causal mask's where,
  // a scale, a product to sum) as a prologue computed row by row or block by block, when
  // nothing else reads that operand and every other value of the group is read only after it.
  void fuseRowPrologue(int64_t r) {
    const Op& row = *ops_[static_cast<size_t>(r)];
    const Value* x = row.operand(0);
    int64_t rank = x->type().rank();
    if (x->type().dtype != DType::F32 || rank == 0 || soleUser(x) != r) return;
    if (kRowOps.count(row.name()) &&
        (*normalizeAxis(row.attrs().getInt("axis"), rank) != rank - 1 ||
         x->type().shape.back() > kMaxRow))
      return;
    int64_t p = producer(x);
    if (p < 0 || constant_[static_cast<size_t>(p)] || !together(p, r)) return;
    int64_t g = groupOf_[static_cast<size_t>(p)];
    if (g < 0 || groups_[static_cast<size_t>(g)].kernel != "fused_elementwise") return;
    for (int64_t m : groups_[static_cast<size_t>(g)].ops)
      for (size_t k = 0; k < ops_[static_cast<size_t>(m)]->numResults(); ++k)
        for (const Use& u : ops_[static_cast<size_t>(m)]->result(k)->uses()) {
          auto reader = index_.find(u.user); // none: a function result, read after every op
          if (reader != index_.end() && groupOf_[static_cast<size_t>(reader->second)] != g &&
              reader->second < r)
            return;
        }
    std::vector<int64_t> moved = groups_[static_cast<size_t>(g)].ops;
    for (int64_t m : moved)
      moveTo(m, groupOf_[static_cast<size_t>(r)]);
  }

  // sum over the batch dims of transpose(X) x G, X [..b, m, k] and G [..b, m, n] with the same
  // batch dims: the weight gradient of a matmul whose weight every batch element shares. It is
  // X^T G with X seen as [b m, k] and G as [b m, n], one GEMM with the batch in the
  // contraction, when the transpose is the matmul's own (folded into this step, group g).
  // G may come through a folded transpose too (multi-head attention's [seq, batch, dim]
  // layout makes one): the kernel copies it into X's row order first.
  bool sumsBatchOfTransposed(const Op& mm, const Op& red, int64_t g) const {
    if (red.name() != opname::kReduceSum) return false;
    const Shape& out = mm.result(0)->type().shape;
    size_t batch = out.size() - 2;
    if (batch == 0) return false;
    std::vector<int64_t> axes;
    for (int64_t a : red.attrs().getInts("axes"))
      axes.push_back(*normalizeAxis(a, static_cast<int64_t>(out.size())));
    std::sort(axes.begin(), axes.end());
    for (size_t i = 0; i < axes.size(); ++i)
      if (axes.size() != batch || axes[i] != static_cast<int64_t>(i)) return false;
    const Value *a = mm.operand(0), *b = mm.operand(1);
    int64_t t = producer(a);
    if (t < 0 || groupOf_[static_cast<size_t>(t)] != g ||
        !swapsLastTwo(*ops_[static_cast<size_t>(t)]))
      return false; // not a folded transpose of the last two dims
    return a->type().shape.size() == out.size() && b->type().shape.size() == out.size() &&
           std::equal(out.begin(), out.end() - 2, a->type().shape.begin()) &&
           std::equal(out.begin(), out.end() - 2, b->type().shape.begin());
  }

  // A matmul takes the transposes of its operands (read with strides), and either a transpose
  // of its result that keeps the last dim (stored with strides) or a chain of elementwise ops
  // on it (bias, activation, residual add), into its kernel. A bf16 matmul's elementwise
  // users compute in f32 on a widened copy (emulateBf16): it takes no chain.
  void fuseMatmul(int64_t m) {
    const Op& mm = *ops_[static_cast<size_t>(m)];
    DType type = mm.result(0)->type().dtype;
    if (type != DType::F32 && type != DType::BF16) return;
    int64_t g = groupOf_[static_cast<size_t>(m)];
    groups_[static_cast<size_t>(g)].kernel = "matmul";
    for (Value* v : mm.operands()) {
      int64_t t = producer(v);
      if (t < 0 || constant_[static_cast<size_t>(t)] || !together(t, m)) continue;
      const Op& top = *ops_[static_cast<size_t>(t)];
      if (top.name() == opname::kTranspose && keepsInnerDim(top) && soleUser(v) == m &&
          groups_[static_cast<size_t>(groupOf_[static_cast<size_t>(t)])].ops.size() == 1)
        moveTo(t, g);
    }
    const Value* cur = mm.result(0);
    if (int64_t r = soleUser(cur);
        r >= 0 && together(r, m) && sumsBatchOfTransposed(mm, *ops_[static_cast<size_t>(r)], g)) {
      moveTo(r, g); // a weight gradient: one GEMM over every batch row
      return;
    }
    if (int64_t t = soleUser(cur);
        t >= 0 && together(t, m) && ops_[static_cast<size_t>(t)]->name() == opname::kTranspose &&
        ops_[static_cast<size_t>(t)]->attrs().getInts("perm").back() == cur->type().rank() - 1) {
      moveTo(t, g); // the result stored permuted (attention heads merged back)
      return;
    }
    while (type == DType::F32) {
      int64_t u = soleUser(cur);
      if (u < 0 || !together(u, m)) return;
      const Op& user = *ops_[static_cast<size_t>(u)];
      int64_t ug = groupOf_[static_cast<size_t>(u)];
      if (ug < 0 || groups_[static_cast<size_t>(ug)].kernel != "fused_elementwise" ||
          user.result(0)->type() != cur->type())
        return;
      std::vector<int64_t> take{u};
      if (kEpilogueUnary.count(user.name())) {
        // operand 0 is `cur`
      } else if (kEpilogueBinary.count(user.name())) {
        bool first = user.operand(0) == cur;
        if (!first && user.name() == opname::kSub) return; // x - matmul has no post-op
        const Value* x = user.operand(first ? 1 : 0);
        if (x == cur || x->type().dtype != DType::F32 || x->type().rank() > cur->type().rank())
          return;
        int64_t p = producer(x);
        if (p >= 0 && groupOf_[static_cast<size_t>(p)] == ug) {
          // A broadcast inside the group: read its operand with the broadcast instead.
          const Op& b = *ops_[static_cast<size_t>(p)];
          if (b.name() != opname::kBroadcast || soleUser(x) != u) return;
          int64_t q = producer(b.operand(0));
          if (q >= 0 && groupOf_[static_cast<size_t>(q)] == ug) return;
          take.insert(take.begin(), p);
        }
      } else {
        return;
      }
      for (int64_t t : take)
        moveTo(t, g);
      cur = user.result(0);
    }
  }

  const Function& f_;
  const std::vector<const Op*>& ops_;
  const std::vector<bool>& constant_;
  const std::vector<int64_t>& sectionOf_;
  std::map<const Op*, int64_t> index_;
  std::vector<int64_t> groupOf_;
  std::vector<Group> groups_;
};

} // namespace

bool isLaneIota(const Op& op) {
  if (op.name() != opname::kIota || op.result(0)->type().rank() == 0) return false;
  const TensorType& t = op.result(0)->type();
  int64_t axis = *normalizeAxis(op.attrs().getInt("axis"), t.rank());
  return (t.dtype == DType::F32 || t.dtype == DType::I32 || t.dtype == DType::I64) &&
         t.shape[static_cast<size_t>(axis)] <= kMaxExactIndex;
}

bool isLaneOp(const Op& op) {
  if (isLaneIota(op)) return true;
  if (!isLaneOpName(op.name()) || op.numResults() != 1) return false;
  if (op.name() == opname::kCompare && isInteger(op.operand(0)->type().dtype) &&
      isInteger(op.operand(1)->type().dtype)) {
    // Integers compared with an index: in f32 the index is exact and rounding the other
    // side keeps its order, so the comparison is exact.
    for (const Value* v : op.operands())
      if (const Op* d = v->definingOp(); d && isLaneIota(*d)) return true;
    return false;
  }
  // Casts between f32 and bf16 (the widening and rounding around the ops that compute in f32
  // in a bf16 program; from bf16 to bf16 where a constant was folded to bf16 under its cast)
  // and broadcasts of bf16: bf16 is read and stored converted, its lanes are f32.
  DType from = op.numOperands() ? op.operand(0)->type().dtype : DType::F32,
        to = op.result(0)->type().dtype;
  if (op.name() == opname::kCast && (from == DType::BF16 || to == DType::BF16) &&
      (from == DType::F32 || to == DType::F32 || from == to))
    return true;
  if (op.name() == opname::kBroadcast && from == DType::BF16 && to == DType::BF16) return true;
  if (!laneType(op.result(0)->type().dtype)) return false;
  for (const Value* v : op.operands())
    if (!laneType(v->type().dtype)) return false;
  return true;
}

std::vector<KernelGroup> formGroups(const Function& f, const std::vector<const Op*>& ops,
                                    const std::vector<bool>& constant,
                                    const std::vector<int64_t>& sectionOf) {
  return GroupFormer(f, ops, constant, sectionOf).run();
}

} // namespace shardc
