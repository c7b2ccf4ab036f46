// Random small programs under random shardings: partitioned and run on thread devices, they
// must compute what the interpreter computes. Where the per-op test checks each op alone,
// this one checks how ops meet: a sharding propagated through a chain, the reshard between
// two ops that disagree, partial sums flowing into the next op. A failing program is shrunk
// before it is reported, so the report is a handful of lines of text IR.
#include "PartitionTestUtil.h"

#include "shardc/io/TensorFormat.h"
#include "shardc/ir/Builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <unordered_map>

using namespace shardc;
using namespace shardc::testing;

namespace {

constexpr int kPrograms = 500;
constexpr int64_t kMaxNumel = 4096; // keeps every program fast on six thread devices
constexpr int64_t kDims[] = {2, 4, 6, 8, 12};
// No exp or log: values stay moderate through chains of matmuls and reductions, so the
// tolerance for a different summation order holds.
const char* const kUnary[] = {"neg", "tanh", "sigmoid", "gelu", "relu", "abs"};
const char* const kBinary[] = {"add", "sub", "mul", "max"};

// Builds one random program: each op takes a recent value (or any earlier one) and, where it
// needs a second operand, an earlier value of the right shape or a new argument.
class ProgramGenerator {
public:
  explicit ProgramGenerator(uint64_t seed) : rng_(seed) {}

  PartitionCase generate(const Mesh& mesh) {
    PartitionCase c;
    c.module = std::make_unique<Module>();
    c.module->filename = "<fuzz>";
    c.mesh = mesh;
    f_ = c.module->addFunction("fuzz");
    Builder b(*f_);
    b_ = &b;
    shapeOf(randomShape(2 + pick(2)));
    size_t want = 2 + pick(7);
    for (int tries = 0; f_->ops().size() < want && tries < 100; ++tries)
      step();
    for (const auto& op : f_->ops())
      for (size_t r = 0; r < op->numResults(); ++r)
        if (!op->result(r)->hasUses()) f_->addResult(op->result(r)->name(), op->result(r));

    // The user fixes most arguments and a few intermediate values, and sometimes asks for a
    // result in a layout of its own.
    auto draw = [&](const Value* v) { return randomSharding(rng_, v->type(), mesh, true); };
    for (size_t i = 0; i < f_->numArguments(); ++i)
      if (pick(4)) c.fixed.push_back({f_->argument(i), draw(f_->argument(i))});
    std::vector<const Value*> inner;
    for (const auto& op : f_->ops())
      for (size_t r = 0; r < op->numResults(); ++r)
        inner.push_back(op->result(r));
    for (uint64_t n = inner.empty() ? 0 : pick(3); n > 0; --n) {
      const Value* v = inner[pick(inner.size())];
      if (std::none_of(c.fixed.begin(), c.fixed.end(), [&](const auto& p) { return p.first == v; }))
        c.fixed.push_back({v, draw(v)});
    }
    for (const FuncResult& r : f_->results())
      c.resultShardings.push_back(pick(6) ? std::nullopt
                                          : std::optional<TensorSharding>(draw(r.value)));
    return c;
  }

private:
  uint64_t pick(uint64_t n) { return rng_() % n; }
  int64_t dim() { return kDims[pick(std::size(kDims))]; }
  Shape randomShape(uint64_t rank) {
    Shape s;
    for (uint64_t d = 0; d < rank; ++d)
      s.push_back(dim());
    return s;
  }

  Value* named(Op* op) {
    for (size_t r = 0; r < op->numResults(); ++r) {
      op->result(r)->setName("v" + std::to_string(values_++));
      pool_.push_back(op->result(r));
    }
    return op->result(0);
  }
  Value* create(const char* name, std::vector<Value*> operands, AttrDict attrs = {}) {
    return named(b_->create(name, std::move(operands), std::move(attrs)));
  }

  // Half the time the newest value, so that chains form; else any earlier one.
  Value* operand() { return pick(2) ? pool_.back() : pool_[pick(pool_.size())]; }
  // An earlier value of `shape`, or a new argument.
  Value* shapeOf(const Shape& shape) {
    std::vector<Value*> same;
    for (Value* v : pool_)
      if (v->type().shape == shape) same.push_back(v);
    if (!same.empty() && pick(2)) return same[pick(same.size())];
    Value* a = f_->addArgument("a" + std::to_string(f_->numArguments()), {DType::F32, shape},
                               ArgKind::Input);
    pool_.push_back(a);
    return a;
  }

