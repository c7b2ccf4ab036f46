#include "shardc/exec/Interpreter.h"

#include "shardc/ir/IR.h"
#include "shardc/ir/Scan.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/support/HostMemory.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>

namespace shardc {
namespace {

// Slice `i` of a tensor stacked along its first dimension.
Tensor sliceOf(const Tensor& stacked, int64_t i, const TensorType& slice) {
  Tensor t(slice);
  std::memcpy(t.data(), stacked.data() + static_cast<size_t>(i) * t.byteSize(), t.byteSize());
  return t;
}

// A scan: its callee once per step (shardc/ir/Scan.h), the carried values threaded through.
std::vector<Tensor> interpretScan(const Op& scan, const std::vector<const Tensor*>& inputs,
                                  const std::vector<TensorType>& resultTypes, Communicator* comm,
                                  InterpreterStats* stats) {
  const Function& body = *scan.parent()->module()->callee(scan);
  ScanLayout l = ScanLayout::of(scan);
  std::vector<Tensor> outs;
  for (const TensorType& t : resultTypes)
    outs.emplace_back(t);
  std::vector<Tensor> args;
  for (size_t k = 0; k < l.firstX(); ++k)
    args.push_back(*inputs[k]);
  for (size_t k = l.firstX(); k < inputs.size(); ++k)
    args.emplace_back(body.argument(k)->type());
  for (int64_t i = 0; i < l.length; ++i) {
    int64_t s = l.step(i);
    for (size_t k = l.firstX(); k < inputs.size(); ++k)
      args[k] = sliceOf(*inputs[k], s, body.argument(k)->type());
    for (size_t c = 0; l.saveCarries && c < l.carried; ++c) {
      Tensor& saved = outs[l.firstSaved() + c];
      std::memcpy(saved.data() + static_cast<size_t>(s) * args[c].byteSize(), args[c].data(),
                  args[c].byteSize());
    }
    InterpreterStats inner;
    std::vector<Tensor> r = interpret(body, args, comm, &inner);
    if (stats) {
      stats->argumentBytes = std::max(stats->argumentBytes, inner.argumentBytes);
      stats->peakResultBytes = std::max(stats->peakResultBytes, inner.peakResultBytes);
      for (const auto& [name, sec] : inner.secondsByOp)
        stats->secondsByOp[name] += sec;
    }
    for (size_t y = 0; y < l.ys; ++y) {
      Tensor& dst = outs[l.firstY() + y];
      const Tensor& src = r[l.carried + y];
      std::memcpy(dst.data() + static_cast<size_t>(s) * src.byteSize(), src.data(), src.byteSize());
    }
    for (size_t c = 0; c < l.carried; ++c)
      args[c] = std::move(r[c]);
  }
  for (size_t c = 0; c < l.carried; ++c)
    outs[c] = std::move(args[c]);
  return outs;
}

} // namespace

std::vector<Tensor> interpret(const Function& f, const std::vector<Tensor>& args,
                              Communicator* comm, InterpreterStats* stats) {
  if (args.size() != f.numArguments())
    throw Error("@" + f.name() + " takes " + std::to_string(f.numArguments()) + " arguments, got " +
                std::to_string(args.size()));
  // Arguments are read where the caller keeps them; op results are owned here.
  std::unordered_map<const Value*, const Tensor*> env;
  std::unordered_map<const Value*, Tensor> owned;
  int64_t argumentBytes = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const Value* a = f.argument(i);
    if (args[i].type() != a->type())
      throw Error("argument '" + a->name() + "' expects " + a->type().str() + ", got " +
                  args[i].type().str());
    env.emplace(a, &args[i]);
    argumentBytes += static_cast<int64_t>(args[i].byteSize());
  }
  // Free each value after its last use, so peak memory follows the program's liveness.
  std::unordered_map<const Value*, size_t> remaining;
  for (const auto& op : f.ops())
    for (Value* v : op->operands())
      ++remaining[v];
  for (const auto& r : f.results())
    ++remaining[r.value];

  int64_t live = 0, peak = 0;
  for (const auto& op : f.ops()) {
    std::vector<const Tensor*> inputs;
    for (Value* v : op->operands())
      inputs.push_back(env.at(v));
    std::vector<TensorType> resultTypes;
    for (size_t i = 0; i < op->numResults(); ++i)
      resultTypes.push_back(op->result(i)->type());
    int64_t resultBytes = 0;
    for (const TensorType& t : resultTypes)
      resultBytes += t.bytes();
    if (resultBytes > hostMemoryBytes() - live) {
      std::string where = op->loc().line ? " at line " + std::to_string(op->loc().line) : "";
      throw Error("'" + op->name() + "' op" + where + ": its results (" +
                  std::to_string(resultBytes) + " bytes) and the " + std::to_string(live) +
                  " bytes still live exceed this machine's memory (" +
                  std::to_string(hostMemoryBytes()) + " bytes)");
    }
    std::vector<Tensor> outs;
    auto t0 = std::chrono::steady_clock::now();
    try {
      if (isScan(*op)) {
        InterpreterStats inner;
        outs = interpretScan(*op, inputs, resultTypes, comm, &inner);
        peak = std::max(peak, live + inner.argumentBytes + inner.peakResultBytes);
        if (stats)
          for (const auto& [name, sec] : inner.secondsByOp)
            stats->secondsByOp[name] += sec;
      } else if (op->def().callsFunction) {
        std::vector<Tensor> callArgs;
        for (const Tensor* t : inputs)
          callArgs.push_back(*t);
        InterpreterStats inner;
        outs = interpret(*f.module()->callee(*op), callArgs, comm, &inner);
        peak = std::max(peak, live + inner.argumentBytes + inner.peakResultBytes);
        if (stats)
          for (const auto& [name, sec] : inner.secondsByOp)
            stats->secondsByOp[name] += sec;
      } else {
        outs = op->def().kernel(KernelArgs{inputs, op->attrs(), resultTypes, comm});
      }
      if (stats && !op->def().callsFunction)
        stats->secondsByOp[op->name()] +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } catch (const Error& e) {
      std::string where = op->loc().line ? " at line " + std::to_string(op->loc().line) : "";
      throw Error("'" + op->name() + "' op" + where + ": " + e.what());
    }
    for (const Tensor& t : outs)
      live += static_cast<int64_t>(t.byteSize());
    peak = std::max(peak, live);
    for (Value* v : op->operands())
      if (--remaining[v] == 0) {
        env.erase(v);
        auto it = owned.find(v);
        if (it != owned.end()) {
          live -= static_cast<int64_t>(it->second.byteSize());
          owned.erase(it);
        }
      }
    for (size_t i = 0; i < outs.size(); ++i) {
      const Value* r = op->result(i);
      if (!remaining.count(r)) {
        live -= static_cast<int64_t>(outs[i].byteSize());
        continue;
      }
      env[r] = &owned.emplace(r, std::move(outs[i])).first->second;
    }
  }
  if (stats) {
    stats->argumentBytes = argumentBytes;
    stats->peakResultBytes = peak;
  }
  std::vector<Tensor> results;
  for (const auto& r : f.results())
    results.push_back(*env.at(r.value));
  return results;
}

} // namespace shardc
