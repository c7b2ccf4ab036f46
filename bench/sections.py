#!/usr/bin/env python3
"""The optimization levels side by side: for the GPT and the transformer encoder of
bench/compiled_vs_torch.py (one Adam step each) and a torchvision ResNet-18 (112x112, batch 8,
one SGD step), compiled at -o0, -o1 and
-o3: the section count, the compile time, the measured step time and peak memory on this
machine (the compiled runtime, 2 threads), and the estimated step time on sn30, sn40l and
h100 (the same level compiled for that target with --estimate-only). Each level is compiled
in every compiler mode of --modes (default, and nlp: transformer heuristics, which on the
transformers turn their layers into hypersection bodies and, at -o1, fuse whole attention and
MLP blocks; a model without attention compiles as default). Sections count the program's and
each hypersection body's once.

Step times are medians of --repeats runs, each the median of --steps steps timed inside the
process; peak memory is the run's max RSS. The levels' runs interleave, so a noisy neighbour
hits all alike.

  bench/sections.py [--build build] [--repeats 3] [--steps 5] [--cases gpt,encoder,resnet18]
                    [--modes default,nlp]
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

from benchutil import add_common_args, max_rss_run
from compiled_vs_torch import CASES

LEVELS = ["-o0", "-o1", "-o3"]
TARGETS = ["sn30", "sn40l", "h100"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.set_defaults(repeats=3)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--cases", default="gpt,encoder,resnet18")
    ap.add_argument("--modes", default="default,nlp")
    a = ap.parse_args()
    shardc = os.path.join(a.build, "bin", "shardc")
    env = dict(os.environ)
    if "avx512f" in open("/proc/cpuinfo").read():
        env.setdefault("OPENBLAS_CORETYPE", "SkylakeX")  # OpenBLAS 0.3.21 misdetects it
    cases = [c for c in CASES if c.split("-")[0] in a.cases.split(",") and CASES[c][1]]
    exporter = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "compiled_vs_torch.py")]
    modes = a.modes.split(",")
    variants = [(level, mode) for mode in modes for level in LEVELS]
    print(f"{'model':<14}{'mode':<8}{'level':<6}{'sections':>9}{'compile s':>10}{'step s':>9}"
          f"{'peak MiB':>9}" + "".join(f"{t + ' est s':>12}" for t in TARGETS))
    with tempfile.TemporaryDirectory() as out:
        for case in cases:
            model, files = json.loads(subprocess.run(
                exporter + ["--export-worker", case, out], check=True, capture_output=True,
                text=True).stdout.strip().splitlines()[-1])
            _, _, opt, _ = CASES[case]
            flags = ["--optimizer", opt, "--learning-rate", "0.001"]
            rows = {}
            for level, mode in variants:
                name = case + level + mode
                vflags = [level, "--compiler-mode", mode] + flags
                t0 = time.perf_counter()
                subprocess.run([shardc, "compile", model, "--output-folder", out, "--pef-name",
                                name] + vflags, check=True, capture_output=True)
                compile_s = time.perf_counter() - t0
                pef = os.path.join(out, name, name + ".pef")
                info = json.loads(subprocess.run([shardc, "inspect", "--json", pef], check=True,
                                                 capture_output=True, text=True).stdout)
                est = {}
                for t in TARGETS:
                    o = subprocess.run([shardc, "compile", model, "--estimate-only", "--arch", t]
                                       + vflags, check=True, capture_output=True,
                                       text=True).stdout
                    m = re.search(r"step ([0-9.]+) (s|ms|us)", o)
                    est[t] = float(m.group(1)) * {"s": 1, "ms": 1e-3, "us": 1e-6}[m.group(2)]
                sections = sum(1 for s in info["sections"] if s["body"] < 0) + sum(
                    len(h["sections"]) for h in info["hypersections"])
                rows[level, mode] = {"sections": sections, "compile": compile_s,
                               "est": est, "steps": [], "rss": []}
            for _ in range(a.repeats):
                for level, mode in variants:
                    name = case + level + mode
                    pef = os.path.join(out, name, name + ".pef")
                    o, rss = max_rss_run([shardc, "run", "--pef", pef, "--steps",
                                          str(a.steps + 1), "--threads", "2", "--stats",
                                          "--output-dir", out] + files, env)
                    rows[level, mode]["steps"].append(
                        float(re.search(r"median step ([0-9.]+) s", o).group(1)))
                    rows[level, mode]["rss"].append(rss)
            for level, mode in variants:
                r = rows[level, mode]
                print(f"{case:<14}{mode:<8}{level:<6}{r['sections']:>9}{r['compile']:>10.2f}"
                      f"{statistics.median(r['steps']):>9.4f}"
                      f"{statistics.median(r['rss']) / 2**20:>9.0f}" +
                      "".join(f"{r['est'][t]:>12.3g}" for t in TARGETS))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
