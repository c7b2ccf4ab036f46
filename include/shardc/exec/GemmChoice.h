// Which library runs a GEMM that both OpenBLAS and oneDNN can run, decided per machine and per
// shape by timing both on the shape itself: the faster library differs from machine to machine
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

// The decisions this process made or read, one line each: "KEY: LIBRARY (openblas X ms,
// onednn Y ms, measured now | cached in FILE)".
std::vector<std::string> gemmChoices();

// Records how a bf16 matmul step was bound ("bf16 on the stored operands (brg:...)", "widened
// to f32 (...)"): the way its CPU allows (KernelsMatmulBf16.cpp).
void noteBf16Matmul(const std::string& how);

// The ways this process bound bf16 matmul steps, with the number of steps each: "N: HOW".
std::vector<std::string> bf16MatmulWays();

// Seconds per call of `fn`: the least of `reps` calls after one warm-up call (one call when the
// warm-up took over 20 ms).
double leastSeconds(int reps, const std::function<void()>& fn);

} // namespace shardc
