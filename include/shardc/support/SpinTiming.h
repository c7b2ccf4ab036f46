// How long an OpenMP thread spins before it sleeps, and the spins of libgomp's wait loop that
// take that long on the CPU at hand. Header-only, without OpenMP: the Python package times it
// before the extension that loads libgomp (python/waitpolicy.cpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>

namespace shardc {

// A thread waits for the next kernel, or at a barrier. libgomp's default (300000 spins, 4 ms
// on the Xeon this was measured on) made a step 4-8x slower beside one busy process on 2
// cores: the spinning thread held the core its descheduled partner needed. Sleeping at once
// (OMP_WAIT_POLICY=passive) cost 12-24% on the idle machine (a wake-up per kernel); about
// 20 us kept the idle time within the noise and the busy slowdown near 2x
// (bench/busy_machine.py).
inline constexpr double kSpinMicros = 20;

// Spins of libgomp's wait loop (a load and a pause, whose cost differs several-fold between
// CPUs) that take about `micros`, timed here (about 0.3 ms).
inline long spinsFor(double micros) {
  std::atomic<int> flag{0};
  constexpr int kSpins = 20000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kSpins && !flag.load(std::memory_order_relaxed); ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
      kSpins;
  return std::clamp(static_cast<long>(micros * 1e3 / std::max(ns, 0.1)), 100L, 100000L);
}

} // namespace shardc
