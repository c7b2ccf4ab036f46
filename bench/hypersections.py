#!/usr/bin/env python3
"""Hypersections and compile time: GPTs of 12 and 96 layers (text IR from scripts/gen_gpt.py,
d 64, 4 heads, vocab 256, sequence 32, batch 4) compiled for inference and for training (SGD),
four ways: flat (no flag), hypersections (--enable-hypersection on the flat model: repeated
runs are found in the compiled program), functions (--enable-hypersection on the model
written with its layer as a function, gen_gpt.py --layer-function: the calls are kept from
the start) and scan (--enable-hypersection on the model written as a scan of its layer over
stacked weights, gen_gpt.py --scan: one body, no per-layer arguments). Per compile: the compile time without the weights (the compile log's figure:
wall time less making the text IR's initial values, copying them into the PEF and writing
it), the time writing the weights and the PEF, the PEF's program part (its bytes less the
weight data), the ops outside bodies and the bodies' instances; then the 96/12 ratios of
compile time and program part. Times are medians of --repeats compiles; the compiles
interleave. With --run-steps S, each PEF also runs S steps (2 threads, one device) and the
table gives the median step time `run --stats` measures (median of the repeats).

  bench/hypersections.py [--build build] [--repeats 5] [--layers 12,96] [--run-steps 0]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from benchutil import ROOT, add_common_args

MODES = {"inference": ["--inference"], "training": ["--loss", "cross-entropy", "--labels",
                                                     "targets"]}
# variant -> (gen_gpt.py's form of the model, flags)
VARIANTS = {"flat": ("flat", []), "hypersections": ("flat", ["--enable-hypersection"]),
            "functions": ("layer-function", ["--enable-hypersection"]),
            "scan": ("scan", ["--enable-hypersection"])}


def compile_once(shardc, model, out, flags):
    log = subprocess.run([shardc, "compile", model, "--output-folder", out, "--pef-name", "b",
                          "--verbose"] + flags, check=True, capture_output=True,
                         text=True).stderr
    m = re.search(r"compiled in ([\d.]+) ms without the weights; PEF of \d+ bytes: program "
                  r"part (\d+), weight data (\d+), written in ([\d.]+) ms", log)
    if not m:
        sys.exit("bench/hypersections.py: the compile log has no 'compiled in' line:\n" + log)
    ops = re.search(r"program with hypersections: (\d+) ops", log)
    plan = re.search(r"executable plan: \d+ kernels for (\d+) ops", log)
    instances = sum(int(n) for n in re.findall(r"\((?:[\w-]+), \d+ ops, (\d+) instances\)", log))
    return {"compile_ms": float(m.group(1)), "program": int(m.group(2)),
            "weights": int(m.group(3)), "write_ms": float(m.group(4)),
            "ops": int((ops or plan).group(1)), "instances": instances}


def run_steps(shardc, pef, model_dir, mode, steps):
    """Median step seconds of `steps` steps of the PEF (run --stats)."""
    inputs = ["--input", "ids=" + os.path.join(model_dir, "ids.npy")]
    if mode == "training":
        inputs += ["--input", "targets=" + os.path.join(model_dir, "targets.npy")]
    out = subprocess.run([shardc, "run", "--pef", pef, "--steps", str(steps), "--stats",
                          "--output-dir", os.path.join(os.path.dirname(pef), "o")] + inputs,
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median step ([\d.e-]+) s", out).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--layers", default="12,96")
    ap.add_argument("--run-steps", type=int, default=0)
    a = ap.parse_args()
    shardc = os.path.join(a.build, "bin", "shardc")
    layers = [int(x) for x in a.layers.split(",")]
    with tempfile.TemporaryDirectory() as out:
        models = {}
        for n in layers:
            for form in ("flat", "layer-function", "scan"):
                d = os.path.join(out, f"gpt{n}-{form}")
                subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_gpt.py"),
                                "--layers", str(n), "--vocab", "256", "--dim", "64", "--heads",
                                "4", "--seq", "32", "--batch", "4", d] +
                               ([] if form == "flat" else ["--" + form]), check=True,
                               stdout=subprocess.DEVNULL)
                models[n, form] = os.path.join(d, "gpt.ir")
                ids = np.load(os.path.join(d, "ids.npy"))
                np.save(os.path.join(d, "targets.npy"), (ids * 7 + 3) % 256)
        runs = {}
        for _ in range(a.repeats):
            for mode, mflags in MODES.items():
                for variant, (form, vflags) in VARIANTS.items():
                    for n in layers:
                        r = compile_once(shardc, models[n, form], out, mflags + vflags)
                        r["step_ms"] = 1e3 * run_steps(
                            shardc, os.path.join(out, "b", "b.pef"),
                            os.path.dirname(models[n, form]), mode,
                            a.run_steps) if a.run_steps else float("nan")
                        runs.setdefault((mode, variant, n), []).append(r)
    print(f"{'mode':<10}{'variant':<15}{'layers':>7}{'compile ms':>11}{'write ms':>9}"
          f"{'program KiB':>12}{'weights KiB':>12}{'ops':>7}{'instances':>10}{'step ms':>9}")
    med = {}
    for (mode, variant, n), rs in runs.items():
        m = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        med[mode, variant, n] = m
        print(f"{mode:<10}{variant:<15}{n:>7}{m['compile_ms']:>11.1f}{m['write_ms']:>9.1f}"
              f"{m['program'] / 1024:>12.1f}{m['weights'] / 1024:>12.1f}{m['ops']:>7.0f}"
              f"{m['instances']:>10.0f}{m['step_ms']:>9.2f}")
    lo, hi = layers[0], layers[-1]
    print(f"\n{hi}/{lo} layers: ratio of compile time without the weights, of program part")
    for mode in MODES:
        for variant in VARIANTS:
            a_, b_ = med[mode, variant, lo], med[mode, variant, hi]
            print(f"  {mode:<10}{variant:<15}compile {b_['compile_ms'] / a_['compile_ms']:.2f}x"
                  f"  program part {b_['program'] / a_['program']:.2f}x")


if __name__ == "__main__":
    main()
