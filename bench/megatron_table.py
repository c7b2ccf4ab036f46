#!/usr/bin/env python3
"""Megatron-LM's GPT table (Narayanan et al., SC'21, "Efficient Large-Scale Language Model
Training on GPU Clusters", Table 1) planned by shardc from shapes alone on the a100 target:
per row, the paper's measured TFLOP/s per GPU against shardc's prediction for the paper's
plan (--precision bf16 --recompute full, the paper's tensor-parallel degree, the rest data
parallel, the fewest micro-batches that fit 80 GB) and for the plan --auto-partition finds on
the same mesh (micro-batches and recomputation left to it), memory per GPU, compile times. The paper's plan is
priced three ways: on the paper's own kernels (-o1 with rules/megatron.yaml: every matrix
product its own kernel, the element-wise and row work between two fused), fused whole (-o3, as
shardc compiles for the target), and with every op its own kernel reading and writing HBM
(-o0).
Then the activations
one layer keeps for its backward pass against Korthikanti et al.'s formulas (MLSys'23).

TFLOP/s per GPU counts the paper's FLOPs per iteration, 96 B s l h^2 (1 + s/(6h) + V/(16 l h))
(the recomputed forward included), over the predicted iteration time and the GPUs.

  bench/megatron_table.py [--build build] [--rows 1.7B,3.6B,7.5B,18.4B] [--search-budget 10s]
                          [--no-search] [--no-layers]
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

SEQ, VOCAB = 2048, 51200
# name, heads, hidden, layers, tensor parallel, GPUs, global batch, measured TFLOP/s per GPU
ROWS = [("1.7B", 24, 2304, 24, 1, 32, 512, 137), ("3.6B", 32, 3072, 30, 2, 64, 512, 138),
        ("7.5B", 32, 4096, 36, 4, 128, 512, 142), ("18.4B", 48, 6144, 40, 8, 256, 1024, 135)]
MEGATRON_RULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "rules",
                              "megatron.yaml")
UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
         "us": 1e-6, "ms": 1e-3, "s": 1}


def paper_flops(batch, layers, hidden):
    h, l, s = hidden, layers, SEQ
    return 96 * batch * s * l * h * h * (1 + s / (6 * h) + VOCAB / (16 * l * h))


def write_model(path, layers, hidden, heads, batch):
    a = types.SimpleNamespace(layers=layers, dim=hidden, heads=heads, seq=SEQ, batch=batch,
                              vocab=VOCAB)
    shapes = {n: types.SimpleNamespace(shape=s) for n, s in gen_gpt.weight_shapes(a).items()}
    with open(path, "w") as fh:
        fh.write(gen_gpt.emit_ir(a, shapes))


def quantity(text, pattern):
    m = re.search(pattern + r" ([0-9.e+-]+) (\w+)", text)
    if not m:
        raise SystemExit(f"no '{pattern}' in the estimate:\n{text}")
    return float(m.group(1)) * UNITS[m.group(2)]


def estimate(shardc, model, flags):
    t0 = time.perf_counter()
    r = subprocess.run([shardc, "compile", model, "--loss", "cross-entropy", "--labels", "y",
                        "--optimizer", "adam", "--arch", "a100", "--estimate-only",
                        "--precision", "bf16", "--verbose"] + flags,
                       capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode:
        errors = [line for line in r.stderr.splitlines() if "error:" in line]
        return {"error": errors[-1][:200] if errors else r.stderr[-200:], "compile": seconds}
    text = r.stdout
    chose = re.findall(r"recompute (\w+)( \(auto\))?:", r.stderr)
    return {"step": quantity(text, r"step"), "memory": quantity(text, r"memory per device:"),
            "kept": quantity(text, r"kept for the backward pass:") if "kept for" in text else 0,
            "fits": "DOES NOT FIT" not in text, "compile": seconds,
            "recompute": chose[-1][0] if chose else "?", "text": text, "log": r.stderr}


def plan_flags(tp, dp):
    flags = ["--data-parallel", "-ws", str(dp)]
    if tp > 1:
        flags += ["--tensor-parallel", "weight", "--n-chips", str(tp)]
    return flags


def paper_plan(shardc, out, row):
    """The paper's plan with the fewest micro-batches that fit (largest micro-batch first)."""
    name, heads, hidden, layers, tp, gpus, batch, _ = row
    dp = gpus // tp
    per_replica = batch // dp
    micro = per_replica
    while micro >= 1:
        model = os.path.join(out, f"{name}-b{micro}.ir")
        write_model(model, layers, hidden, heads, dp * micro)
        m = per_replica // micro
        e = estimate(shardc, model, plan_flags(tp, dp) + ["--recompute", "full",
                                                          "--micro-batches", str(m)])
        if "error" in e:
            raise SystemExit(f"{name}: the paper's plan does not compile: {e['error']}")
        e.update(micro=micro, micro_batches=m, model=model)
        if e["fits"] or micro == 1:
            same = plan_flags(tp, dp) + ["--recompute", "full", "--micro-batches", str(m)]
            # The same plan as the paper's software runs it: its fused kernels between the
            # matrix products (rules/megatron.yaml), and every op its own kernel.
            e["megatron"] = estimate(shardc, model, same + ["-o1", "--optimization-rules",
                                                            MEGATRON_RULES])
            e["eager"] = estimate(shardc, model, same + ["-o0"])
            return e
        micro //= 2


def tflops_of(row, e):
    _, _, hidden, layers, _, gpus, batch, _ = row
    if "step" not in e:
        raise SystemExit(f"{row[0]}: {e['error']}")
    return paper_flops(batch, layers, hidden) / gpus / e["step"] / 1e12


