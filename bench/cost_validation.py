#!/usr/bin/env python3
"""How far to trust the cost model: the GPT fixture's Adam training step compiled under
several strategies on 2 and 4 devices, each run with devices as threads and as MPI ranks,
predicted step time and peak memory (from the PEF's cost estimate) against measured ones
(`shardc run --stats`), in the same run. Prints each case, the Spearman rank correlation and
the mean relative error of step time, and the relative error of peak memory.

The targets are measured here first: `shardc calibrate` (in-process collectives) for the
thread runs, `mpirun -np 4 shardc calibrate --mpi` (MPI collectives, as many ranks as the
largest case) for the MPI runs; their summaries are printed.

The model predicts a step of a run that has settled: each run's median is over 50 steps (a
step of this fixture takes under a millisecond, and over 10 steps the median was ~10% above
the settled one, the first steps filling caches and pools).

  bench/cost_validation.py [--build build] [--steps 50] [--batch 8] [--repeats 3]
"""
import json
import os
import subprocess
import tempfile

import numpy as np

from benchutil import GPT_LOSS, gpt_batch_inputs, mpirun_prefix, parse_gpt_step_args, replica_batch

STRATEGIES = [  # name, compile flags, devices
    ("1 device", [], 1),
    ("dp2", ["--data-parallel", "-ws", "2"], 2),
    ("tp2", ["--tensor-parallel", "weight", "--n-chips", "2"], 2),
    ("zero2", ["--data-parallel", "-ws", "2", "--shard-optimizer-state"], 2),
    ("dp4", ["--data-parallel", "-ws", "4"], 4),
    ("tp4", ["--tensor-parallel", "weight", "--n-chips", "4"], 4),
    ("dp2 x tp2", ["--data-parallel", "-ws", "2", "--tensor-parallel", "weight", "--n-chips", "2"], 4),
    ("zero4", ["--data-parallel", "-ws", "4", "--shard-optimizer-state"], 4),
    ("dp2 x tp2 + zero", ["--data-parallel", "-ws", "2", "--tensor-parallel", "weight", "--n-chips",
                          "2", "--shard-optimizer-state"], 4),
]


def spearman(a, b):
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    return float(np.corrcoef(ra, rb)[0, 1])


def stats(out):
    step = peak = None
    for line in out.splitlines():
        if line.startswith("steps:"):
            step = float(line.split("median step")[1].split()[0])
        if line.startswith("peak bytes held per device:"):
            peak = int(line.split(":")[1])
    return step, peak


def main():
    a = parse_gpt_step_args(__doc__, steps=50)
    shardc = os.path.join(a.build, "bin", "shardc")
    mpi = mpirun_prefix()
    d = GPT_LOSS
    rows = []
    with tempfile.TemporaryDirectory() as out:
        targets = {"threads": os.path.join(out, "threads.yaml")}
        calibrated = subprocess.run([shardc, "calibrate", "--output", targets["threads"]],
                                    check=True, capture_output=True, text=True).stdout
        if mpi:
            targets["mpirun"] = os.path.join(out, "mpi.yaml")
            # As many ranks as the largest case runs: with more ranks than cores, calibrate
            # also measures what a collective waits for ranks that take turns on a core.
            ranks = str(max(devices for _, _, devices in STRATEGIES))
            calibrated += subprocess.run(mpi + ["-np", ranks, shardc, "calibrate", "--mpi",
                                                "--output", targets["mpirun"]],
                                         check=True, capture_output=True, text=True).stdout
        inputs = gpt_batch_inputs(out, a.batch)
        for name, flags, devices in STRATEGIES:
            for how, target in targets.items():
                if devices == 1 and how != "threads":
                    continue
                pef = "c%d" % len(rows)
                subprocess.run([shardc, "compile", os.path.join(d, "model.onnx"), "-b",
                                str(replica_batch(a.batch, flags)),
                                "--optimizer", "adam", "--arch-file", target, "--output-folder", out,
                                "--pef-name", pef] + flags, check=True, stdout=subprocess.DEVNULL)
                path = os.path.join(out, pef, pef + ".pef")
                cost = json.loads(subprocess.run([shardc, "inspect", "--json", path], check=True,
                                                 capture_output=True, text=True).stdout)["cost"]
                prefix = mpi + ["-np", str(devices)] if how == "mpirun" else []
                measured = []
                for _ in range(a.repeats):
                    r = subprocess.run(prefix + [shardc, "run", "--pef", path, "--steps",
                                                 str(a.steps), "--stats", "--output-dir", out] +
                                       inputs, check=True, capture_output=True, text=True)
                    measured.append(stats(r.stdout))
                step = float(np.median([m[0] for m in measured]))
                peak = max(m[1] for m in measured)
                rows.append((name, how if devices > 1 else "-", cost["step_seconds"], step,
                             cost["memory"]["peak_bytes"], peak))
    print("".join(l + "\n" for l in calibrated.splitlines() if not l.startswith("wrote ")), end="")
    print(f"GPT fixture, Adam, batch {a.batch}, median step of {a.steps} steps, {a.repeats} runs, "
          f"{os.cpu_count()} cores")
    print(f"{'strategy':18} {'devices as':10} {'pred ms':>8} {'meas ms':>8} {'rel err':>8} "
          f"{'pred peak B':>12} {'meas peak B':>12} {'mem err':>8}")
    for name, how, ps, ms, pm, mm in rows:
        print(f"{name:18} {how:10} {ps * 1e3:8.2f} {ms * 1e3:8.2f} {(ps - ms) / ms:8.1%} "
              f"{pm:12d} {mm:12d} {(pm - mm) / mm:8.1%}")
    pred = [r[2] for r in rows]
    meas = [r[3] for r in rows]
    mre = float(np.mean([abs(p - m) / m for p, m in zip(pred, meas)]))
    mem = max(abs(r[4] - r[5]) / r[5] for r in rows)
    print(f"step time: Spearman rank correlation {spearman(pred, meas):.3f}, "
          f"mean relative error {mre:.1%}; peak memory: largest relative error {mem:.1%}")


if __name__ == "__main__":
    main()
