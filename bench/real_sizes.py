#!/usr/bin/env python3
"""shardc against ONNX Runtime on real-sized models, forward, in one run: GPT-2-small's shape
(vocabulary 50257, d 768, 12 heads, 12 layers; batch 1, sequence 128), torchvision's ResNet-50
(batch 1, 224x224) and the GPT of bench/compiled_vs_torch.py (vocabulary 4096, d 256, 4
layers; batch 8, sequence 128), random weights, exported by PyTorch at opset 17.

Per model: the GEMM floor (the forward's FLOPs, from shardc's cost model, over the best 2048^3
sgemm rate PyTorch reaches here with 1 or 2 threads); ONNX Runtime (onnxruntime-node, CPU
provider, graph optimization "all", the faster of 1 and 2 intra-op threads; "not installed"
without it); shardc as users run it (each large GEMM on the library timed faster for its shape,
with a cache folder of its own, filled by a first run), and with SHARDC_GEMM=openblas and
=onednn; each the median step of --steps, start-up left out. Then shardc's compile (time,
peak memory) and start-up (the time `run` takes before its first step, peak memory of a
one-step run) against the weights' bytes. With --busy, the forward steps again beside one busy
process (`yes > /dev/null`, started and stopped by the script).

  bench/real_sizes.py [--build build] [--steps 10] [--cases gpt2-small,resnet50,gpt-small]
                      [--ort DIR] [--busy]   (DIR/node_modules/onnxruntime-node)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchutil import add_common_args
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


def columns(args, pef, model, inputs, cache):
    """{column: seconds per forward} for the machine as it is now."""
    row = {}
    ort, args.ort_version = bm.ort_step(args, model, inputs)
    row["ONNX Runtime"] = ort
    row["shardc"] = bm.shardc_step(args, pef, inputs, {"XDG_CACHE_HOME": cache})
    row["openblas"] = bm.shardc_step(args, pef, inputs, {"SHARDC_GEMM": "openblas"})
    row["onednn"] = bm.shardc_step(args, pef, inputs, {"SHARDC_GEMM": "onednn"})
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--cases", default="gpt2-small,resnet50,gpt-small")
    ap.add_argument("--ort", default=os.getcwd())
    ap.add_argument("--busy", action="store_true")
    args = ap.parse_args()
    args.ort_version = "not installed"
    shardc = os.path.join(args.build, "bin", "shardc")
    cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read())
    rate = sgemm_rate()
    print(f"CPU: {cpu.group(1) if cpu else '?'}, {os.cpu_count()} cores; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; "
          f"best sgemm {rate / 1e9:.0f} GFLOP/s (PyTorch, 2048^3)")
    gib = 1 << 30
    table, starts = [], []
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        for case in args.cases.split(","):
            model, inputs = export(case, tmp)
            floor = gflop(shardc, model) * 1e9 / rate
            pef = os.path.join(tmp, case, case + ".pef")
            t0 = time.perf_counter()
            _, comp_rss = cvt.max_rss_run([shardc, "compile", model, "--inference", "--pef-name",
                                           case, "--output-folder", tmp])
            comp_s = time.perf_counter() - t0
            out, run_rss = cvt.max_rss_run(
                [shardc, "run", "--pef", pef, "--steps", "1", "--stats", "--output-dir",
                 os.path.join(tmp, "start")] + inputs, env=dict(os.environ, XDG_CACHE_HOME=cache))
            stages = dict(re.findall(r" ([a-z-]+) ([0-9.]+)",
                                     re.search(r"seconds by stage:(.*)", out).group(1)))
            before = sum(float(stages[s]) for s in ("load", "state", "arguments", "start"))
            weights = os.path.getsize(pef)
            idle = columns(args, pef, model, inputs, cache)
            busy = None
            if args.busy:
                yes = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
                try:
                    busy = columns(args, pef, model, inputs, cache)
                finally:
                    yes.kill()
                    yes.wait()
            table.append((case, floor, idle, busy))
            starts.append((case, weights, comp_s, comp_rss, before, run_rss))
    print(f"ONNX Runtime: {args.ort_version}. Median forward step of {args.steps}, ms; "
          "shardc = each large GEMM on the library timed faster for its shape")
    cols = ["ONNX Runtime", "shardc", "openblas", "onednn"]
    print(f"{'case':12} {'floor':>7} " + " ".join(f"{c:>13}" for c in cols) + "  shardc/ORT")
    for case, floor, idle, busy in table:
        for label, row in (("idle", idle), ("busy", busy)):
            if row is None:
                continue
            cells = " ".join(f"{'not installed':>13}" if row[c] is None else f"{row[c] * 1e3:13.1f}"
                             for c in cols)
            ratio = "" if row["ONNX Runtime"] is None else f"{row['shardc'] / row['ONNX Runtime']:9.2f}x"
            name = case if label == "idle" else f"  {label}"
            print(f"{name:12} {floor * 1e3 if label == 'idle' else 0:7.1f} {cells}  {ratio}")
    print("start-up and compile (the PEF's bytes stand for the weights):")
    for case, weights, comp_s, comp_rss, before, run_rss in starts:
        print(f"  {case:12} PEF {weights / gib:.3f} GiB; compile {comp_s:.2f} s, peak "
              f"{comp_rss / gib:.2f} GiB ({comp_rss / weights:.2f}x); run: {before:.3f} s before "
              f"the first step, peak {run_rss / gib:.2f} GiB ({run_rss / weights:.2f}x)")


if __name__ == "__main__":
    sys.exit(main())