def table(a, shardc, out):
    print(f"{'row':>6} {'paper':>7} {'kernels':>7} {'diff':>6} {'-o3':>7} {'diff':>6} {'-o0':>7} "
          f"{'diff':>6} {'memory':>9} {'micro':>9} {'compile':>8} | {'search':>7} {'memory':>9} "
          f"{'micro':>9} {'recompute':>9} {'compile':>8}")
    for row in ROWS:
        if row[0] not in a.rows:
            continue
        name, heads, hidden, layers, tp, gpus, batch, measured = row
        e = paper_plan(shardc, out, row)
        line = f"{name:>6} {measured:>7.0f}"
        for plan in (e["megatron"], e, e["eager"]):
            t = tflops_of(row, plan)
            line += f" {t:>7.1f} {100 * (t / measured - 1):>+5.0f}%"
        line += (f" {e['memory'] / 2**30:>6.1f}GiB{'' if e['fits'] else '!'} "
                 f"{e['micro_batches']:>3}x{e['micro']:<5} {e['compile']:>7.1f}s")
        if a.search:
            # The whole global batch, the micro-batches and recomputation left to the search.
            model = os.path.join(out, f"{name}-global.ir")
            write_model(model, layers, hidden, heads, batch)
            dp = gpus // tp
            s = estimate(shardc, model, ["--auto-partition", "--mesh", f"data={dp},model={tp}",
                                         "--search-budget", a.search_budget])
            if "error" in s:
                line += f" | none found ({s['compile']:.1f}s): {s['error']}"
            else:
                chosen = re.findall(r"micro-batches auto: (\d+) chosen", s["log"])
                m = int(chosen[-1]) if chosen else 1
                line += (f" | {tflops_of(row, s):>7.1f} {s['memory'] / 2**30:>6.1f}GiB"
                         f"{'' if s['fits'] else '!'} {m:>3}x{batch // dp // m:<5} "
                         f"{s['recompute']:>9} {s['compile']:>7.1f}s")
        print(line, flush=True)
    print("TFLOP/s per GPU. paper: measured; kernels: shardc's prediction for the paper's plan "
          "run on the paper's kernels (-o1, rules/megatron.yaml: each matrix product its own "
          "kernel, the work between two fused); -o3: the same plan fused whole, as shardc "
          "compiles for the target; -o0: every op its own kernel; search: --auto-partition's "
          "plan at -o3 (the global batch given, micro-batches and recomputation its choice). memory: predicted peak per GPU (! = over 80 GB); micro: micro-batches x "
          "samples; compile: the -o3 plan's")


def layer_memory(a, shardc, out):
    """Kept activations of one layer: a 3-layer model's less a 2-layer model's, per mode."""
    print("\nactivations one layer keeps for its backward pass (bf16), per GPU, against "
          "Korthikanti et al.: s b h (10 + 24/t + 5 a s/(h t)) without recomputation, the "
          "5 a s/(h t) term gone with selective, 2 s b h with full; shardc's model has no "
          "dropout, so its figure is the formula less the dropout masks (2 s b h, a s^2 b / t "
          "bytes) and the attention dropout's output (2 a s^2 b / t):")
    print(f"{'row':>6} {'t':>2} {'b':>2} {'mode':>9} {'shardc':>10} {'formula':>10} {'diff':>6} "
          f"{'with dropout':>12}")
    for row in ROWS:
        name, heads, hidden, _, tp, gpus, _, _ = row
        if name not in a.rows or tp not in (1, 8) and name != "1.7B":
            continue
        for t in sorted({1, tp} if tp == 8 else {tp, 8}):
            dp, b = 1, 1
            s, h = SEQ, hidden
            for mode in ("none", "selective", "full"):
                kept = []
                for layers in (2, 3):
                    model = os.path.join(out, f"{name}-L{layers}.ir")
                    write_model(model, layers, hidden, heads, b)
                    flags = ["--recompute", mode]
                    if t > 1:
                        flags += ["--tensor-parallel", "weight", "--n-chips", str(t)]
                    e = estimate(shardc, model, flags)
                    if "error" in e:
                        raise SystemExit(f"{name}: {e['error']}")
                    kept.append(e["kept"])
                per_layer = kept[1] - kept[0]
                quad = 5 * heads * s / (h * t)
                with_dropout = {"none": s * b * h * (10 + 24 / t + quad),
                                "selective": s * b * h * (10 + 24 / t),
                                "full": 2 * s * b * h}[mode]
                no_dropout = {"none": s * b * h * (8 + 24 / t + 2 * heads * s / (h * t)),
                              "selective": s * b * h * (8 + 24 / t),
                              "full": 2 * s * b * h}[mode]
                print(f"{name:>6} {t:>2} {b:>2} {mode:>9} {per_layer / 2**20:>8.1f}Mi "
                      f"{no_dropout / 2**20:>8.1f}Mi {100 * (per_layer / no_dropout - 1):>+5.1f}% "
                      f"{with_dropout / 2**20:>10.1f}Mi", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--rows", default="1.7B,3.6B,7.5B,18.4B")
    ap.add_argument("--search-budget", default="10s")
    ap.add_argument("--no-search", dest="search", action="store_false")
    ap.add_argument("--no-layers", dest="layers", action="store_false")
    a = ap.parse_args()
    a.rows = a.rows.split(",")
    shardc = os.path.join(a.build, "bin", "shardc")
    with tempfile.TemporaryDirectory() as out:
        table(a, shardc, out)
        if a.layers:
            layer_memory(a, shardc, out)


if __name__ == "__main__":
    main()
