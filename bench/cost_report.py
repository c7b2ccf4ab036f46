#!/usr/bin/env python3
"""The cost model's report for a GPT-style Adam training step on a target (default h100),
under pure data parallelism and under Megatron tensor parallelism on the same number of
devices, side by side. The model is generated as text IR (scripts/gen_gpt.py's layout) and
planned with `shardc compile --estimate-only`: shapes alone, no weights.

  bench/cost_report.py [--build build] [--arch h100] [--devices 8] [--layers 12] [--dim 768]
                       [--heads 12] [--seq 1024] [--batch 32] [--vocab 50304]
"""
import argparse
import os
import subprocess
import tempfile

import numpy as np

from benchutil import add_common_args

import gen_gpt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--arch", default="h100")
    ap.add_argument("--devices", type=int, default=8)
    for name, default in (("layers", 12), ("dim", 768), ("heads", 12), ("seq", 1024),
                          ("batch", 32), ("vocab", 50304)):
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    shapes = gen_gpt.weight_shapes(a)
    weights = {n: np.empty(s, np.float32) for n, s in shapes.items()}  # never touched
    shardc = os.path.join(a.build, "bin", "shardc")
    n = str(a.devices)
    with tempfile.TemporaryDirectory() as out:
        model = os.path.join(out, "gpt.ir")
        with open(model, "w") as fh:
            fh.write(gen_gpt.emit_ir(a, weights))
        params = sum(int(np.prod(s)) for s in shapes.values())
        print(f"GPT-style training step (Adam): {a.layers} layers, dim {a.dim}, {a.heads} heads, "
              f"seq {a.seq}, global batch {a.batch}, vocab {a.vocab}: {params / 1e6:.1f}M "
              f"parameters; target {a.arch}, {a.devices} devices\n")
        for title, flags in (("data parallel -ws " + n, ["--data-parallel", "-ws", n]),
                             ("Megatron --tensor-parallel weight --n-chips " + n,
                              ["--tensor-parallel", "weight", "--n-chips", n])):
            r = subprocess.run([shardc, "compile", model, "--loss", "cross-entropy", "--labels",
                                "y", "--optimizer", "adam", "--arch", a.arch, "--estimate-only"]
                               + flags, check=True, capture_output=True, text=True)
            print(title + ":\n" + r.stdout)


if __name__ == "__main__":
    main()
