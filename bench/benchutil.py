"""Shared by the benchmark scripts: repository paths, common flags, median timing."""
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))  # fixture generators


def add_common_args(ap):
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=5)


def median_time(fn, repeats):
    """Median wall time of `repeats` calls of fn(), in seconds."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_quiet(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
