#include "shardc/support/Interrupt.h"

#include "shardc/support/Error.h"

namespace shardc {
namespace {
thread_local const std::atomic<bool>* current = nullptr;
} // namespace

InterruptScope::InterruptScope(const std::atomic<bool>& flag) : previous_(current) {
  current = &flag;
}

InterruptScope::~InterruptScope() {
  current = previous_;
}

bool interruptRequested() {
  return current && current->load(std::memory_order_relaxed);
}

void throwIfInterrupted() {
  if (interruptRequested()) throw Error("interrupted");
}

} // namespace shardc
