#include "shardc/runtime/ThreadCollectives.h"

#include "shardc/runtime/Interpreter.h"
#include "shardc/support/Error.h"

#include <optional>
#include <system_error>
#include <thread>

namespace shardc {

ThreadWorld::ThreadWorld(Mesh mesh) : mesh_(std::move(mesh)) {
  size_t n = static_cast<size_t>(mesh_.numDevices());
  for (auto& boxes : mailboxes_)
    boxes.assign(n, std::vector<Tensor>(n));
}

void ThreadWorld::abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = true;
  arrived_.notify_all();
}

void ThreadWorld::barrier() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (aborted_) throw DeviceAborted();
  if (++waiting_ == mesh_.numDevices()) {
    waiting_ = 0;
    ++generation_;
    arrived_.notify_all();
    return;
  }
  uint64_t gen = generation_;
  arrived_.wait(lock, [&] { return generation_ != gen || aborted_; });
  if (generation_ == gen) throw DeviceAborted();
}

std::vector<Tensor> ThreadCollectives::exchange(const std::vector<std::string>& axes,
                                                const std::vector<Tensor>& send,
                                                const std::vector<TensorType>& recvTypes) {
  auto& boxes = world_.mailboxes_[round_++ % 2];
  size_t me = static_cast<size_t>(device_);
  for (size_t r = 0; r < send.size(); ++r)
    boxes[static_cast<size_t>(groupDevice(axes, static_cast<int64_t>(r)))][me] = send[r];
  // The barrier's mutex orders every device's writes above before the reads below.
  world_.barrier();
  std::vector<Tensor> got;
  for (size_t r = 0; r < recvTypes.size(); ++r) {
    int64_t from = groupDevice(axes, static_cast<int64_t>(r));
    got.push_back(std::move(boxes[me][static_cast<size_t>(from)]));
    if (got.back().type() != recvTypes[r])
      throw Error("device " + std::to_string(from) + " sent " + got.back().type().str() +
                  ", expected " + recvTypes[r].str());
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
