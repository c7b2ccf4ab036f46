#include "shardc/runtime/ThreadCollectives.h"

#include "shardc/runtime/Interpreter.h"
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

std::vector<std::vector<Tensor>>
runOnDevices(const Mesh& mesh, const std::function<std::vector<Tensor>(Collectives&)>& body) {
  ThreadWorld world(mesh);
  size_t n = static_cast<size_t>(mesh.numDevices());
  std::vector<std::vector<Tensor>> results(n);
  std::mutex mutex;
  std::optional<std::string> firstError;
  auto fail = [&](std::string message) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!firstError) firstError = std::move(message);
    }
    world.abort();
  };
  auto run = [&](size_t d) {
    try {
      ThreadCollectives comm(world, static_cast<int64_t>(d));
      results[d] = body(comm);
    } catch (const DeviceAborted&) {
      // A peer failed; its error is the one reported.
    } catch (const std::exception& e) {
      fail("device " + std::to_string(d) + ": " + e.what());
    }
  };
  std::vector<std::thread> threads;
  try {
    for (size_t d = 0; d < n; ++d)
      threads.emplace_back(run, d);
  } catch (const std::system_error& e) {
    fail(std::string("cannot start a thread per device: ") + e.what());
  }
  for (std::thread& t : threads)
    t.join();
  if (firstError) throw Error(*firstError);
  return results;
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
