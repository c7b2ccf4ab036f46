#include "Executor.h"
#include "Replicas.h"

#include "shardc/collectives/ShardTensor.h"
#include "shardc/collectives/ThreadCollectives.h"
#include "shardc/driver/Driver.h"
#include "shardc/exec/Interpreter.h"
#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"
#include "shardc/support/HostMemory.h"

#include <algorithm>

namespace shardc {

Executor::Executor(const LoadedPef& l, std::vector<Tensor> wholeArgs, bool reference, int threads,
                   bool timed)
    : l_(l), f_(*l.entry), whole_(std::move(wholeArgs)), reference_(reference), timed_(timed) {
  for (size_t i = 0; i < f_.results().size(); ++i)
    if (f_.results()[i].tiedArg < 0) untied_.push_back(i);
  int64_t devices = 1;
  if (l.partitioned()) {
    int64_t n = l.mesh.numDevices();
    if (mpi::launchedByMpi()) {
      comm_ = std::make_unique<MpiCollectives>(l.mesh); // checks one device per rank
      comm_->scaleSums(kDataAxis, l.dataSumScale);
      local_.push_back(shard(whole_, comm_->device()));
    } else {
      if (n > kMaxThreadDevices)
        throw Error("the PEF's mesh " + l.mesh.str() + " has " + std::to_string(n) +
                    " devices; one process simulates at most " + std::to_string(kMaxThreadDevices) +
                    " (run it under mpirun -np " + std::to_string(n) + ")");
      for (int64_t d = 0; d < n; ++d)
        local_.push_back(shard(whole_, d));
      devices = n;
      devices_ = std::make_unique<DeviceThreads>(l.mesh);
      devices_->scaleSums(kDataAxis, l.dataSumScale);
    }
    whole_.clear(); // the devices hold their pieces now
  }
  peaks_.assign(l.partitioned() ? local_.size() : 1, 0);
  if (reference_) {
    keepFreedMemory();
    return;
  }
  int perDevice = intraOpThreads(devices, threads);
  size_t count = l.partitioned() ? local_.size() : 1;
  for (size_t d = 0; d < count; ++d) {
    std::vector<BodyPlan> bodies;
    for (const PefBody& b : l.pef.programs[0].bodies)
      bodies.push_back({l.module->findFunction(b.function), b.plan});
    compiled_.push_back(std::make_unique<CompiledFunction>(f_, l.pef.programs[0].plan, perDevice,
                                                           std::move(bodies)));
    if (timed) compiled_.back()->timeSteps();
  }
}

ExecStats Executor::times() const {
  ExecStats s;
  s.secondsByKernel = secondsByOp_;
  for (const auto& c : compiled_)
    c->addTimes(s);
  return s;
}

int64_t Executor::peakBytes() const {
  return *std::max_element(peaks_.begin(), peaks_.end());
}

std::vector<int64_t> Executor::peakBytesByDevice() const {
  if (!comm_) return peaks_;
  Tensor mine(TensorType{DType::I64, {1}});
  mine.setInt(0, peaks_[0]);
  std::vector<int64_t> all;
  for (const Tensor& t : mpi::gatherToRoot(mine))
    all.push_back(t.getInt(0));
  return all;
}

Executor::~Executor() = default;

std::vector<Tensor> Executor::step(size_t keep, int64_t opLimit) {
  keep = std::min(keep, untied_.size());
  if (!l_.partitioned()) return runDevice(0, whole_, nullptr, keep, opLimit);
  if (comm_) {
    std::vector<Tensor> results = runDevice(0, local_[0], comm_.get(), keep, opLimit);
    std::vector<Tensor> out;
    for (size_t k = 0; k < keep; ++k)
      out.push_back(gatherWhole(results[k], l_.resultShardings[untied_[k]]));
    return out;
  }
  auto results = devices_->run([&](Collectives& c) {
    auto d = static_cast<size_t>(c.device());
    return runDevice(d, local_[d], &c, keep, opLimit);
  });
  std::vector<Tensor> out;
  for (size_t k = 0; k < keep; ++k) {
    std::vector<Tensor> pieces;
    for (auto& r : results)
      pieces.push_back(std::move(r[k]));
    out.push_back(assemble(pieces, l_.resultShardings[untied_[k]], l_.mesh));
  }
  return out;
}

void Executor::setInput(size_t i, const Tensor& whole) {
  if (!l_.partitioned()) {
    whole_[i] = whole;
    return;
  }
  if (comm_) {
    local_[0][i] = shardOf(whole, l_.argShardings[i], l_.mesh, comm_->device());
    return;
  }
  for (size_t d = 0; d < local_.size(); ++d)
    local_[d][i] = shardOf(whole, l_.argShardings[i], l_.mesh, static_cast<int64_t>(d));
}

Tensor Executor::argument(size_t i) {
  if (!l_.partitioned()) return whole_[i];
  if (comm_) return gatherWhole(local_[0][i], l_.argShardings[i]);
  std::vector<Tensor> pieces;
  for (const auto& dev : local_)
    pieces.push_back(dev[i]);
  return assemble(pieces, l_.argShardings[i], l_.mesh);
}

// Device d's step on its arguments `args` (tied results replace their arguments); returns
// its untied results (the compiled runtime's are copied out only when they are kept).
std::vector<Tensor> Executor::runDevice(size_t d, std::vector<Tensor>& args, Collectives* comm,
                                        size_t keep, int64_t opLimit) {
  if (!reference_) {
    ExecStats st;
    const std::vector<Tensor>& results = compiled_[d]->run(args, comm, &st, opLimit);
    std::vector<Tensor> out(results.begin(), results.begin() + static_cast<std::ptrdiff_t>(keep));
    std::lock_guard<std::mutex> lock(mu_);
    peaks_[d] = std::max(peaks_[d], st.peakBytes);
    return out;
  }
  InterpreterStats st;
  std::vector<Tensor> results = interpret(f_, args, comm, &st);
  std::vector<Tensor> out;
  for (size_t i = 0; i < results.size(); ++i) {
    int64_t tied = f_.results()[i].tiedArg;
    if (tied >= 0 && opLimit < 0)
      args[static_cast<size_t>(tied)] = std::move(results[i]);
    else if (tied >= 0)
      continue; // an evaluation pass keeps the weights and state
    else if (out.size() < keep)
      out.push_back(std::move(results[i]));
  }
  std::lock_guard<std::mutex> lock(mu_);
  peaks_[d] = std::max(peaks_[d], st.argumentBytes + st.peakResultBytes);
  for (const auto& [op, sec] : st.secondsByOp)
    secondsByOp_[op] += sec;
  return out;
}

std::vector<Tensor> Executor::shard(const std::vector<Tensor>& whole, int64_t device) const {
  std::vector<Tensor> args;
  for (size_t i = 0; i < whole.size(); ++i)
    args.push_back(shardOf(whole[i], l_.argShardings[i], l_.mesh, device));
  return args;
}

Tensor Executor::gatherWhole(const Tensor& local, const TensorSharding& s) {
  std::vector<Tensor> pieces = mpi::gatherToRoot(local);
  return pieces.empty() ? Tensor() : assemble(pieces, s, l_.mesh);
}

} // namespace shardc
