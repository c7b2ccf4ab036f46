#!/usr/bin/env bash
# Builds shardc and runs every test (lit + GoogleTest), then does the same under
# AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/, then runs each libFuzzer
# target for 60 s, two at a time (scripts/fuzz.sh, clang build in build-fuzz/).
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
  local dir=$1 sanitize=$2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDC_SANITIZE="$sanitize" >/dev/null
  cmake --build "$dir"
  ctest --test-dir "$dir" --output-on-failure -j2
}

run_suite build OFF
if ((SANITIZE)); then
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_suite build-asan ON
fi
if ((FUZZ)); then
  scripts/fuzz.sh 60
fi
