#!/usr/bin/env bash
# Builds shardc and runs every test (lit + GoogleTest), then does the same under
# AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ (clang), then runs each
# libFuzzer target for 15 s, two at a time (scripts/fuzz.sh, from the same build-asan/).
# Usage: scripts/test.sh [--no-sanitize] [--no-fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."

SANITIZE=1
FUZZ=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitize) SANITIZE=0 ;;
    --no-fuzz) FUZZ=0 ;;
    *) echo "test.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

run_suite() {
  local dir=$1
  cmake --build "$dir"
  ctest --test-dir "$dir" --output-on-failure -j2
}

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDC_SANITIZE=OFF >/dev/null
run_suite build
if ((SANITIZE || FUZZ)); then
  scripts/configure-asan.sh
fi
if ((SANITIZE)); then
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_suite build-asan
fi
if ((FUZZ)); then
  scripts/fuzz.sh 15
fi
