#!/usr/bin/env python3
"""shardc against ONNX Runtime on real-sized models, forward, in one run: GPT-2-small's shape
(vocabulary 50257, d 768, 12 heads, 12 layers; batch 1, sequence 128), torchvision's ResNet-50
(batch 1, 224x224) and the GPT of bench/compiled_vs_torch.py (vocabulary 4096, d 256, 4
layers; batch 8, sequence 128), random weights, exported by PyTorch at opset 17.

Per model: the GEMM floor (the forward's FLOPs, from shardc's cost model, over the best 2048^3
sgemm rate PyTorch reaches here with 1 or 2 threads); ONNX Runtime (onnxruntime-node, CPU
provider, graph optimization "all", the faster of 1 and 2 intra-op threads; "not installed"
without it); shardc as users run it (each large GEMM on the library timed faster for its shape,
with a cache folder of its own, filled by a first run), with SHARDC_GEMM=openblas and
=onednn, and compiled with --precision bf16 (bf16 matmuls and convolutions on AVX512-BF16 or
AMX, else in f32; its error against shardc's f32 output is printed below the table, with how
its bf16 steps ran); each the median
step of --steps (start-up left out), the columns run in turn
--repeats times and the medians shown. Then shardc's compile (time, peak memory) and start-up
(the time `run` takes before its first step, on the machine's first run and after; peak memory
of a one-step run) against the PEF's bytes. With --busy, the forward steps again beside one
busy process (`yes > /dev/null`, started and stopped by the script). PyTorch runs only in child
processes, so that the peak memory of shardc's processes is their own.

  bench/real_sizes.py [--build build] [--repeats 3] [--steps 10] [--busy] [--ort DIR]
                      [--cases gpt2-small,resnet50,gpt-small]   (DIR/node_modules/onnxruntime-node)
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchutil import (add_common_args, beside_busy_process, max_rss_run,
                       seconds_before_first_step)
import busy_machine as bm
import compiled_vs_torch as cvt

GPT2_SMALL = dict(vocab=50257, d=768, heads=12, block=128, layers=12, batch=1)


def export_gpt(folder, name, shape, batch):
    import warnings

    import torch
    import gen_onnx_fixtures as fx

    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    model = fx.GPT(shape["vocab"], shape["d"], shape["heads"], shape["block"],
                   shape["layers"]).eval()
    idx = torch.randint(0, shape["vocab"], (batch, shape["block"]),
                        generator=torch.Generator().manual_seed(1))
    path = os.path.join(folder, name + ".onnx")
    torch.onnx.export(model, (idx,), path, input_names=["idx"], output_names=["out"],
                      opset_version=17, do_constant_folding=False)
    f = os.path.join(folder, name + "-idx.npy")
    np.save(f, idx.numpy())
    return path, ["--input", f"idx={f}"]


def export(case, folder):
    """The model's ONNX path and its `shardc run --input` flags."""
    if case == "gpt2-small":
        return export_gpt(folder, case, GPT2_SMALL, GPT2_SMALL["batch"])
    if case == "resnet50":
        return bm.export_resnet50(folder)
    return cvt.export("gpt-forward", folder)


def sgemm_rate():
    """PyTorch's best 2048^3 sgemm rate here, 1 or 2 threads, in child processes (their OpenMP
    threads must not spin beside the timed runs)."""
    here = os.path.dirname(os.path.abspath(__file__))
    best = 0.0
    for t in (1, 2):
        out = subprocess.run([sys.executable, "-c", "import compiled_vs_torch as c; "
                              f"print(c.torch_sgemm_rate({t}))"], check=True, capture_output=True,
                             text=True, cwd=here).stdout
        best = max(best, float(out.split()[-1]))
    return best


def gflop(shardc, model):
    out = subprocess.run([shardc, "compile", model, "--inference", "--estimate-only"],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"([0-9.e+-]+) GFLOP per device per step", out).group(1))


COLUMNS = ("ONNX Runtime", "shardc", "openblas", "onednn", "bf16")


def bf16_pef(pef):
    """Where main() compiles the --precision bf16 PEF of the f32 PEF `pef`."""
    name = os.path.basename(pef)[:-len(".pef")] + "-bf16"
    return os.path.join(os.path.dirname(os.path.dirname(pef)), name, name + ".pef")


def columns(args, pef, model, inputs, cache):
    """{column: seconds per forward} for the machine as it is now: the median over --repeats
    rounds, each round running every column once."""
    runs = {c: [] for c in COLUMNS}
    bf16 = bf16_pef(pef)
    for _ in range(args.repeats):
        ort, args.ort_version = bm.ort_step(args, model, inputs)
        runs["ONNX Runtime"].append(ort)
        runs["shardc"].append(bm.shardc_step(args, pef, inputs, {"XDG_CACHE_HOME": cache}))
        runs["openblas"].append(bm.shardc_step(args, pef, inputs, {"SHARDC_GEMM": "openblas"}))
        runs["onednn"].append(bm.shardc_step(args, pef, inputs, {"SHARDC_GEMM": "onednn"}))
        runs["bf16"].append(bm.shardc_step(args, bf16, inputs, {"XDG_CACHE_HOME": cache}))
    return {c: None if None in v else statistics.median(v) for c, v in runs.items()}


