"""Shared by the benchmark scripts: repository paths, common flags, median timing."""
import os
import re
import shutil
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


GPT_LOSS = os.path.join(ROOT, "test", "import", "Inputs", "gpt_loss")


def parse_gpt_step_args(doc, steps=10):
    """Flags of the benchmarks that time the GPT fixture's training step: --build, --repeats
    (default 3), --steps (timed steps per run, `steps`) and --batch (8)."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    add_common_args(ap)
    ap.set_defaults(repeats=3)
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--batch", type=int, default=8)
    return ap.parse_args()


def replica_batch(batch, flags):
    """-b for an ONNX compile with `flags` whose step takes `batch` samples: with
    --data-parallel -ws N, -b is one replica's batch."""
    if "--data-parallel" in flags:
        return batch // int(flags[flags.index("-ws") + 1])
    return batch


def gpt_batch_inputs(out, batch):
    """The GPT fixture's token ids and targets repeated to `batch` rows, saved under `out`;
    returns the matching `shardc run --input` flags."""
    import numpy as np

    flags = []
    for n in ("idx", "targets"):
        x = np.load(os.path.join(GPT_LOSS, n + ".npy"))
        np.save(os.path.join(out, n + ".npy"), np.concatenate([x] * (batch // x.shape[0])))
        flags += ["--input", n + "=" + os.path.join(out, n + ".npy")]
    return flags


def mpirun_prefix():
    """mpirun with the flags a root user on a small machine needs, or None without MPI."""
    mpirun = shutil.which("mpirun")
    return [mpirun, "--allow-run-as-root", "--oversubscribe"] if mpirun else None


def max_rss_run(cmd, env=None):
    """Runs cmd to completion; returns (stdout, max RSS in bytes)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    if status:
        sys.exit(f"{' '.join(cmd)} failed:\n{err}")
    return out, usage.ru_maxrss * 1024


def seconds_before_first_step(stats):
    """What `shardc run --stats` (its printed text) spent before the first step: its load,
    state, arguments and start stages, and those stages by name."""
    stages = {k: float(v) for k, v in re.findall(
        r" ([a-z-]+) ([0-9.]+)", re.search(r"seconds by stage:(.*)", stats).group(1))}
    return sum(stages[s] for s in ("load", "state", "arguments", "start")), stages


def beside_busy_process(fn):
    """fn() while one other process keeps a core busy (`yes > /dev/null`)."""
    yes = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
    try:
        return fn()
    finally:
        yes.kill()
        yes.wait()
