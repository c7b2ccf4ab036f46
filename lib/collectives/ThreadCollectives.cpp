#include "shardc/collectives/ThreadCollectives.h"

#include "shardc/exec/Interpreter.h"
#include "shardc/support/Error.h"

#include <chrono>
#include <optional>
#include <system_error>
#include <thread>

namespace shardc {

ThreadWorld::Group::Group(size_t n) : size(static_cast<int64_t>(n)) {
  for (auto& b : boxes)
    b.resize(n * n);
}

ThreadWorld::Group& ThreadWorld::group(const std::string& axes, int64_t first, int64_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& g = groups_[{axes, first}];
  if (!g) g = std::make_unique<Group>(static_cast<size_t>(size));
  return *g;
}

void ThreadWorld::abort() {
  aborted_ = true;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [key, g] : groups_) {
    std::lock_guard<std::mutex> groupLock(g->mutex); // no waiter misses the news
    g->arrived.notify_all();
  }
}

// The last device to arrive opens the barrier. The others first spin for up to kSpin, yielding
// the core at each check (a device may wait for one that shares its core), and only then
// sleep on the condition variable: with every waiter asleep, an all_reduce of at most 16 KB
// between 2 thread devices took ~34 us per device (`run --stats`), and a step of the
// data-parallel GPT fixture waits in 31 of them.
void ThreadWorld::barrier(Group& g) {
  constexpr auto kSpin = std::chrono::microseconds(50);
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    if (aborted_) throw DeviceAborted();
    gen = g.generation.load(std::memory_order_relaxed);
    if (++g.waiting == g.size) {
      g.waiting = 0;
      // Release: a spinning waiter that sees it also sees every member's writes, which each
      // made before taking the mutex this thread took after them.
      g.generation.store(gen + 1, std::memory_order_release);
      g.arrived.notify_all();
      return;
    }
  }
  auto until = std::chrono::steady_clock::now() + kSpin;
  while (!aborted_ && std::chrono::steady_clock::now() < until) {
    if (g.generation.load(std::memory_order_acquire) != gen) return;
    std::this_thread::yield();
  }
  std::unique_lock<std::mutex> lock(g.mutex);
  g.arrived.wait(lock, [&] { return g.generation != gen || aborted_; });
  if (g.generation == gen) throw DeviceAborted();
}

std::vector<Tensor> ThreadCollectives::exchange(const std::vector<std::string>& axes,
                                                const std::vector<Tensor>& send,
                                                const std::vector<TensorType>& recvTypes) {
  std::string key;
  for (const std::string& a : axes)
    key += (key.empty() ? "" : ",") + a;
  int64_t n = groupSize(axes);
  ThreadWorld::Group& g = world_.group(key, groupDevice(axes, 0), n);
  auto& boxes = g.boxes[rounds_[&g]++ % 2];
  size_t me = static_cast<size_t>(groupRank(axes)), size = static_cast<size_t>(n);
  for (size_t r = 0; r < send.size(); ++r)
    boxes[r * size + me] = send[r];
  // The barrier's mutex orders every member's writes above before the reads below.
  world_.barrier(g);
  std::vector<Tensor> got;
  for (size_t r = 0; r < recvTypes.size(); ++r) {
    got.push_back(std::move(boxes[me * size + r]));
    if (got.back().type() != recvTypes[r])
      throw Error("device " + std::to_string(groupDevice(axes, static_cast<int64_t>(r))) +
                  " sent " + got.back().type().str() + ", expected " + recvTypes[r].str());
  }
  return got;
}

DeviceThreads::DeviceThreads(const Mesh& mesh)
    : world_(mesh), results_(static_cast<size_t>(mesh.numDevices())) {
  size_t n = results_.size();
  for (size_t d = 0; d < n; ++d)
    comms_.push_back(std::make_unique<ThreadCollectives>(world_, static_cast<int64_t>(d)));
  threads_.reserve(n);
  try {
    for (size_t d = 0; d < n; ++d)
      threads_.emplace_back([this, d] { serve(d); });
  } catch (const std::system_error& e) {
    stop();
    throw Error(std::string("cannot start a thread per device: ") + e.what());
  } catch (...) {
    stop();
    throw;
  }
}

DeviceThreads::~DeviceThreads() {
  stop();
}

void DeviceThreads::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    round_.fetch_add(1);
  }
  start_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void DeviceThreads::fail(std::string message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!firstError_) firstError_ = std::move(message);
  }
  world_.abort();
}

// A device waits for each run as a collective waits for its peers (ThreadWorld::barrier):
// spinning a while, yielding, then asleep.
void DeviceThreads::serve(size_t d) {
  uint64_t seen = 0;
  for (;;) {
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (round_.load(std::memory_order_acquire) == seen &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
    const DeviceBody* body;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return round_.load() != seen; });
      seen = round_.load();
      if (stopping_) return;
      body = body_;
    }
    try {
      results_[d] = (*body)(*comms_[d]);
    } catch (const DeviceAborted&) {
      // A peer failed; its error is the one reported.
    } catch (const std::exception& e) {
      fail("device " + std::to_string(d) + ": " + e.what());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (--running_ == 0) done_.notify_all();
  }
}

std::vector<std::vector<Tensor>> DeviceThreads::run(const DeviceBody& body) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (firstError_) throw Error(*firstError_ + " (the devices stopped then)");
    body_ = &body;
    running_ = threads_.size();
    round_.fetch_add(1, std::memory_order_release);
  }
  start_.notify_all();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return running_ == 0; });
  if (firstError_) throw Error(*firstError_);
  std::vector<std::vector<Tensor>> out(threads_.size());
  out.swap(results_);
  return out;
}

std::vector<std::vector<Tensor>> runOnDevices(const Mesh& mesh, const DeviceBody& body) {
  return DeviceThreads(mesh).run(body);
}

std::vector<std::vector<Tensor>>
runOnDevices(const Function& local, const Mesh& mesh,
             const std::vector<std::vector<Tensor>>& argsPerDevice) {
  if (static_cast<int64_t>(argsPerDevice.size()) != mesh.numDevices())
    throw Error("got arguments for " + std::to_string(argsPerDevice.size()) +
                " devices, the mesh " + mesh.str() + " has " + std::to_string(mesh.numDevices()));
  return runOnDevices(mesh, [&](Collectives& comm) {
    return interpret(local, argsPerDevice[static_cast<size_t>(comm.device())], &comm);
  });
}

} // namespace shardc