  void step() {
    Value* x = operand();
    Shape s = x->type().shape;
    size_t rank = s.size();
    switch (pick(10)) {
    case 0:
      create(kUnary[pick(std::size(kUnary))], {x});
      return;
    case 1: {
      Shape small = s; // broadcast: leading dims dropped, or some dims of size 1
      if (pick(3) == 0) {
        if (rank > 1 && pick(2))
          small.erase(small.begin(), small.begin() + 1 + static_cast<int64_t>(pick(rank - 1)));
        else
          for (int64_t& d : small)
            if (pick(2)) d = 1;
      }
      Value* y = shapeOf(small);
      if (pick(2)) std::swap(x, y);
      create(kBinary[pick(std::size(kBinary))], {x, y});
      return;
    }
    case 2: {
      if (rank < 2 || rank > 3) return;
      Shape w = {s[rank - 1], dim()};
      if (rank == 3 && pick(2)) w.insert(w.begin(), s[0]); // batched on both sides
      if (pick(2)) {
        create("matmul", {x, shapeOf(w)});
      } else {
        Shape lhs = {dim(), s[rank - 2]};
        if (rank == 3 && pick(2)) lhs.insert(lhs.begin(), s[0]);
        create("matmul", {shapeOf(lhs), x});
      }
      return;
    }
    case 3: {
      if (rank < 2) return;
      std::vector<int64_t> perm(rank);
      for (size_t i = 0; i < rank; ++i)
        perm[i] = static_cast<int64_t>(i);
      while (std::is_sorted(perm.begin(), perm.end()))
        for (size_t i = rank; i > 1; --i)
          std::swap(perm[i - 1], perm[pick(i)]);
      create("transpose", {x}, {{"perm", perm}});
      return;
    }
    case 4: { // reshape: split one dim in two, or merge two neighbours
      Shape out = s;
      size_t d = pick(rank);
      if (pick(2) && rank < 4) {
        std::vector<int64_t> factors;
        for (int64_t a = 2; a < s[d]; ++a)
          if (s[d] % a == 0) factors.push_back(a);
        if (factors.empty()) return;
        int64_t a = factors[pick(factors.size())];
        out[d] = s[d] / a;
        out.insert(out.begin() + static_cast<int64_t>(d), a);
      } else {
        if (d + 1 >= rank) return;
        out[d] *= out[d + 1];
        out.erase(out.begin() + static_cast<int64_t>(d) + 1);
      }
      create("reshape", {x}, {{"shape", out}});
      return;
    }
    case 5: {
      if (rank < 2) return;
      std::vector<int64_t> axes;
      for (size_t d = 0; d < rank; ++d)
        if (pick(2)) axes.push_back(static_cast<int64_t>(d));
      if (axes.empty() || axes.size() == rank) return;
      create(pick(2) ? "reduce_sum" : "reduce_mean", {x},
             {{"axes", axes}, {"keepdims", pick(2) == 0}});
      return;
    }
    case 6:
      create("softmax", {x}, {{"axis", static_cast<int64_t>(pick(rank))}});
      return;
    case 7: { // broadcast: a new leading dim, or a size-1 dim widened
      Shape out = s;
      auto one = std::find(out.begin(), out.end(), 1);
      if (one != out.end() && pick(2))
        *one = dim();
      else if (rank < 4)
        out.insert(out.begin(), dim());
      else
        return;
      if (numel(out) > kMaxNumel) return;
      create("broadcast", {x}, {{"shape", out}});
      return;
    }
    case 8: {
      uint64_t n = 2 + pick(2);
      if (x->type().numel() * static_cast<int64_t>(n) > kMaxNumel) return;
      std::vector<Value*> pieces = {x};
      while (pieces.size() < n)
        pieces.push_back(shapeOf(s));
      create("concat", pieces, {{"axis", static_cast<int64_t>(pick(rank))}});
      return;
    }
    case 9: {
      size_t axis = pick(rank);
      int64_t n = 2 + static_cast<int64_t>(pick(2));
      if (s[axis] % n) return;
      create("split", {x},
             {{"axis", static_cast<int64_t>(axis)},
              {"sizes", std::vector<int64_t>(static_cast<size_t>(n), s[axis] / n)}});
      return;
    }
    }
  }

