#include "shardc/collectives/MpiCollectives.h"

#include "shardc/support/Error.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <thread>

namespace shardc {
namespace mpi {
namespace {

double collectiveTimeout = 300;

// Waits for a nonblocking collective: polls for about a millisecond (most finish within it),
// then sleeps between polls; past the timeout the job ends with an error naming `what`.
void await(MPI_Request& req, const std::string& what) {
  auto start = std::chrono::steady_clock::now();
  int done = 0;
  for (int polls = 0;; ++polls) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (polls < 2000) continue;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > collectiveTimeout) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", collectiveTimeout);
      abortAll("shardc: error: rank " + std::to_string(worldRank()) + ": " + what +
               " waited more than " + secs +
               " s for the other ranks (one stopped, hangs or died); ending the job "
               "(--collective-timeout sets the wait)");
    }
  }
}

} // namespace

bool launchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

void init(int& argc, char**& argv) {
  MPI_Init(&argc, &argv);
}

void finalize() {
  MPI_Finalize();
}

int worldRank() {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int worldSize() {
  int n;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void barrier(const std::string& what) {
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  await(req, what);
}

int ranksOnHost() {
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int n;
  MPI_Comm_size(host, &n);
  MPI_Comm_free(&host);
  return n;
}

std::vector<Tensor> gatherToRoot(const Tensor& local) {
  if (local.byteSize() > INT_MAX) throw Error(local.type().str() + " is too large to gather");
  int n = worldSize();
  bool root = worldRank() == 0;
  // The type first (dtype, rank, dims), so the root can size the data it receives.
  std::vector<int64_t> header = {static_cast<int64_t>(local.dtype()), local.type().rank()};
  header.insert(header.end(), local.shape().begin(), local.shape().end());
  int headerLen = static_cast<int>(header.size());
  std::vector<int> lens(root ? n : 0), at(root ? n : 0);
  MPI_Request req;
  MPI_Igather(&headerLen, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
  await(req, "gathering the outputs");
  int total = 0;
  for (int r = 0; r < static_cast<int>(lens.size()); ++r)
    at[r] = total, total += lens[r];
  std::vector<int64_t> headers(static_cast<size_t>(total));
  MPI_Igatherv(header.data(), headerLen, MPI_INT64_T, headers.data(), lens.data(), at.data(),
               MPI_INT64_T, 0, MPI_COMM_WORLD, &req);
  await(req, "gathering the outputs");

  std::vector<Tensor> out;
  std::vector<int> bytes(lens.size());
  for (size_t r = 0; r < lens.size(); ++r) {
    const int64_t* h = headers.data() + at[r];
    TensorType t{static_cast<DType>(h[0]), Shape(h + 2, h + 2 + h[1])};
    out.emplace_back(t);
    bytes[r] = static_cast<int>(t.bytes()); // each rank checked its own size
  }
  std::vector<uint8_t> all;
  total = 0;
  for (size_t r = 0; r < bytes.size(); ++r)
    at[r] = total, total += bytes[r];
  all.resize(static_cast<size_t>(total));
  MPI_Igatherv(local.data(), static_cast<int>(local.byteSize()), MPI_BYTE, all.data(), bytes.data(),
               at.data(), MPI_BYTE, 0, MPI_COMM_WORLD, &req);
  await(req, "gathering the outputs");
  for (size_t r = 0; r < out.size(); ++r)
    if (bytes[r]) std::memcpy(out[r].data(), all.data() + at[r], out[r].byteSize());
  return out;
}

void setCollectiveTimeout(double seconds) {
  collectiveTimeout = seconds;
}

void agree(const std::vector<std::pair<std::string, uint64_t>>& items) {
  // First the PEF and the number of items, which the PEF decides; then every item.
  int n = worldSize();
  auto gather = [&](const std::vector<uint64_t>& mine) {
    std::vector<uint64_t> all(mine.size() * static_cast<size_t>(n));
    MPI_Request req;
    MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, all.data(),
                   static_cast<int>(mine.size()), MPI_UINT64_T, MPI_COMM_WORLD, &req);
    await(req, "comparing what the ranks were given");
    return all;
  };
  auto differs = [&](const std::string& what, int rank) {
    if (worldRank() == 0)
      abortAll("shardc: error: rank " + std::to_string(rank) + " was given a different " + what +
               " than rank 0: every rank must run the same PEF on the same inputs, weights "
               "and options");
    // Rank 0 says why and ends the job; an abort from here could kill it before it says it.
    std::this_thread::sleep_for(std::chrono::seconds(10));
    abortAll("");
  };
  std::vector<uint64_t> head = gather({items.at(0).second, items.size()});
  for (int r = 1; r < n; ++r)
    if (head[2 * r] != head[0] || head[2 * r + 1] != head[1]) differs(items[0].first, r);
  std::vector<uint64_t> mine;
  for (const auto& item : items)
    mine.push_back(item.second);
  std::vector<uint64_t> all = gather(mine);
  for (int r = 1; r < n; ++r)
    for (size_t k = 0; k < items.size(); ++k)
      if (all[r * items.size() + k] != all[k]) differs(items[k].first, r);
}

void abortAll(const std::string& message) {
  if (!message.empty()) std::cerr << message << std::endl;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

} // namespace mpi

// Not freed here: MPI_Comm_free is collective, and a rank unwinding after an error must not
// wait for the others. MPI_Finalize releases them.
struct MpiCollectives::Comms {
  std::map<std::vector<std::string>, MPI_Comm> byAxes;
};

MpiCollectives::MpiCollectives(Mesh mesh)
    : mesh_(std::move(mesh)), device_(mpi::worldRank()), comms_(std::make_unique<Comms>()) {
  if (mesh_.numDevices() != mpi::worldSize())
    throw Error("the mesh " + mesh_.str() + " has " + std::to_string(mesh_.numDevices()) +
                " devices, but mpirun started " + std::to_string(mpi::worldSize()) +
                " ranks; run mpirun -np " + std::to_string(mesh_.numDevices()));
}

MpiCollectives::~MpiCollectives() = default;

std::vector<Tensor> MpiCollectives::exchange(const std::vector<std::string>& axes,
                                             const std::vector<Tensor>& send,
                                             const std::vector<TensorType>& recvTypes) {
  auto [it, fresh] = comms_->byAxes.try_emplace(axes, MPI_COMM_NULL);
  // Every rank makes the communicator for `axes` at the same collective (SPMD). Keyed by
  // group rank, the communicator's ranks are the group ranks; its color is the group's
  // rank-0 device, which names the group.
  if (fresh)
    MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(groupDevice(axes, 0)),
                   static_cast<int>(groupRank(axes)), &it->second);

  size_t n = send.size();
  std::vector<int> sendCounts(n), sendAt(n), recvCounts(n), recvAt(n);
  int64_t sendTotal = 0, recvTotal = 0;
  for (size_t r = 0; r < n; ++r) {
    sendAt[r] = static_cast<int>(sendTotal);
    recvAt[r] = static_cast<int>(recvTotal);
    sendCounts[r] = static_cast<int>(send[r].byteSize());
    recvCounts[r] = static_cast<int>(recvTypes[r].bytes());
    sendTotal += static_cast<int64_t>(send[r].byteSize());
    recvTotal += recvTypes[r].bytes();
    if (sendTotal > INT_MAX || recvTotal > INT_MAX)
      throw Error("a collective over 2 GiB per device is not supported with MPI");
  }
  std::vector<uint8_t> out(static_cast<size_t>(sendTotal)), in(static_cast<size_t>(recvTotal));
  for (size_t r = 0; r < n; ++r)
    if (sendCounts[r]) std::memcpy(out.data() + sendAt[r], send[r].data(), send[r].byteSize());
  MPI_Request req;
  MPI_Ialltoallv(out.data(), sendCounts.data(), sendAt.data(), MPI_BYTE, in.data(),
                 recvCounts.data(), recvAt.data(), MPI_BYTE, it->second, &req);
  std::string what = "a collective over the mesh axes";
  for (const std::string& a : axes)
    what += " " + a;
  mpi::await(req, what);
  std::vector<Tensor> got;
  for (size_t r = 0; r < n; ++r) {
    got.emplace_back(recvTypes[r]);
    if (recvCounts[r]) std::memcpy(got.back().data(), in.data() + recvAt[r], got.back().byteSize());
  }
  return got;
}

} // namespace shardc
