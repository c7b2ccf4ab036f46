// One device per MPI rank (`mpirun -np N shardc run ...`): device d is world rank d. Only
// lib/collectives/MpiCollectives.cpp sees mpi.h.
#pragma once

#include "shardc/collectives/Collectives.h"

#include <memory>

namespace shardc {

namespace mpi {
// True when mpirun (OpenMPI) or a PMI launcher started this process. Only then is MPI
// initialized, so a plain `shardc run` never touches MPI.
bool launchedByMpi();
void init(int& argc, char**& argv);
void finalize();
int worldRank();
int worldSize();
// Waits until every rank has called it, polling every 50 us after the first millisecond (a rank
// that waits for another's measurement leaves it most of the cores); `what` names the wait in
// a timeout's error.
void barrier(const std::string& what);
// Ranks on this rank's host (those that share its memory), this one included. Collective.
int ranksOnHost();
// Collective over all ranks: on rank 0, every rank's `local` in rank order; elsewhere none.
std::vector<Tensor> gatherToRoot(const Tensor& local);
// Prints `message` (one line, unless empty) to stderr and ends every rank with a non-zero
// exit: ranks waiting in a collective for this one would otherwise wait forever.
[[noreturn]] void abortAll(const std::string& message);
// How long a collective waits for its peers before it ends the job (a rank stopped, hung or
// died without MPI noticing). Default 300 s.
void setCollectiveTimeout(double seconds);
// Collective over all ranks: each rank's named digests of what it was given (items[0] its
// PEF, which decides the other names) against rank 0's; on a difference rank 0 names it and
// every rank ends with a non-zero exit.
void agree(const std::vector<std::pair<std::string, uint64_t>>& items);
} // namespace mpi

class MpiCollectives : public Collectives {
public:
  // Throws shardc::Error unless the mesh has one device per rank.
  explicit MpiCollectives(Mesh mesh);
  ~MpiCollectives() override;
  const Mesh& mesh() const override { return mesh_; }
  int64_t device() const override { return device_; }

protected:
  std::vector<Tensor> exchange(const std::vector<std::string>& axes,
                               const std::vector<Tensor>& send,
                               const std::vector<TensorType>& recvTypes) override;

private:
  struct Comms; // one communicator per axes list, made on first use
  Mesh mesh_;
  int64_t device_;
  std::unique_ptr<Comms> comms_;
};

} // namespace shardc
