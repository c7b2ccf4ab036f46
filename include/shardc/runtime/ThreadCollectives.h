// In-process devices: one thread per device of a mesh, all in one process, exchanging
// tensors through shared mailboxes. The simulated devices of `shardc run` and of the tests.
#pragma once

#include "shardc/runtime/Collectives.h"

#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>

namespace shardc {
class Function;

// Thrown in a device thread waiting for its peers once another device has failed, so that
// it stops instead of waiting forever. Not a shardc::Error: nothing reports it as one.
class DeviceAborted : public std::runtime_error {
public:
  DeviceAborted() : std::runtime_error("aborted: another device failed") {}
};

// What the devices of one run share: the mailboxes and a barrier that abort() releases.
class ThreadWorld {
public:
  explicit ThreadWorld(Mesh mesh);
  const Mesh& mesh() const { return mesh_; }
  // Makes every device waiting in a collective, now or later, throw DeviceAborted.
  void abort();

private:
  friend class ThreadCollectives;
  // Waits until every device has arrived; throws DeviceAborted after abort().
  void barrier();

  Mesh mesh_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  int64_t waiting_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
  // mailboxes_[round % 2][to][from]. Two sets, so a device already sending in round k+1
  // cannot overwrite what a slower device has still to read from round k.
  std::vector<std::vector<Tensor>> mailboxes_[2];
};

// One device of a ThreadWorld. Every collective ends in a barrier over the whole world,
// which is correct for subgroups too because every device runs the same collectives (SPMD).
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
  uint64_t round_ = 0;
};

// Runs `body` on every device of `mesh`, each on its own thread, and returns each device's
// results. When a device throws, the others are aborted and the first failure is rethrown
// as shardc::Error "device N: <message>".
std::vector<std::vector<Tensor>>
runOnDevices(const Mesh& mesh, const std::function<std::vector<Tensor>(Collectives&)>& body);

// Runs the per-device program `local` with the reference interpreter on every device of
// `mesh`, device d on argsPerDevice[d]; returns each device's results.
std::vector<std::vector<Tensor>>
runOnDevices(const Function& local, const Mesh& mesh,
             const std::vector<std::vector<Tensor>>& argsPerDevice);

} // namespace shardc
