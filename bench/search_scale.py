#!/usr/bin/env python3
"""How fast --auto-partition plans big models, and how good its plans are: GPT-style Adam
training steps of a 1.3B shape (24 layers, d=2048) and a Llama-3-8B shape (32 layers, d=4096,
FFN 14336, vocab 128256) on an 8x8 mesh of the h100 target, planned from shapes alone
(scripts/gen_gpt.py's layout as text IR, --estimate-only). Each compile runs pinned to one
core; the table gives every expert baseline's step time, the tree search's own plan, the
plan chosen, and where the time went.

  bench/search_scale.py [--build build] [--budget 9s] [--seeds 0] [--modes joint,per-axis]
                        [--models gpt-1.3b,llama-3-8b]
"""
import argparse
import os
import re
import subprocess
import tempfile
import time
import types

from benchutil import add_common_args

import gen_gpt

# name: layers, dim, heads, ffn (0: 4 dim), SwiGLU MLP, vocab, seq, global batch. The Llama
# shape keeps GPT's layer norms, biases, full multi-head attention and tied embeddings.
MODELS = {
    "gpt-1.3b": (24, 2048, 16, 0, False, 50304, 2048, 32),
    "llama-3-8b": (32, 4096, 32, 14336, True, 128256, 2048, 8),
}


def write_model(path, layers, dim, heads, ffn, swiglu, vocab, seq, batch):
    a = types.SimpleNamespace(layers=layers, dim=dim, heads=heads, ffn=ffn, swiglu=swiglu,
                              vocab=vocab, seq=seq, batch=batch)
    shapes = gen_gpt.weight_shapes(a)
    with open(path, "w") as fh:  # emit_ir reads only the weights' shapes
        fh.write(gen_gpt.emit_ir(a, {n: types.SimpleNamespace(shape=s) for n, s in shapes.items()}))
    params = 0
    for s in shapes.values():
        n = 1
        for d in s:
            n *= d
        params += n
    return params


def plan(shardc, model, out, budget, seed, mode):
    cmd = ["taskset", "-c", "0", shardc, "compile", model, "--loss", "cross-entropy", "--labels",
           "y", "--optimizer", "adam", "--arch", "h100", "--estimate-only", "--auto-partition",
           "--mesh", "data=8,model=8", "--search-budget", budget, "--search-seed", str(seed), "--search-mode", mode,
           "--verbose", "--output-folder", out]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    return r.stderr, wall


def ms(line):
    m = re.search(r"([0-9.]+) ms, ([0-9.]+) MB per device( \(over capacity\))?", line)
    if not m:
        return "invalid"
    return f"{float(m.group(1)):.1f} ms, {float(m.group(2)) / 1e3:.1f} GB" + (
        " (over capacity)" if m.group(3) else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--budget", default="9s", help="--search-budget (episodes, or seconds: 9s)")
    ap.add_argument("--seeds", default="0", help="comma-separated search seeds")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--modes", default="joint", help="--search-mode values, comma-separated")
    a = ap.parse_args()
    shardc = os.path.join(a.build, "bin", "shardc")
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models.split(","):
            layers, dim, heads, ffn, swiglu, vocab, seq, batch = MODELS[name]
            model = os.path.join(tmp, name + ".ir")
            params = write_model(model, layers, dim, heads, ffn, swiglu, vocab, seq, batch)
            print(f"## {name}: {layers} layers, dim {dim}, {heads} heads, "
                  f"{'SwiGLU ' if swiglu else ''}FFN {ffn or 4 * dim}, "
                  f"vocab {vocab}, seq {seq}, global batch {batch}: {params / 1e9:.2f}B "
                  f"parameters, Adam; h100, mesh data=8,model=8; --search-budget {a.budget}\n")
            for mode, seed in [(m, s) for m in a.modes.split(",") for s in a.seeds.split(",")]:
                log, wall = plan(shardc, model, tmp, a.budget, int(seed), mode)
                lines = log.splitlines()
                print(f"--search-mode {mode}, seed {seed}: whole compile {wall:.2f} s wall on one "
                      "core")
                print("| plan | step, memory per device |\n|---|---|")
                for line in lines:
                    m = re.search(r"baseline (\S+):", line)
                    if m and "chose" not in line:
                        print(f"| baseline {m.group(1)} | {ms(line)} |")
                    if re.search(r"  search: \d+ episodes", line):
                        ep = re.search(r"search: (\d+) episodes, (\d+) plans", line)
                        print(f"| search's own plan ({ep.group(1)} episodes, {ep.group(2)} plans "
                              f"evaluated) | {ms(line) if 'best none' not in line else 'none'} |")
                for line in lines:
                    if "auto-partition chose" in line:
                        print(f"| **chosen: {line.split('chose ')[1].split(':')[0]}** | "
                              f"{ms(line)} |")
                for line in lines:
                    if re.search(r"^shardc:   time ", line) or "  decision " in line:
                        print("    " + line.replace("shardc:   ", ""))
                print()


if __name__ == "__main__":
    main()
