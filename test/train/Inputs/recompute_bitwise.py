"""Compiles the GPT of gen_gpt.py (cross-entropy, Adam) with --recompute none, selective and
full under each set of compile flags given, trains 5 steps of each, and fails unless every
recomputing PEF gives the losses of its `none` bitwise.

  recompute_bitwise.py SHARDC GPT_DIR LABELS.npy WORK_DIR FLAGS...
"""
import os
import shlex
import subprocess
import sys

import numpy as np

shardc, gpt, labels, work = sys.argv[1:5]
for k, flags in enumerate(sys.argv[5:]):
    losses = {}
    for mode in ("none", "selective", "full"):
        name = f"c{k}_{mode}"
        subprocess.run([shardc, "compile", f"{gpt}/gpt.ir", "--loss", "cross-entropy", "--labels",
                        "y", "--optimizer", "adam", "--recompute", mode, *shlex.split(flags),
                        "--output-folder", work, "--pef-name", name],
                       check=True, stdout=subprocess.DEVNULL)
        out = os.path.join(work, f"o_{name}")
        subprocess.run([shardc, "run", "--pef", f"{work}/{name}/{name}.pef", "--input",
                        f"ids={gpt}/ids.npy", "--input", f"y={labels}", "--steps", "5",
                        "--output-dir", out], check=True, stdout=subprocess.DEVNULL)
        losses[mode] = np.load(f"{out}/loss.npy")
    for mode in ("selective", "full"):
        if not np.array_equal(losses[mode], losses["none"]):
            sys.exit(f"flags '{flags}': --recompute {mode} gives {losses[mode]}, "
                     f"none {losses['none']}")
    print(f"ok: '{flags}': {losses['none']}")
