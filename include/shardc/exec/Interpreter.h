// The reference interpreter: runs a function op by op with the registry's reference
// kernels. Simple and obviously correct; the oracle every transformation is checked against.
#pragma once

#include "shardc/ir/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace shardc {
class Communicator;
class Function;

// Runs `f` on `args` (one per argument, types must match: checked, throws shardc::Error).
// Returns one tensor per function result. Kernel failures are rethrown as shardc::Error
// naming the op and its location. `comm` is the device running a per-device program: the
// collective ops need it.
// What the run held: the arguments (read in place) and, at the worst moment, the op results
// alive (each freed after its last use).
struct InterpreterStats {
  int64_t argumentBytes = 0;
  int64_t peakResultBytes = 0;
  std::map<std::string, double> secondsByOp; // kernel time per op name, added up
};

std::vector<Tensor> interpret(const Function& f, const std::vector<Tensor>& args,
                              Communicator* comm = nullptr, InterpreterStats* stats = nullptr);

} // namespace shardc
