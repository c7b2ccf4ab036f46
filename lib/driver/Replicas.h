// Data-parallel replicas chosen when a PEF runs: a PEF compiled with --data-parallel -ws N
// runs on R >= N replicas, each on its own batch of the compiled per-replica size, as one
// device would train on all R replicas' samples.
#pragma once

#include <cstdint>
#include <string>

namespace shardc {
struct LoadedPef;

// The mesh axis --data-parallel makes: its devices are the replicas.
inline constexpr const char* kDataAxis = "data";

// The replicas the PEF's data axis has (N), or 0 when it has none.
int64_t compiledReplicas(const LoadedPef& l);

// Replicas for `ranks` MPI ranks: ranks / (devices of one replica); throws shardc::Error when
// the PEF has no data axis or the ranks are not whole replicas.
int64_t replicasForRanks(const LoadedPef& l, int64_t ranks);

// Makes `l` run on `replicas` replicas (>= the compiled N): the mesh's data axis gets that
// size, every input and output split over it the matching whole shape, and every all_reduce
// over it the group of the new mesh and a scale of N / replicas, so that a sum over the
// replicas' samples stands where the program expects one over N replicas' (the compiled
// means over the batch then divide by the new batch). Exact for a loss that is a mean over
// the batch (R replicas train as one device on their R x b samples, and a ratio of two sums
// is unchanged); a loss summed over the batch keeps N replicas' magnitude (N/R of the R
// replicas' sum). Refuses programs whose data axis is more than a batch split: a parameter or
// optimizer state split over it (optimizer-state sharding), or another collective over it (a
// device-specific piece of a constant, a gather).
// Returns a line for the log, or "" when the count is the compiled one.
std::string setReplicas(LoadedPef& l, int64_t replicas, const std::string& why);

} // namespace shardc
