// shardc._waitpolicy: the spin count shardc's OpenMP threads wait with, timed on this CPU before
// the extension that loads OpenMP does (shardc/__init__.py). It links no OpenMP itself.
#include "shardc/support/SpinTiming.h"

#include <pybind11/pybind11.h>

PYBIND11_MODULE(_waitpolicy, m) {
  m.def(
      "spin_count", [] { return shardc::spinsFor(shardc::kSpinMicros); },
      "GOMP_SPINCOUNT for about kSpinMicros of spinning on this CPU");
}
