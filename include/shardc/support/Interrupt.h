// A request to stop the work of one thread early (Ctrl-C in the Python module, which runs a
// compile or a run on a worker thread and watches for signals itself). Long loops poll it:
// the search between episodes, a run between steps.
#pragma once

#include <atomic>

namespace shardc {

// While alive, interruptRequested() on this thread reads `flag`.
class InterruptScope {
public:
  explicit InterruptScope(const std::atomic<bool>& flag);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

private:
  const std::atomic<bool>* previous_;
};

bool interruptRequested();
// Throws shardc::Error ("interrupted") when a stop was requested.
void throwIfInterrupted();

} // namespace shardc
