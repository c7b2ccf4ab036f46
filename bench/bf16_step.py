#!/usr/bin/env python3
"""Training step of a GPT (scripts/gen_gpt.py shapes, Adam) compiled with --precision f32 and
--precision bf16, both run in this one process's turn, alternating, --repeats times: the median
step time of each (`run --stats`: the median of --steps steps per run), their ratio, how the
bf16 matmul steps ran on this CPU (oneDNN's bf16 GEMM on AVX512-BF16 or AMX, else widened to
f32) and the first losses of both.

  bench/bf16_step.py [--build build] [--repeats 5] [--steps 6] [--layers 4] [--dim 512]
                     [--heads 8] [--seq 128] [--batch 8] [--vocab 4096] [--max-isa ISA]

--max-isa sets DNNL_MAX_CPU_ISA for every run (AVX512_CORE, AVX2, ...): the figures of a CPU
without AVX512-BF16, on this one.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

from benchutil import ROOT, add_common_args


def cpu():
    """The CPU's model name and which bf16 instruction sets its flags list."""
    model, flags = "unknown CPU", set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    bf16 = [f for f in ("avx512_bf16", "amx_bf16") if f in flags]
    return model, bf16


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.set_defaults(repeats=5)
    ap.add_argument("--steps", type=int, default=6)
    for name, default in (("layers", 4), ("dim", 512), ("heads", 8), ("seq", 128), ("batch", 8),
                          ("vocab", 4096)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--max-isa", help="DNNL_MAX_CPU_ISA for every run")
    a = ap.parse_args()
    import numpy as np

    shardc = os.path.join(a.build, "bin", "shardc")
    env = dict(os.environ)
    if a.max_isa:
        env["DNNL_MAX_CPU_ISA"] = a.max_isa
    model, bf16 = cpu()
    print("CPU: %s; bf16 instructions: %s%s" % (model, ", ".join(bf16) or "none",
                                                "; DNNL_MAX_CPU_ISA=" + a.max_isa if a.max_isa else ""))
    print("GPT: %d layers, dim %d, %d heads, seq %d, batch %d, vocab %d; Adam"
          % (a.layers, a.dim, a.heads, a.seq, a.batch, a.vocab))
    with tempfile.TemporaryDirectory() as out:
        g = os.path.join(out, "g")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_gpt.py"), "--layers",
                        str(a.layers), "--dim", str(a.dim), "--heads", str(a.heads), "--seq",
                        str(a.seq), "--batch", str(a.batch), "--vocab", str(a.vocab), g],
                       check=True, stdout=subprocess.DEVNULL)
        labels = os.path.join(out, "y.npy")
        np.save(labels, np.random.default_rng(1).integers(0, a.vocab, (a.batch, a.seq)))
        for p in ("f32", "bf16"):
            subprocess.run([shardc, "compile", os.path.join(g, "gpt.ir"), "--loss", "cross-entropy",
                            "--labels", "y", "--optimizer", "adam", "--lr", "0.001", "--precision",
                            p, "--output-folder", out, "--pef-name", p], check=True,
                           stdout=subprocess.DEVNULL, env=env)
        medians, losses, ways = {"f32": [], "bf16": []}, {}, []
        for _ in range(a.repeats):
            for p in ("f32", "bf16"):
                o = os.path.join(out, "o_" + p)
                r = subprocess.run(
                    [shardc, "run", "--pef", os.path.join(out, p, p + ".pef"), "--input",
                     "ids=" + os.path.join(g, "ids.npy"), "--input", "y=" + labels, "--steps",
                     str(a.steps), "--output-dir", o, "--stats"],
                    check=True, capture_output=True, text=True, env=env)
                medians[p].append(float(re.search(r"median step ([0-9.]+) s", r.stdout).group(1)))
                losses[p] = np.load(os.path.join(o, "loss.npy"))
                if p == "bf16":
                    ways = re.findall(r"^  (\d+ \w+: .*)$", r.stdout.split("bf16 steps, by")[-1],
                                      re.M)
    f32, b16 = statistics.median(medians["f32"]), statistics.median(medians["bf16"])
    print("median step, of %d runs of %d steps: f32 %.3f s, bf16 %.3f s; f32/bf16 %.2fx"
          % (a.repeats, a.steps, f32, b16, f32 / b16))
    print("  per run: f32 %s; bf16 %s" % (" ".join("%.3f" % t for t in medians["f32"]),
                                          " ".join("%.3f" % t for t in medians["bf16"])))
    print("bf16 steps: %s" % "; ".join(ways))
    print("losses: f32 %s; bf16 %s" % (" ".join("%.4f" % x for x in losses["f32"][:4]),
                                       " ".join("%.4f" % x for x in losses["bf16"][:4])))


if __name__ == "__main__":
    main()