  std::mt19937_64 rng_;
  Function* f_ = nullptr;
  Builder* b_ = nullptr;
  std::vector<Value*> pool_; // every value so far, oldest first
  int values_ = 0;
};

std::vector<Tensor> inputsFor(const PartitionCase& c) {
  std::vector<Tensor> in;
  for (size_t i = 0; i < c.function().numArguments(); ++i)
    in.push_back(randomTensor(c.function().argument(i)->type(), 17 + i, 8));
  return in;
}

bool fails(const PartitionCase& c) {
  return !runPartitioned(c, inputsFor(c)).failure.empty();
}

// A copy of `c` that returns `results` and takes each value of `cut` as a new argument
// instead of computing it. Arguments and ops nothing needs are left out; fixed shardings
// and asked result layouts follow their values.
PartitionCase extract(const PartitionCase& c, const std::vector<const Value*>& results,
                      const std::set<const Value*>& cut = {}) {
  const Function& f = c.function();
  std::set<const Value*> live(results.begin(), results.end());
  std::set<const Op*> needed;
  for (auto it = f.ops().rbegin(); it != f.ops().rend(); ++it) {
    const Op& op = **it;
    for (size_t r = 0; r < op.numResults(); ++r)
      if (live.count(op.result(r)) && !cut.count(op.result(r))) needed.insert(&op);
    if (needed.count(&op)) live.insert(op.operands().begin(), op.operands().end());
  }

  PartitionCase out;
  out.module = std::make_unique<Module>();
  out.module->filename = c.module->filename;
  out.mesh = c.mesh;
  out.stepwise = c.stepwise;
  Function* g = out.module->addFunction(f.name());
  std::unordered_map<const Value*, Value*> map;
  for (size_t i = 0; i < f.numArguments(); ++i)
    if (live.count(f.argument(i)))
      map[f.argument(i)] =
          g->addArgument(f.argument(i)->name(), f.argument(i)->type(), f.argument(i)->argKind());
  for (const auto& op : f.ops())
    for (size_t r = 0; r < op->numResults(); ++r)
      if (live.count(op->result(r)) && cut.count(op->result(r)))
        map[op->result(r)] =
            g->addArgument(op->result(r)->name(), op->result(r)->type(), ArgKind::Input);
  Builder b(*g);
  for (const auto& op : f.ops()) {
    if (!needed.count(op.get())) continue;
    std::vector<Value*> operands;
    for (Value* v : op->operands())
      operands.push_back(map.at(v));
    Op* copy = b.create(op->name(), operands, op->attrs());
    for (size_t r = 0; r < op->numResults(); ++r) {
      copy->result(r)->setName(op->result(r)->name());
      map.emplace(op->result(r), copy->result(r)); // a cut result stays an argument
    }
  }
  for (const Value* v : results) {
    auto old = std::find_if(f.results().begin(), f.results().end(),
                            [&](const FuncResult& r) { return r.value == v; });
    if (old == f.results().end()) {
      g->addResult(v->name(), map.at(v));
      out.resultShardings.push_back(std::nullopt);
    } else {
      g->addResult(old->name, map.at(v));
      out.resultShardings.push_back(
          c.resultShardings[static_cast<size_t>(old - f.results().begin())]);
    }
  }
  for (const auto& [v, s] : c.fixed)
    if (map.count(v)) out.fixed.push_back({map.at(v), s});
  return out;
}

std::vector<const Value*> resultsOf(const PartitionCase& c) {
  std::vector<const Value*> out;
  for (const FuncResult& r : c.function().results())
    out.push_back(r.value);
  return out;
}

// Greedy shrinking while `failing` holds: make one value the only result (earliest first),
// drop one result, compute one value no more but take it as an argument, drop one fixed
// sharding, drop one asked result layout; until no step keeps the failure.
PartitionCase shrink(PartitionCase c, const std::function<bool(const PartitionCase&)>& failing) {
  auto opCount = [](const PartitionCase& x) { return x.function().ops().size(); };
  for (bool progress = true; progress;) {
    progress = false;
    auto take = [&](PartitionCase next) {
      if (!failing(next)) return false;
      c = std::move(next);
      return progress = true;
    };
    std::vector<const Value*> values;
    for (const auto& op : c.function().ops())
      for (size_t r = 0; r < op->numResults(); ++r)
        values.push_back(op->result(r));
    for (const Value* v : values) {
      PartitionCase next = extract(c, {v});
      if ((opCount(next) < opCount(c) || c.function().results().size() > 1) &&
          take(std::move(next)))
        break;
    }
    if (progress) continue;
    for (size_t i = 0; i < c.function().results().size() && c.function().results().size() > 1;
         ++i) {
      std::vector<const Value*> fewer = resultsOf(c);
      fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
      if (take(extract(c, fewer))) break;
    }
    if (progress) continue;
    for (const Value* v : values) {
      if (!v->hasUses()) continue;
      PartitionCase next = extract(c, resultsOf(c), {v});
      if (opCount(next) < opCount(c) && take(std::move(next))) break;
    }
    if (progress) continue;
    // A copy with every result keeps the fixed list's order: no value of `c` is dead.
    for (size_t i = 0; i < c.fixed.size();) {
      PartitionCase next = extract(c, resultsOf(c));
      next.fixed.erase(next.fixed.begin() + static_cast<std::ptrdiff_t>(i));
      if (!take(std::move(next))) ++i;
    }
    for (size_t i = 0; i < c.resultShardings.size(); ++i) {
      if (!c.resultShardings[i]) continue;
      PartitionCase next = extract(c, resultsOf(c));
      next.resultShardings[i].reset();
      take(std::move(next));
    }
  }
  return c;
}

} // namespace

