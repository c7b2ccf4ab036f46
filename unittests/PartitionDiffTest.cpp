// Every op instance of test/sharding/rules.ir, alone in a function, partitioned under random
// shardings on several meshes: the devices' assembled results must be the interpreter's on
// the whole tensors. Each op's sharding rule, its local attributes and the reshards around
// it are exercised this way one at a time, so a failure names one op.
#include "PartitionTestUtil.h"

#include "shardc/io/TensorFormat.h"
#include "shardc/ir/Builder.h"
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/Parser.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <gtest/gtest.h>

#include <ostream>

using namespace shardc;
using namespace shardc::testing;

namespace {

constexpr int kCasesPerMesh = 20;

struct RuleOp {
  const Op* op;
  std::string name; // "<function>_<first result>", a test name
};
void PrintTo(const RuleOp& r, std::ostream* os) {
  *os << r.name;
}

// The op instances of rules.ir, but collectives (they only exist in per-device programs).
const std::vector<RuleOp>& ruleOps() {
  static const std::unique_ptr<Module> rules = [] {
    std::string path = std::string(SHARDC_SOURCE_DIR) + "/test/sharding/rules.ir";
    DiagEngine diags(path);
    auto m = parseModule(readFile(path), diags);
    if (!m) throw Error(diags.format(diags.diagnostics().front()));
    return m;
  }();
  static const std::vector<RuleOp> ops = [] {
    std::vector<RuleOp> out;
    for (const auto& f : rules->functions())
      for (const auto& op : f->ops())
        if (!op->def().communicates)
          out.push_back({op.get(), f->name() + "_" + op->result(0)->name()});
    return out;
  }();
  return ops;
}

// `op` as the only op of a function: its operands are the arguments, its results the results.
std::unique_ptr<Module> oneOpModule(const Op& op) {
  auto m = std::make_unique<Module>();
  m->filename = "<one-op>";
  Function* f = m->addFunction(op.name());
  std::vector<Value*> args;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const Value* v = op.operand(i);
    std::string name = v->name();
    for (size_t j = 0; j < i; ++j)
      if (op.operand(j) == v) name = v->name() + "_" + std::to_string(i);
    args.push_back(f->addArgument(name, v->type(), ArgKind::Input));
  }
  Builder b(*f);
  Op* copy = b.create(op.name(), args, op.attrs());
  for (size_t r = 0; r < op.numResults(); ++r) {
    copy->result(r)->setName(op.result(r)->name());
    f->addResult(op.result(r)->name(), copy->result(r));
  }
  return m;
}

// Integer operands are indices into the gathered or scattered axis (any small non-negative
// values elsewhere).
int64_t intBound(const Op& op) {
  if (op.name() == "gather") {
    const Shape& data = op.operand(0)->type().shape;
    return data[static_cast<size_t>(
        *normalizeAxis(op.attrs().getInt("axis"), static_cast<int64_t>(data.size())))];
  }
  if (op.name() == "scatter_add") {
    const auto& shape = op.attrs().getInts("shape");
    return shape[static_cast<size_t>(
        *normalizeAxis(op.attrs().getInt("axis"), static_cast<int64_t>(shape.size())))];
  }
  return 8;
}

// What the user fixes: every tensor, only the arguments (propagation decides the results),
// only the results (propagation works backwards), or a random few; now and then a function
// result is asked for in another layout than its value's.
void drawShardings(PartitionCase& c, std::mt19937_64& rng) {
  const Function& f = c.function();
  c.fixed.clear();
  c.resultShardings.assign(f.results().size(), std::nullopt);
  uint64_t mode = rng() % 4;
  auto fix = [&](bool argument) {
    return mode == 0 || (mode == 1 && argument) || (mode == 2 && !argument) ||
           (mode == 3 && rng() % 2);
  };
  auto draw = [&](const Value* v) { return randomSharding(rng, v->type(), c.mesh, true); };
  for (size_t i = 0; i < f.numArguments(); ++i)
    if (fix(true)) c.fixed.push_back({f.argument(i), draw(f.argument(i))});
  for (size_t r = 0; r < f.results().size(); ++r) {
    const Value* v = f.results()[r].value;
    if (fix(false)) c.fixed.push_back({v, draw(v)});
    if (rng() % 5 == 0) c.resultShardings[r] = draw(v);
  }
}

class PartitionDiffTest : public ::testing::TestWithParam<RuleOp> {};

TEST_P(PartitionDiffTest, MatchesTheInterpreter) {
  const Op& op = *GetParam().op;
  PartitionCase c{oneOpModule(op), {}, {}, {}};
  const Function& f = c.function();
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < f.numArguments(); ++i)
    inputs.push_back(randomTensor(f.argument(i)->type(), 1000 + i, intBound(op)));

  int cases = 0, sharded = 0;
  for (const Mesh& mesh : testMeshes()) {
    c.mesh = mesh;
    std::mt19937_64 rng(cases);
    for (int k = 0; k < kCasesPerMesh; ++k, ++cases) {
      drawShardings(c, rng);
      for (const auto& [v, s] : c.fixed)
        ASSERT_EQ(checkSharding(s, v->type(), mesh), "");
      PartitionOutcome o = runPartitioned(c, inputs);
      if (!o.failure.empty()) FAIL() << op.name() << ", case " << k << ":\n" << o.failure;
      sharded += o.sharded;
    }
  }
  // Not vacuous: a good part of the cases lays something out over the mesh.
  EXPECT_GE(sharded, cases / 4) << op.name() << ": " << sharded << " of " << cases
                                << " cases shard anything";
}

INSTANTIATE_TEST_SUITE_P(RulesIr, PartitionDiffTest, ::testing::ValuesIn(ruleOps()),
                         [](const auto& info) { return info.param.name; });

} // namespace
