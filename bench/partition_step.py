#!/usr/bin/env python3
"""Step time of the GPT fixture's Adam training step (test/import/Inputs/gpt_loss) split over
devices, next to the one-device step, in the same run: data parallel -ws 2 and -ws 4, Megatron
on 2 chips and a 2x2 mesh, each with devices as threads in one process and as MPI ranks; the
data-parallel steps also with one all-reduce per gradient (--grad-bucket-mib 0) instead of
the bucketed reduction.
Medians of --repeats; prints each step time and its ratio to one device.

A step's time is the median step `run --steps S --stats` measures inside the process (rank
0's under mpirun), so process and MPI start-up, loading and writing outputs stay out of it.

  bench/partition_step.py [--build build] [--repeats 3] [--steps 200] [--batch 8]
"""
import os
import re
import statistics
import subprocess
import tempfile

from benchutil import (GPT_LOSS, gpt_batch_inputs, mpirun_prefix, parse_gpt_step_args,
                       replica_batch)

CASES = [  # name, compile flags, devices
    ("1 device", [], 1),
    ("-ws 2", ["--data-parallel", "-ws", "2"], 2),
    ("-ws 2, no gradient buckets", ["--data-parallel", "-ws", "2", "--grad-bucket-mib", "0"], 2),
    ("-ws 4", ["--data-parallel", "-ws", "4"], 4),
    ("-ws 4, no gradient buckets", ["--data-parallel", "-ws", "4", "--grad-bucket-mib", "0"], 4),
    ("tensor-parallel weight 2", ["--tensor-parallel", "weight", "--n-chips", "2"], 2),
    ("2x2 mesh", ["--data-parallel", "-ws", "2", "--tensor-parallel", "weight", "--n-chips", "2"], 4),
]


def median_step(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median step ([\d.e-]+) s", out).group(1))


def main():
    a = parse_gpt_step_args(__doc__, steps=200)
    shardc = os.path.join(a.build, "bin", "shardc")
    mpi = mpirun_prefix()
    d = GPT_LOSS
    with tempfile.TemporaryDirectory() as out:
        inputs = gpt_batch_inputs(out, a.batch)
        rows = []
        base = None
        for name, flags, devices in CASES:
            pef = "c%d" % len(rows)
            subprocess.run([shardc, "compile", os.path.join(d, "model.onnx"), "-b",
                            str(replica_batch(a.batch, flags)),
                            "--optimizer", "adam", "--output-folder", out, "--pef-name", pef] + flags,
                           check=True, stdout=subprocess.DEVNULL)
            launchers = [("threads", [])]
            if devices > 1 and mpi:
                launchers.append(("mpirun", mpi + ["-np", str(devices)]))
            for how, prefix in launchers:
                cmd = prefix + [shardc, "run", "--pef", os.path.join(out, pef, pef + ".pef"),
                                "--steps", str(a.steps), "--stats", "--output-dir", out] + inputs
                step = statistics.median(median_step(cmd) for _ in range(a.repeats))
                base = base or step
                rows.append((name, how if devices > 1 else "-", step, step / base))
    print(f"GPT fixture (2 layers, d 32, 4 heads, seq 8), batch {a.batch}, Adam; "
          f"{os.cpu_count()} cores")
    print(f"{'strategy':28} {'devices as':10} {'step ms':>9} {'vs 1 device':>12}")
    for name, how, step, ratio in rows:
        print(f"{name:28} {how:10} {step * 1e3:9.2f} {ratio:12.2f}")


if __name__ == "__main__":
    main()
