// Which library runs a GEMM that both OpenBLAS and oneDNN can run (and whether a bf16
// convolution computes in bf16 or f32), decided per machine and per shape by timing both on the
// shape itself: the faster library differs from machine to machine
// (OpenBLAS runs the kernels of OPENBLAS_CORETYPE, which an environment may set wrongly; oneDNN
// picks its own by the CPU's instruction sets), and from shape to shape, so no fixed rule
// holds. A decision is kept for the process and in the user's cache folder
// ($XDG_CACHE_HOME/shardc, else ~/.cache/shardc), one file per machine: its CPU model,
// OpenBLAS's own description (version, core type) and oneDNN's version name the file, so a
// cached choice is never used on another machine or library. SHARDC_GEMM, when set, decides
// instead and nothing is timed.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace shardc {

struct GemmTimes {
  double openblas = 0, onednn = 0; // seconds per GEMM
};

// True for OpenBLAS. `key` names the GEMM (shape, layout, threads); `measure` times both
// libraries on it, called only when neither this process nor the machine's cache file has
// decided the key. Safe to call from several threads (devices bind at once): one measures at a
// time.
bool gemmOnOpenBlas(const std::string& key, const std::function<GemmTimes()>& measure);

// The same decision between any two ways to run a kernel (`first`, `second`: names without
// spaces, as the log and the cache file give them; `measure` returns the seconds of each): true
// when the first is faster. A cached decision naming another way is measured again.
bool firstWayFaster(const std::string& key, const std::string& first, const std::string& second,
                    const std::function<std::pair<double, double>()>& measure);

// The decisions this process made or read, one line each: "KEY: WAY (openblas X ms,
// onednn Y ms, measured now | cached in FILE)", with the names of the key's two ways.
std::vector<std::string> gemmChoices();

// Records how a bf16 step of `kind` (matmul, convolution) was bound: "bf16 (brg:...)",
// "widened to f32 (...)", ...
void noteBf16Step(const std::string& kind, const std::string& how);

// The ways this process bound bf16 steps, with the number of steps each: "N KIND: HOW".
std::vector<std::string> bf16StepWays();

// Seconds per call of `fn`: the least of `reps` calls after one warm-up call (one call when the
// warm-up took over 20 ms).
double leastSeconds(int reps, const std::function<void()>& fn);

} // namespace shardc
