#!/usr/bin/env python3
"""Start-up and compile of a big PEF: a GPT-2-small-shaped decoder (vocabulary 50257, d 768,
12 heads, 12 layers, sequence 128, batch 1; text IR and random weights from
scripts/gen_gpt.py), compiled for inference and run for one step. Prints, median of
--repeats runs: the compile's wall time and peak memory; `shardc run`'s time before its
first step (its load, state, arguments and start stages, as `run --stats` reports them), the
step, the whole process and its peak memory; each memory also as a multiple of the weights'
bytes. With --training, the same for an SGD training step (cross-entropy on labels `y`).

  bench/startup.py [--build build] [--repeats 3] [--training] [--layers 12]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchutil import ROOT, add_common_args, max_rss_run, seconds_before_first_step

import numpy as np


def timed(cmd):
    """A child process's stdout, wall seconds and peak RSS (bytes)."""
    t0 = time.perf_counter()
    out, rss = max_rss_run(cmd)
    return out, time.perf_counter() - t0, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.set_defaults(repeats=3)
    ap.add_argument("--training", action="store_true")
    ap.add_argument("--layers", type=int, default=12)
    a = ap.parse_args()
    shardc = os.path.join(a.build, "bin", "shardc")
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_gpt.py"), "--vocab",
                        "50257", "--dim", "768", "--heads", "12", "--layers", str(a.layers),
                        "--seq", "128", "--batch", "1", os.path.join(d, "m")], check=True,
                       stdout=subprocess.DEVNULL)
        weights = sum(np.load(os.path.join(d, "m", f), mmap_mode="r").nbytes
                      for f in os.listdir(os.path.join(d, "m"))
                      if f.endswith(".npy") and f not in ("ids.npy", "expected_logits.npy"))
        ids = os.path.join(d, "m", "ids.npy")
        mode = ["--loss", "cross-entropy", "--labels", "y", "--optimizer", "sgd"] \
            if a.training else ["--inference"]
        compile_cmd = [shardc, "compile", os.path.join(d, "m", "gpt.ir"), *mode,
                       "--output-folder", d, "--pef-name", "g"]
        pef = os.path.join(d, "g", "g.pef")
        run_cmd = [shardc, "run", "--pef", pef, "--input", f"ids={ids}", "--steps", "1",
                   "--output-dir", os.path.join(d, "o"), "--stats"]
        if a.training:  # the next token's labels: any ids will do for timing
            run_cmd += ["--input", f"y={ids}"]
        comp, runs = [], []
        for _ in range(a.repeats):
            comp.append(timed(compile_cmd)[1:])
            text, wall, rss = timed(run_cmd)
            before, stages = seconds_before_first_step(text)
            runs.append((before, stages["steps"], wall, rss, stages["load"]))
        med = lambda xs: statistics.median(xs)  # noqa: E731
        gib = 1 << 30
        print(f"GPT-2-small shape, {a.layers} layers, {'SGD training' if a.training else 'inference'}:"
              f" weights {weights / gib:.3f} GiB, PEF {os.path.getsize(pef) / gib:.3f} GiB;"
              f" median of {a.repeats}")
        print(f"  compile: {med([c[0] for c in comp]):.2f} s, peak {med([c[1] for c in comp]) / gib:.2f}"
              f" GiB ({med([c[1] for c in comp]) / weights:.2f}x the weights)")
        print(f"  run: before the first step {med([r[0] for r in runs]):.3f} s (load"
              f" {med([r[4] for r in runs]):.3f} s), step {med([r[1] for r in runs]):.3f} s,"
              f" process {med([r[2] for r in runs]):.2f} s, peak {med([r[3] for r in runs]) / gib:.2f}"
              f" GiB ({med([r[3] for r in runs]) / weights:.2f}x the weights)")


if __name__ == "__main__":
    main()
