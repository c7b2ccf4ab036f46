#!/usr/bin/env python3
"""shardc's matmul kernel on OpenBLAS and on oneDNN (SHARDC_GEMM=openblas|onednn), side by
side on the GEMMs of the GPT benchmark (vocab 4096, d 256, 1024 tokens): each shape is one
program of one matmul step, run through `shardc run --stats` with both libraries in turn,
the kernel's median time over --repeats runs of --steps steps.

  bench/gemm_libraries.py [--build build] [--repeats 5] [--steps 20] [--threads 0]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

from benchutil import add_common_args

# name, M, N, K, A read transposed, B read transposed, epilogue (bias add)
SHAPES = [
    ("qkv x W^T + b", 1024, 768, 256, False, True, True),
    ("fc2 x W^T + b", 1024, 256, 1024, False, True, True),
    ("lm head x W^T", 1024, 4096, 256, False, True, False),
    ("dx = dy W (lm head)", 1024, 256, 4096, False, False, False),
    ("dx = dy W (fc1)", 1024, 256, 1024, False, False, False),
    ("dW = x^T dy (lm head)", 256, 4096, 1024, True, False, False),
    ("dW = x^T dy (fc2)", 1024, 256, 1024, True, False, False),
    ("dW = x^T dy (qkv)", 256, 768, 1024, True, False, False),
]


def program(m, n, k, ta, tb, bias):
    a = f"f32[{k},{m}]" if ta else f"f32[{m},{k}]"
    b = f"f32[{n},{k}]" if tb else f"f32[{k},{n}]"
    lines = []
    x, w = "%a", "%b"
    if ta:
        lines.append(f"  %at = transpose(%a) {{perm = [1, 0]}} : f32[{m},{k}]")
        x = "%at"
    if tb:
        lines.append(f"  %bt = transpose(%b) {{perm = [1, 0]}} : f32[{k},{n}]")
        w = "%bt"
    out = "%p"
    lines.append(f"  %p = matmul({x}, {w}) : f32[{m},{n}]")
    args = f"input %a: {a}, input %b: {b}"
    if bias:
        args += f", input %c: f32[{n}]"
        lines.append(f"  %cb = broadcast(%c) {{shape = [{m}, {n}]}} : f32[{m},{n}]")
        lines.append(f"  %y = add(%p, %cb) : f32[{m},{n}]")
        out = "%y"
    body = "\n".join(lines)
    return f"func @main({args}) -> (y: f32[{m},{n}]) {{\n{body}\n  return {out}\n}}\n"


def kernel_seconds(shardc, pef, inputs, steps, threads, library, out):
    env = dict(os.environ, SHARDC_GEMM=library)
    cmd = [shardc, "run", "--pef", pef, "--steps", str(steps), "--stats", "--output-dir", out]
    if threads:
        cmd += ["--threads", str(threads)]
    for name, path in inputs:
        cmd += ["--input", f"{name}={path}"]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return float(re.search(r"median step ([0-9.e-]+) s", text)[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0: all cores)")
    a = ap.parse_args()
    import numpy as np

    shardc = os.path.join(a.build, "bin", "shardc")
    rng = np.random.default_rng(0)
    print(f"one-matmul programs: median of {a.repeats} runs of each run's median step "
          f"({a.steps} steps), the libraries alternating; {os.cpu_count()} cores")
    print(f"{'GEMM':24} {'M x N x K':>18} | {'OpenBLAS ms':>11} {'GFLOP/s':>7} | "
          f"{'oneDNN ms':>9} {'GFLOP/s':>7} | oneDNN / OpenBLAS")
    with tempfile.TemporaryDirectory() as tmp:
        for name, m, n, k, ta, tb, bias in SHAPES:
            ir = os.path.join(tmp, "g.ir")
            with open(ir, "w") as f:
                f.write(program(m, n, k, ta, tb, bias))
            subprocess.run([shardc, "compile", ir, "--inference", "--output-folder", tmp,
                            "--pef-name", "g"], check=True, capture_output=True)
            inputs = []
            for arg, shape in (("a", (k, m) if ta else (m, k)), ("b", (n, k) if tb else (k, n)),
                               ("c", (n,))):
                if arg == "c" and not bias:
                    continue
                path = os.path.join(tmp, arg + ".npy")
                np.save(path, rng.standard_normal(shape).astype(np.float32))
                inputs.append((arg, path))
            pef = os.path.join(tmp, "g", "g.pef")
            times = {"openblas": [], "onednn": []}
            for _ in range(a.repeats):
                for lib in times:
                    times[lib].append(kernel_seconds(shardc, pef, inputs, a.steps, a.threads,
                                                     lib, os.path.join(tmp, "out")))
            ob, dn = (statistics.median(times[x]) for x in ("openblas", "onednn"))
            gf = 2.0 * m * n * k / 1e9
            print(f"{name:24} {f'{m}x{n}x{k}':>18} | {ob * 1e3:11.2f} {gf / ob:7.0f} | "
                  f"{dn * 1e3:9.2f} {gf / dn:7.0f} | {dn / ob:.2f}")


if __name__ == "__main__":
    main()
