#!/usr/bin/env python3
"""Times the reference interpreter on a GPT-style decoder next to PyTorch eager on the same
weights, in one run, and prints medians and the ratio.

  bench/interpreter_gpt.py [--build build] [--repeats 5] [gen_gpt.py size flags...]

The interpreter time is the wall time of `shardc-opt --run` (parse + verify + execute +
writing logits); parse-only time is measured separately and reported so it can be
subtracted. PyTorch runs the same forward pass with 1 thread and with its default threads.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from benchutil import ROOT, add_common_args, median_time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    sizes = (("vocab", 1024), ("dim", 256), ("heads", 8), ("seq", 128), ("batch", 4),
             ("layers", 4), ("seed", 0))
    for name, default in sizes:
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()

    import numpy as np
    import torch
    import gen_gpt

    opt = os.path.join(a.build, "bin", "shardc-opt")
    with tempfile.TemporaryDirectory() as d:
        flags = [f"--{n}={getattr(a, n)}" for n, _ in sizes]
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_gpt.py"), d] + flags,
                       check=True)
        ir = os.path.join(d, "gpt.ir")
        run = lambda: subprocess.run([opt, ir, "--run", "--input-dir", d, "--output-dir", d],
                                     check=True, stdout=subprocess.DEVNULL)
        parse = lambda: subprocess.run([opt, ir, "-o", os.devnull], check=True)
        t_run = median_time(run, a.repeats)
        t_parse = median_time(parse, a.repeats)
        got = np.load(os.path.join(d, "logits.npy"))
        want = np.load(os.path.join(d, "expected_logits.npy"))
        err = float(np.max(np.abs(got - want)))

        w = {n[:-4]: np.load(os.path.join(d, n)) for n in os.listdir(d)
             if n.endswith(".npy") and n not in ("ids.npy", "expected_logits.npy", "logits.npy")}
        ids = np.load(os.path.join(d, "ids.npy"))
        ns = argparse.Namespace(**{n: getattr(a, n) for n, _ in sizes})
        with torch.no_grad():
            default_threads = torch.get_num_threads()
            t_torch = median_time(lambda: gen_gpt.reference(ns, w, ids), a.repeats)
            torch.set_num_threads(1)
            t_torch1 = median_time(lambda: gen_gpt.reference(ns, w, ids), a.repeats)

    print(f"GPT-style decoder: layers={a.layers} dim={a.dim} heads={a.heads} seq={a.seq} "
          f"batch={a.batch} vocab={a.vocab}; median of {a.repeats}")
    print(f"  shardc-opt --run (reference interpreter): {t_run * 1e3:9.1f} ms "
          f"(of which parse+verify+print {t_parse * 1e3:.1f} ms)")
    print(f"  PyTorch eager, {default_threads} threads:              {t_torch * 1e3:9.1f} ms")
    print(f"  PyTorch eager, 1 thread:                {t_torch1 * 1e3:9.1f} ms")
    print(f"  interpreter / PyTorch(1 thread) = {t_run / t_torch1:.1f}x; "
          f"max |logits diff| = {err:.2e}")


if __name__ == "__main__":
    main()
