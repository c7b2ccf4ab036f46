// How many threads the kernels of a device use: the cores this process may run on (its CPU
// affinity and its cgroup's CPU quota), shared among the MPI ranks of the host and the devices
// of the process, capped by --threads or SHARDC_THREADS.
#include "shardc/exec/CompiledFunction.h"
#include "shardc/support/Error.h"
#include "shardc/support/SpinTiming.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sched.h>
#include <sstream>
#include <string>
#include <sys/auxv.h>
#include <unistd.h>

namespace shardc {
namespace {

// A cgroup's CPU quota as cores, from v2's cpu.max ("QUOTA PERIOD" or "max PERIOD") or v1's
// cpu.cfs_quota_us and cpu.cfs_period_us (quota -1: none); 0: no quota.
double quotaCores(const std::string& dir) {
  std::string quota;
  double period = 0;
  if (std::ifstream v2(dir + "/cpu.max"); !(v2 >> quota >> period)) {
    std::ifstream q(dir + "/cpu.cfs_quota_us"), p(dir + "/cpu.cfs_period_us");
    if (!(q >> quota) || !(p >> period)) return 0;
  }
  char* end = nullptr;
  double n = std::strtod(quota.c_str(), &end);
  return quota != "max" && end && *end == '\0' && n > 0 && period > 0 ? n / period : 0;
}

// SHARDC_THREADS, when set: the cap --threads gives.
int threadsFromEnvironment() {
  const char* s = std::getenv("SHARDC_THREADS");
  if (!s || !*s) return 0;
  char* end = nullptr;
  long n = std::strtol(s, &end, 10);
  if (*end != '\0' || n < 1 || n > 4096)
    throw Error(std::string("SHARDC_THREADS='") + s +
                "': expected a whole number of threads from 1 to 4096");
  return static_cast<int>(n);
}

} // namespace

void settleWaitPolicy(char** argv) {
  // libgomp (our kernels' OpenMP and oneDNN's) reads how long a waiting thread spins once, when
  // it loads, before main: set it, then start again as the same program with the same
  // arguments (and process id: mpirun and a parent waiting on it see no difference). Not when
  // the program runs as a loader's argument (ld.so PROGRAM: no interpreter base), whose path
  // the kernel does not know.
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  const char* program = reinterpret_cast<const char*>(getauxval(AT_EXECFN));
  if (getauxval(AT_BASE) == 0 || !program) return;
  if (setenv("GOMP_SPINCOUNT", std::to_string(spinsFor(kSpinMicros)).c_str(), 0) != 0) return;
  execv(program, argv);
  // exec refused: run on with the library's default, as before.
}

int cgroupCpuLimit(const std::string& procCgroup, const std::string& cgroupRoot) {
  std::ifstream self(procCgroup);
  std::string line;
  double cores = 0;
  while (std::getline(self, line)) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    // "0::PATH" (v2), or "N:CONTROLLER,...:PATH" (v1), where the cpu controller counts.
    std::stringstream controllers(line.substr(a + 1, b - a - 1));
    bool cpu = false;
    for (std::string c; std::getline(controllers, c, ',');)
      cpu |= c == "cpu";
    if (b != a + 1 && !cpu) continue;
    std::string root = b == a + 1 ? cgroupRoot : cgroupRoot + "/cpu";
    for (std::string dir = line.substr(b + 1);;) {
      double c = quotaCores(root + dir);
      if (c > 0) cores = cores > 0 ? std::min(cores, c) : c;
      size_t slash = dir.rfind('/');
      if (slash == std::string::npos || dir == "/") break;
      dir.resize(slash);
    }
  }
  return cores > 0 ? static_cast<int>(std::ceil(cores)) : 0;
}

int usableCores() {
  cpu_set_t set;
  int cores = 1;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cores = std::max(1, CPU_COUNT(&set));
  if (int quota = cgroupCpuLimit("/proc/self/cgroup", "/sys/fs/cgroup"); quota > 0)
    cores = std::min(cores, quota);
  return cores;
}

int intraOpThreads(int64_t devicesInProcess, int requested) {
  int ranksOnHost = 1;
  if (const char* s = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
    ranksOnHost = std::max(1, std::atoi(s));
  int64_t budget = std::max(1, usableCores() / ranksOnHost);
  if (requested <= 0) requested = threadsFromEnvironment();
  if (requested > 0) budget = std::min<int64_t>(budget, requested);
  return static_cast<int>(std::max<int64_t>(1, budget / std::max<int64_t>(1, devicesInProcess)));
}

} // namespace shardc
