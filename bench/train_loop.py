#!/usr/bin/env python3
"""Training throughput over a dataset under mpirun: the GPT bench shape (vocab 4096, d 256,
8 heads, 4 layers, sequence 128; scripts/gen_gpt.py, cross-entropy, Adam) with 8 samples per
replica. One PEF, compiled with --data-parallel -ws 1, runs as R replicas chosen at run time
(`mpirun -np R shardc run --data ... --steps S --metrics`, global batch 8 R). Prints the
median samples/s of the steps after the first (from the metrics file) per repeat, the median
over --repeats, and the ratio to one replica. On a machine with fewer cores than ranks the
ranks share the cores.

  bench/train_loop.py [--build build] [--repeats 3] [--steps 6] [--replicas 1,2,4]
"""
import argparse
import json
import os
import statistics
import sys
import subprocess
import tempfile

import numpy as np

from benchutil import ROOT, add_common_args, mpirun_prefix

SHAPE = dict(vocab=4096, dim=256, heads=8, seq=128, layers=4)
PER_REPLICA = 8


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.set_defaults(repeats=3)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--replicas", default="1,2,4")
    a = ap.parse_args()
    shardc = os.path.join(a.build, "bin", "shardc")
    mpi = mpirun_prefix()
    print(f"GPT {SHAPE}, {PER_REPLICA} samples per replica, {a.steps} steps per run, "
          f"median of {a.repeats} runs; {os.cpu_count()} cores")
    base = None
    with tempfile.TemporaryDirectory() as out:
        model = os.path.join(out, "gpt")
        gen = [os.path.join(ROOT, "scripts", "gen_gpt.py"), model, "--batch", str(PER_REPLICA)]
        for k, v in SHAPE.items():
            gen += [f"--{k}", str(v)]
        subprocess.run([sys.executable] + gen, check=True, stdout=subprocess.DEVNULL)
        pef = os.path.join(out, "p", "p.pef")
        subprocess.run([shardc, "compile", os.path.join(model, "gpt.ir"), "--output-folder", out,
                        "--pef-name", "p", "--loss", "cross-entropy", "--optimizer", "adam",
                        "--data-parallel", "-ws", "1"], check=True, stdout=subprocess.DEVNULL)
        for r in [int(x) for x in a.replicas.split(",")]:
            batch = PER_REPLICA * r
            rng = np.random.default_rng(0)
            n = batch * a.steps
            for name in ("idx", "labels"):
                np.save(os.path.join(out, f"{name}{r}.npy"),
                        rng.integers(0, SHAPE["vocab"], (n, SHAPE["seq"])).astype(np.int64))
            rates = []
            for k in range(a.repeats):
                metrics = os.path.join(out, f"m{r}-{k}.jsonl")
                cmd = [shardc, "run", "--pef", pef,
                       "--data", f"ids={out}/idx{r}.npy", "--data", f"labels={out}/labels{r}.npy",
                       "--steps", str(a.steps), "--metrics", metrics, "--output-dir",
                       os.path.join(out, "o")]
                if r > 1:
                    if not mpi:
                        raise SystemExit("mpirun is needed for more than one replica")
                    cmd = mpi + ["-np", str(r)] + cmd
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                steps = [json.loads(line) for line in open(metrics)][1:]
                rates.append(statistics.median(s["samples_per_s"] for s in steps))
            rate = statistics.median(rates)
            base = base or rate
            print(f"{r} replica(s), global batch {batch}: {rate:8.1f} samples/s "
                  f"(runs: {', '.join(f'{x:.1f}' for x in rates)}), {rate / base:.2f}x one replica")


if __name__ == "__main__":
    main()
