#include "shardc/runtime/Interpreter.h"

#include "shardc/ir/IR.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/support/HostMemory.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

namespace shardc {

std::vector<Tensor> interpret(const Function& f, const std::vector<Tensor>& args, Collectives* comm,
                              InterpreterStats* stats) {
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
      if (op->def().callsFunction) {
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
