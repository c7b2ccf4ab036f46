// In-process devices: one thread per device of a mesh, all in one process, exchanging
// tensors through shared mailboxes. The simulated devices of `shardc run` and of the tests.
#pragma once

#include "shardc/collectives/Collectives.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace shardc {

// The most devices one process simulates as threads (more need mpirun).
inline constexpr int64_t kMaxThreadDevices = 256;
class Function;

// Thrown in a device thread waiting for its peers once another device has failed, so that
// it stops instead of waiting forever. Not a shardc::Error: nothing reports it as one.
class DeviceAborted : public std::runtime_error {
public:
  DeviceAborted() : std::runtime_error("aborted: another device failed") {}
};

// What the devices of one run share: per group of devices that exchange (one per mesh axes
// and coordinates on the other axes), mailboxes and a barrier; abort() releases them all.
class ThreadWorld {
public:
  explicit ThreadWorld(Mesh mesh) : mesh_(std::move(mesh)) {}
  const Mesh& mesh() const { return mesh_; }
  // Makes every device waiting in a collective, now or later, throw DeviceAborted.
  void abort();

private:
  friend class ThreadCollectives;
  struct Group {
    explicit Group(size_t size);
    std::mutex mutex;
    std::condition_variable arrived;
    int64_t size, waiting = 0;
    std::atomic<uint64_t> generation = 0; // written under the mutex, read by spinning waiters
    // boxes[round % 2][to * size + from], by rank in the group. Two sets, so a device
    // already sending in round k+1 cannot overwrite what a slower one has still to read
    // from round k: reaching round k+2 takes every member past round k+1's barrier.
    std::vector<Tensor> boxes[2];
  };
  // The group whose first member is `first` for the axes `axes` ("data,model"), made on the
  // first call.
  Group& group(const std::string& axes, int64_t first, int64_t size);
  // Waits until every member of `g` has arrived; throws DeviceAborted after abort().
  void barrier(Group& g);

  Mesh mesh_;
  std::mutex mutex_; // guards groups_
  std::map<std::pair<std::string, int64_t>, std::unique_ptr<Group>> groups_;
  std::atomic<bool> aborted_ = false;
};

// One device of a ThreadWorld. A collective waits only for the devices of its group: each
// group's exchanges come in the same order on all its members (SPMD), so its rounds pair up.
class ThreadCollectives : public Collectives {
public:
  ThreadCollectives(ThreadWorld& world, int64_t device) : world_(world), device_(device) {}
  const Mesh& mesh() const override { return world_.mesh(); }
  int64_t device() const override { return device_; }

protected:
  std::vector<Tensor> exchange(const std::vector<std::string>& axes,
                               const std::vector<Tensor>& send,
                               const std::vector<TensorType>& recvTypes) override;

private:
  ThreadWorld& world_;
  int64_t device_;
  std::map<ThreadWorld::Group*, uint64_t> rounds_; // exchanges done in each group
};

using DeviceBody = std::function<std::vector<Tensor>(Collectives&)>;

// A thread per device of `mesh`, kept from one run() to the next: a training step starts
// and joins no threads, and each device keeps its thread's state (OpenMP's, oneDNN's) warm.
class DeviceThreads {
public:
  explicit DeviceThreads(const Mesh& mesh);
  ~DeviceThreads();
  DeviceThreads(const DeviceThreads&) = delete;
  DeviceThreads& operator=(const DeviceThreads&) = delete;

  // Runs `body` on every device's thread; returns each device's results. When a device
  // throws, the others are aborted and the first failure is rethrown as shardc::Error
  // "device N: <message>"; later runs throw it again (the collectives stay aborted).
  std::vector<std::vector<Tensor>> run(const DeviceBody& body);
  // Collectives::scaleSums on every device.
  void scaleSums(const std::string& axis, double factor) {
    for (auto& c : comms_)
      c->scaleSums(axis, factor);
  }

private:
  void serve(size_t device);
  void fail(std::string message);
  void stop(); // ends and joins the threads

  ThreadWorld world_;
  std::vector<std::unique_ptr<ThreadCollectives>> comms_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const DeviceBody* body_ = nullptr;
  std::atomic<uint64_t> round_ = 0; // bumped under mutex_ to start a run
  size_t running_ = 0;              // devices still in this run
  bool stopping_ = false;
  std::vector<std::vector<Tensor>> results_;
  std::optional<std::string> firstError_;
};

// Runs `body` once on every device of `mesh`, each on its own thread (DeviceThreads::run).
std::vector<std::vector<Tensor>> runOnDevices(const Mesh& mesh, const DeviceBody& body);

// Runs the per-device program `local` with the reference interpreter on every device of
// `mesh`, device d on argsPerDevice[d]; returns each device's results.
std::vector<std::vector<Tensor>>
runOnDevices(const Function& local, const Mesh& mesh,
             const std::vector<std::vector<Tensor>>& argsPerDevice);

} // namespace shardc
