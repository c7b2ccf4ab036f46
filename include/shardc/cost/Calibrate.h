// `shardc calibrate`: this machine measured as a target for the cost model.
#pragma once

#include <string>

namespace shardc {

struct CalibrateOptions {
  std::string output; // target file to write; empty: the target goes to stdout with the summary
  bool mpi = false;   // insist on measuring MPI collectives (needs mpirun)
  bool quick = false; // fewer, smaller measurements (tests)
};

// Measures what shardc's runtime reaches on this machine (matmul FLOP/s, elementwise bytes/s,
// per-op overhead, memory, all_reduce between thread devices as intra_node and, under mpirun,
// between MPI ranks as inter_node) and writes it as a target file. Returns the summary to
// print; under mpirun, ranks other than 0 return "".
std::string calibrate(const CalibrateOptions& options);

} // namespace shardc
