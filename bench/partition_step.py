#!/usr/bin/env python3
"""Step time of the GPT fixture's Adam training step (test/import/Inputs/gpt_loss) split over
devices, next to the one-device step, in the same run: data parallel -ws 2 and -ws 4, Megatron
on 2 chips and a 2x2 mesh, each with devices as threads in one process and as MPI ranks; the
data-parallel steps also with one all-reduce per gradient (--grad-bucket-mib 0) instead of
the bucketed reduction.
Medians of --repeats; prints each step time and its ratio to one device.

A step's time is (time of `run --steps S+1`) - (time of `run --steps 1`), divided by S, so
process start (and MPI start-up), loading and writing outputs cancel out.

  bench/partition_step.py [--build build] [--repeats 3] [--steps 10] [--batch 8]
"""
import os
import subprocess
import tempfile

from benchutil import (GPT_LOSS, gpt_batch_inputs, median_time, mpirun_prefix, parse_gpt_step_args,
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


def main():
    a = parse_gpt_step_args(__doc__)
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
                run = lambda steps: subprocess.run(
                    prefix + [shardc, "run", "--pef", os.path.join(out, pef, pef + ".pef"),
                              "--steps", str(steps), "--output-dir", out] + inputs,
                    check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                t1 = median_time(lambda: run(1), a.repeats)
                tn = median_time(lambda: run(a.steps + 1), a.repeats)
                step = (tn - t1) / a.steps
                base = base or step
                rows.append((name, how if devices > 1 else "-", step, step / base))
    print(f"GPT fixture (2 layers, d 32, 4 heads, seq 8), batch {a.batch}, Adam; "
          f"{os.cpu_count()} cores")
    print(f"{'strategy':28} {'devices as':10} {'step ms':>9} {'vs 1 device':>12}")
    for name, how, step, ratio in rows:
        print(f"{name:28} {how:10} {step * 1e3:9.2f} {ratio:12.2f}")


if __name__ == "__main__":
    main()
