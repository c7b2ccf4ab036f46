#!/usr/bin/env bash
# Configures build-asan/: clang with AddressSanitizer + UndefinedBehaviorSanitizer, and
# libFuzzer's coverage on the readers the fuzz targets reach, holding the tests and the fuzz
# targets alike, so that the sanitizer test pass (scripts/test.sh) and the fuzzers
# (scripts/fuzz.sh) share one build of the libraries. Safe to run twice.
set -euo pipefail
cd "$(dirname "$0")/.."
# A build-asan/ of an earlier layout (GCC) cannot switch compilers in place.
if [[ -f build-asan/CMakeCache.txt ]] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSHARDC_SANITIZE=ON -DSHARDC_FUZZ=ON >/dev/null