// Each program is checked with its fixed shardings propagated all at once (as the compile
// does) and one after another (as the search does: every decision continues from the last).
class RandomProgramTest : public ::testing::TestWithParam<bool> {};

TEST_P(RandomProgramTest, MatchesTheInterpreter) {
  std::vector<Mesh> meshes = testMeshes();
  std::map<std::string, int> opsSeen;
  int sharded = 0, failures = 0;
  for (int i = 0; i < kPrograms; ++i) {
    PartitionCase c =
        ProgramGenerator(static_cast<uint64_t>(i)).generate(meshes[i % meshes.size()]);
    c.stepwise = GetParam();
    for (const auto& op : c.function().ops())
      ++opsSeen[op->name()];
    PartitionOutcome o = runPartitioned(c, inputsFor(c));
    sharded += o.sharded;
    if (o.failure.empty()) continue;
    PartitionCase small = shrink(std::move(c), fails);
    ADD_FAILURE() << "program " << i << " fails; shrunk to:\n"
                  << runPartitioned(small, inputsFor(small)).failure;
    if (++failures == 3) break; // a few distinct programs say enough
  }
  // Not vacuous: most programs lay something out over the mesh, and every kind of op occurs.
  EXPECT_GE(sharded, kPrograms / 2);
  for (const char* name : {"matmul", "transpose", "reshape", "reduce_sum", "reduce_mean", "softmax",
                           "broadcast", "concat", "split", "add", "tanh"})
    EXPECT_GE(opsSeen[name], 10) << name;
}

INSTANTIATE_TEST_SUITE_P(PartitionFuzzTest, RandomProgramTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Stepwise" : "AllAtOnce";
                         });

TEST(PartitionFuzzTest, ShrinksToTheSmallestFailingProgram) {
  Mesh mesh = Mesh::parse("x=2,y=2");
  auto hasMatmul = [](const PartitionCase& c) {
    return std::any_of(c.function().ops().begin(), c.function().ops().end(),
                       [](const auto& op) { return op->name() == "matmul"; });
  };
  // A program with a matmul among other ops, a fixed sharding on one of the matmul's
  // operands or results, and other shardings to drop.
  auto touchesFixed = [](const PartitionCase& c, const Op& op) {
    return std::any_of(c.fixed.begin(), c.fixed.end(), [&](const auto& p) {
      return p.first->definingOp() == &op ||
             std::count(op.operands().begin(), op.operands().end(), p.first);
    });
  };
  PartitionCase big;
  for (uint64_t seed = 0;; ++seed) {
    big = ProgramGenerator(seed).generate(mesh);
    const auto& ops = big.function().ops();
    if (ops.size() >= 5 && big.fixed.size() >= 2 &&
        std::any_of(ops.begin(), ops.end(), [&](const auto& op) {
          return op->name() == "matmul" && touchesFixed(big, *op);
        }))
      break;
  }
  PartitionCase small = shrink(extract(big, resultsOf(big)), hasMatmul);
  ASSERT_EQ(small.function().ops().size(), 1u) << small.str();
  EXPECT_EQ(small.function().ops().front()->name(), "matmul");
  EXPECT_EQ(small.function().numArguments(), 2u) << small.str();
  EXPECT_TRUE(small.fixed.empty()) << small.str();

  // Shardings the predicate needs are kept: one is enough.
  PartitionCase withSharding = shrink(extract(big, resultsOf(big)), [&](const PartitionCase& c) {
    return hasMatmul(c) && !c.fixed.empty();
  });
  EXPECT_EQ(withSharding.function().ops().size(), 1u) << withSharding.str();
  EXPECT_EQ(withSharding.fixed.size(), 1u) << withSharding.str();
}
