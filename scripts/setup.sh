#!/usr/bin/env bash
# Installs the Debian packages shardc needs (build, tests, fixtures) and builds it.
# Safe to run twice: apt skips what is installed, CMake reuses the build folder.
# Usage: scripts/setup.sh [--sanitize] [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

SANITIZE=OFF
BUILD=1
for arg in "$@"; do
  case "$arg" in
    --sanitize) SANITIZE=ON ;;
    --no-build) BUILD=0 ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

PACKAGES=(
  # build
  g++ cmake ninja-build libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  # ONNX import and the PEF format
  libonnx-dev libprotobuf-dev protobuf-compiler
  # compiled runtime: oneDNN (convolution, batched matmul) and OpenBLAS (GEMM) with
  # OpenMP threads
  libdnnl-dev libopenblas0-pthread
  # tests: GoogleTest, lit + FileCheck (llvm-14-tools), Google Benchmark
  libgtest-dev libgmock-dev llvm-14-tools libbenchmark-dev python3
  # ONNX's backend test cases, for the importer's conformance test
  libonnx-testdata
  # distribution: one device per MPI rank
  libopenmpi-dev openmpi-bin
  # fixtures: reference values come from numpy and PyTorch
  python3-numpy python3-torch python3-onnx
  # benchmarks: PyTorch takes its BLAS from libblas.so.3; without OpenBLAS (above) it gets
  # the reference BLAS, some 40x slower (bench/ prints which one it found)
  python3-torchvision
  # the Python module (python/): pybind11 over the library, tested with pytest
  pybind11-dev python3-dev python3-pytest
  # libFuzzer targets (scripts/fuzz.sh): clang with its fuzzer runtime and OpenMP
  clang-14 libclang-rt-14-dev libomp-14-dev
  # style
  clang-format
  # shardc report's test renders the page in headless Chromium
  chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "setup.sh: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ((BUILD)); then
  dir=build
  if [[ $SANITIZE == ON ]]; then
    dir=build-asan
    scripts/configure-asan.sh
  else
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDC_SANITIZE=OFF
  fi
  cmake --build "$dir"
  if [[ $SANITIZE == OFF ]]; then
    # `import shardc` in /usr/bin/python3 finds build/python through a .pth file in the
    # user's site-packages (or set PYTHONPATH=build/python instead).
    site=$(/usr/bin/python3 -m site --user-site)
    mkdir -p "$site"
    echo "$PWD/build/python" >"$site/shardc.pth"
    echo "setup.sh: /usr/bin/python3 imports shardc from $PWD/build/python ($site/shardc.pth)"
  fi
fi
