#include "PartitionTestUtil.h"

#include "TestUtil.h"

#include "shardc/collectives/ShardTensor.h"
#include "shardc/collectives/ThreadCollectives.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/ir/Printer.h"
#include "shardc/sharding/Annotations.h"
#include "shardc/sharding/Propagate.h"
#include "shardc/sharding/SpmdLowering.h"

#include <algorithm>

namespace shardc::testing {

ShardingPlan PartitionCase::plan(bool withFixed) const {
  ShardingPlan p(mesh);
  if (withFixed)
    for (const auto& [v, s] : fixed)
      p.set(v, s, {OriginKind::User, ""});
  for (size_t i = 0; i < resultShardings.size(); ++i)
    if (resultShardings[i]) p.setResult(function(), i, *resultShardings[i], {OriginKind::User, ""});
  return p;
}

std::string PartitionCase::str() const {
  return printShardedModule(*module, plan());
}

PartitionOutcome runPartitioned(const PartitionCase& c, const std::vector<Tensor>& args) {
  PartitionOutcome out;
  const Function& f = c.function();
  ShardingPlan plan = c.plan();
  std::unique_ptr<Module> local;
  std::string stage = "propagation";
  try {
    if (c.stepwise) {
      plan = c.plan(false);
      ShardingPropagator propagator(f);
      propagator.propagate(plan);
      for (const auto& [v, sharding] : c.fixed) {
        plan.set(v, sharding, {OriginKind::User, ""});
        propagator.propagateFrom(plan, {v});
      }
    } else {
      propagateShardings(f, plan);
    }
    auto laidOut = [&](const Value* v) { return !plan.shardingOf(v).isReplicated(); };
    for (size_t i = 0; i < f.numArguments(); ++i)
      out.sharded |= laidOut(f.argument(i));
    for (const auto& op : f.ops())
      for (size_t r = 0; r < op->numResults(); ++r)
        out.sharded |= laidOut(op->result(r));
    for (const auto& s : c.resultShardings)
      out.sharded |= s && !s->isReplicated();

    stage = "lowering";
    SpmdProgram p = lowerToSpmd(f, plan);
    local = std::move(p.module);
    for (size_t r = 0; r < c.resultShardings.size(); ++r)
      if (c.resultShardings[r] && !(p.resultShardings[r] == *c.resultShardings[r]))
        out.failure += "result " + std::to_string(r) + " is laid out as " +
                       p.resultShardings[r].str() + ", not as asked\n";

    stage = "running";
    const Mesh& mesh = c.mesh;
    std::vector<std::vector<Tensor>> perDevice(static_cast<size_t>(mesh.numDevices()));
    for (int64_t d = 0; d < mesh.numDevices(); ++d)
      for (size_t i = 0; i < args.size(); ++i)
        perDevice[static_cast<size_t>(d)].push_back(shardOf(args[i], p.argShardings[i], mesh, d));
    auto got = runOnDevices(*local->functions().front(), mesh, perDevice);
    std::vector<Tensor> want = interpret(f, args);
    for (size_t r = 0; r < want.size(); ++r) {
      std::vector<Tensor> pieces;
      for (const auto& results : got)
        pieces.push_back(results[r]);
      Tensor whole = assemble(pieces, p.resultShardings[r], mesh);
      bool exact = !isFloat(want[r].dtype());
      ::testing::AssertionResult same =
          allClose(whole, want[r], exact ? 0 : 1e-5, exact ? 0 : 1e-6);
      if (!same) out.failure += "result " + f.results()[r].name + ": " + same.message() + "\n";
    }

    // The same programs through their executable plans (f32 native kernels), whole and per
    // device, against the interpreter within f32's error.
    stage = "running compiled";
    std::vector<Tensor> magnitude = interpret(f, absoluteValues(args));
    std::vector<Tensor> whole = runCompiled(f, args);
    auto compiled = runOnDevices(mesh, [&](Collectives& comm) {
      return runCompiled(*local->functions().front(), perDevice[static_cast<size_t>(comm.device())],
                         &comm, 1);
    });
    for (size_t r = 0; r < want.size(); ++r) {
      std::vector<Tensor> pieces;
      for (const auto& results : compiled)
        pieces.push_back(results[r]);
      Tensor assembled = assemble(pieces, p.resultShardings[r], mesh);
      for (const auto& [how, t] :
           {std::pair<const char*, const Tensor&>{"whole", whole[r]}, {"partitioned", assembled}}) {
        ::testing::AssertionResult near = nearReference(t, want[r], magnitude[r]);
        if (!near)
          out.failure += std::string("compiled (") + how + ") result " + f.results()[r].name +
                         ": " + near.message() + "\n";
      }
    }
  } catch (const std::exception& e) {
    out.failure += stage + " failed: " + e.what() + "\n";
  }
  if (!out.failure.empty()) {
    out.failure += "on mesh " + c.mesh.str() + ", the case:\n" + c.str() +
                   "propagated shardings:\n" + printShardingOrigins(f, plan);
    if (local) out.failure += "per-device program:\n" + printModule(*local);
  }
  return out;
}

TensorSharding randomSharding(std::mt19937_64& rng, const TensorType& t, const Mesh& mesh,
                              bool chunks) {
  TensorSharding s = TensorSharding::replicated(t.rank());
  if (t.rank() == 0 || rng() % 5 == 0) return s;
  std::vector<MeshAxis> axes = mesh.axes();
  for (size_t i = axes.size(); i > 1; --i) // Fisher-Yates: the same order on every platform
    std::swap(axes[i - 1], axes[rng() % i]);
  for (const MeshAxis& a : axes) {
    std::vector<size_t> fits;
    for (size_t d = 0; d < s.dims.size(); ++d)
      if (t.shape[d] % (mesh.groupSize(s.dims[d]) * a.size) == 0) fits.push_back(d);
    size_t pick = rng() % (fits.size() + 1); // fits.size(): the axis stays unused
    if (pick < fits.size()) s.dims[fits[pick]].push_back(a.name);
  }
  if (chunks)
    for (size_t d = 0; d < s.dims.size(); ++d) {
      int64_t c = 2 + static_cast<int64_t>(rng() % 2);
      if (!s.dims[d].empty() && rng() % 4 == 0 && t.shape[d] % (c * mesh.groupSize(s.dims[d])) == 0)
        s.setChunks(d, c);
    }
  return s;
}

std::vector<Mesh> testMeshes() {
  return {Mesh::parse("x=2"), Mesh::parse("x=2,y=2"), Mesh::parse("x=3,y=2")};
}

} // namespace shardc::testing