def bf16_error(shardc, pef, inputs, out):
    """max |bf16 - f32| / max |f32| over the forward's output, and how the bf16 steps ran."""
    got = {}
    for p in (pef, bf16_pef(pef)):
        d = os.path.join(out, os.path.basename(p))
        text = subprocess.run([shardc, "run", "--pef", p, "--steps", "1", "--stats",
                               "--output-dir", d] + inputs, check=True, capture_output=True,
                              text=True).stdout
        got[p] = np.load(os.path.join(d, sorted(f for f in os.listdir(d)
                                                if f.endswith(".npy"))[0]))
    a, b = got.values()
    ways = re.findall(r"^  (\d+ \w+: .*)$", text.split("bf16 steps, by")[-1], re.M)
    return float(np.abs(b - a).max() / np.abs(a).max()), "; ".join(ways)


def startup(shardc, pef, inputs, cache, out):
    """Seconds `run` takes before its first step (its load, state, arguments and start
    stages) and its peak memory, for a one-step run."""
    text, rss = max_rss_run([shardc, "run", "--pef", pef, "--steps", "1", "--stats",
                             "--output-dir", out] + inputs,
                            env=dict(os.environ, XDG_CACHE_HOME=cache))
    return seconds_before_first_step(text)[0], rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.set_defaults(repeats=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--cases", default="gpt2-small,resnet50,gpt-small")
    ap.add_argument("--ort", default=os.getcwd())
    ap.add_argument("--busy", action="store_true")
    ap.add_argument("--export", nargs=2, metavar=("CASE", "DIR"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.export:  # in a child: PyTorch's memory must not count in the parent's children
        print(json.dumps(export(*args.export)))
        return
    args.ort_version = "not installed"
    shardc = os.path.join(args.build, "bin", "shardc")
    cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read())
    rate = sgemm_rate()
    print(f"CPU: {cpu.group(1) if cpu else '?'}, {os.cpu_count()} cores; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; "
          f"best sgemm {rate / 1e9:.0f} GFLOP/s (PyTorch, 2048^3)")
    gib = 1 << 30
    table, starts, errors = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            cache = os.path.join(tmp, "cache-" + case)
            model, inputs = json.loads(subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--export", case, tmp], check=True,
                capture_output=True, text=True).stdout)
            floor = gflop(shardc, model) * 1e9 / rate
            pef = os.path.join(tmp, case, case + ".pef")
            t0 = time.perf_counter()
            _, comp_rss = max_rss_run([shardc, "compile", model, "--inference", "--pef-name",
                                       case, "--output-folder", tmp])
            comp_s = time.perf_counter() - t0
            subprocess.run([shardc, "compile", model, "--inference", "--precision", "bf16",
                            "--pef-name", case + "-bf16", "--output-folder", tmp], check=True,
                           stdout=subprocess.DEVNULL)
            errors.append((case, *bf16_error(shardc, pef, inputs, os.path.join(tmp, "err"))))
            first = startup(shardc, pef, inputs, cache, os.path.join(tmp, "start"))
            later = startup(shardc, pef, inputs, cache, os.path.join(tmp, "start"))
            idle = columns(args, pef, model, inputs, cache)
            busy = beside_busy_process(lambda: columns(args, pef, model, inputs, cache)) \
                if args.busy else None
            table.append((case, floor, idle, busy))
            starts.append((case, os.path.getsize(pef), comp_s, comp_rss, first, later))
    print(f"ONNX Runtime: {args.ort_version}. Forward step, ms: median over {args.repeats} rounds "
          f"of each column's median of {args.steps} steps; shardc: each large GEMM on the library "
          "timed faster for its shape")
    cols = list(COLUMNS)
    print(f"{'case':12} {'floor':>7} " + " ".join(f"{c:>13}" for c in cols) + "  shardc/ORT")
    for case, floor, idle, busy in table:
        for label, row in (("idle", idle), ("busy", busy)):
            if row is None:
                continue
            cells = " ".join(f"{'not installed':>13}" if row[c] is None else f"{row[c] * 1e3:13.1f}"
                             for c in cols)
            ratio = "" if row["ONNX Runtime"] is None else \
                f"{row['shardc'] / row['ONNX Runtime']:9.2f}x"
            name, fl = (case, f"{floor * 1e3:7.1f}") if label == "idle" else ("  busy", " " * 7)
            print(f"{name:12} {fl} {cells}  {ratio}")
    for case, err, ways in errors:
        print(f"  {case}: bf16 output against f32, max |difference| / max |f32| {err:.1e}; "
              f"bf16 steps {ways}")
    print("compile and start-up (the PEF's bytes stand for the weights; the first run on a "
          "machine times its GEMM shapes):")
    for case, size, comp_s, comp_rss, first, later in starts:
        print(f"  {case:12} PEF {size / gib:.3f} GiB; compile {comp_s:.2f} s, peak "
              f"{comp_rss / gib:.2f} GiB ({comp_rss / size:.2f}x); before the first step "
              f"{later[0]:.3f} s (first run {first[0]:.3f} s), run peak {later[1] / gib:.2f} GiB "
              f"({later[1] / size:.2f}x)")


if __name__ == "__main__":
    sys.exit(main())
