// The library is opened with dlopen, not linked: OpenBLAS picks its CPU kernels when it
// loads, from the environment, which shardc may have to set first. Its pthread build is
// used because it locks its buffer pool (Debian's serial build gave wrong results for
// concurrent callers), with its pool held at one thread so that every call runs on the
// caller: the device's OpenMP threads, which run every other kernel too, split the GEMM
// between them (a second pool would fight them for the cores).
#include "OpenBlas.h"

#include "shardc/support/Error.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <string>

namespace shardc::openblas {
namespace {

// CBLAS's enums, as the library's ABI takes them.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
using SetThreadsFn = void (*)(int);
using ConfigFn = char* (*)();

SgemmFn gemmFn = nullptr;
std::string libraryConfig; // openblas_get_config(): version, core type, threading
std::string loadError = "shardc was built without libopenblas0-pthread";
std::string choice; // SHARDC_GEMM, read once with the loading

// Runs once, before any GEMM: the environment is read and set here only.
void load() {
  if (const char* c = std::getenv("SHARDC_GEMM")) choice = c;
  if (choice == "onednn") return;
#ifdef SHARDC_OPENBLAS_LIBRARY
  // OpenBLAS 0.3.21 takes recent AVX-512 Intel cores for an SSE3 "Prescott" (several times
  // slower); a user's own setting wins.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  // Its pool is made when it loads, with a thread per core unless told otherwise, and those
  // threads spin for a while after: a GEMM right after loading ran 4x slower beside them.
  // The caller's own setting is put back once the library has read it.
  const char* had = std::getenv("OPENBLAS_NUM_THREADS");
  std::string before = had ? had : "";
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  void* lib = dlopen(SHARDC_OPENBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (had)
    setenv("OPENBLAS_NUM_THREADS", before.c_str(), 1);
  else
    unsetenv("OPENBLAS_NUM_THREADS");
  if (!lib) {
    const char* e = dlerror();
    loadError = e ? e : std::string("cannot open ") + SHARDC_OPENBLAS_LIBRARY;
    return;
  }
  auto gemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cblas_sgemm"));
  auto threads = reinterpret_cast<SetThreadsFn>(dlsym(lib, "openblas_set_num_threads"));
  if (!gemm || !threads) {
    loadError = std::string(SHARDC_OPENBLAS_LIBRARY) + " lacks cblas_sgemm";
    return;
  }
  threads(1); // every call on its caller
  if (auto config = reinterpret_cast<ConfigFn>(dlsym(lib, "openblas_get_config")))
    libraryConfig = config();
  gemmFn = gemm;
#endif
}

SgemmFn loaded() {
  static std::once_flag once;
  std::call_once(once, load);
  return gemmFn;
}

} // namespace

bool chosenByUser() {
  loaded();
  return !choice.empty();
}

std::string config() {
  return loaded() ? libraryConfig : "";
}

bool available() {
  bool ok = loaded() != nullptr;
  if (choice == "onednn") return false;
  if (choice == "openblas" && !ok)
    throw Error("SHARDC_GEMM=openblas, but OpenBLAS could not be loaded: " + loadError);
  if (!choice.empty() && choice != "openblas")
    throw Error("SHARDC_GEMM='" + choice + "': expected openblas or onednn");
  return ok;
}

void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  auto i = [](int64_t v) { return static_cast<int>(v); };
  loaded()(kRowMajor, transA ? kTrans : kNoTrans, transB ? kTrans : kNoTrans, i(m), i(n), i(k),
           1.0f, a, i(lda), b, i(ldb), beta, c, i(ldc));
}

} // namespace shardc::openblas
