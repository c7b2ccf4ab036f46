#!/usr/bin/python3
"""What the Python module costs beside the command line, on examples/train_gpt.py's model.

Prints, as medians over --repeats: a step's time inside a 40-step Pef.train call (from its
records) and inside `shardc run --data` (from its --metrics), the wall time of a Pef.run
call of one step and of 20 steps (the per-call cost: loading the PEF and binding its plan),
and PyTorch's eager step for scale. Run with PYTHONPATH=build/python (or after setup.sh).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

import shardc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    TinyGPT = _tiny_gpt()
    torch.manual_seed(0)
    model = TinyGPT()
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, 128, (640, 33), generator=g)
    xs, ys = idx[:, :32].contiguous(), idx[:, 1:].contiguous()
    with tempfile.TemporaryDirectory() as tmp:
        pef = shardc.compile(model, (xs[:16],), loss="cross-entropy", lr=3e-3,
                             output_folder=tmp, pef_name="gpt")
        np.save(os.path.join(tmp, "x.npy"), xs.numpy())
        np.save(os.path.join(tmp, "y.npy"), ys.numpy())
        rows = {"Pef.train step s": [], "shardc run --data step s": [],
                "Pef.run call, 1 step s": [], "Pef.run call, 20 steps s": [],
                "PyTorch eager step s": []}
        threads = {"threads": args.threads}
        for _ in range(args.repeats):
            recs = pef.train({"idx": xs, "labels": ys}, steps=40, **threads)
            rows["Pef.train step s"].append(statistics.median(r["step_s"] for r in recs))
            metrics = os.path.join(tmp, "m.jsonl")
            subprocess.run([os.path.join(ROOT, "build", "bin", "shardc"), "run", "--pef", pef.path,
                            "--data", f"idx={tmp}/x.npy", "--data", f"labels={tmp}/y.npy",
                            "--steps", "40", "--threads", str(args.threads), "--metrics",
                            metrics], check=True, capture_output=True)
            with open(metrics) as f:
                rows["shardc run --data step s"].append(
                    statistics.median(json.loads(line)["step_s"] for line in f))
            batch = {"idx": xs[:16], "labels": ys[:16]}
            for steps, key in ((1, "Pef.run call, 1 step s"), (20, "Pef.run call, 20 steps s")):
                t0 = time.perf_counter()
                pef.run(batch, steps=steps, **threads)
                rows[key].append(time.perf_counter() - t0)
            opt = torch.optim.Adam(model.parameters(), lr=3e-3)
            times = []
            for k in range(10):
                t0 = time.perf_counter()
                opt.zero_grad()
                F.cross_entropy(model(xs[16 * k:16 * k + 16]).flatten(0, 1),
                                ys[16 * k:16 * k + 16].flatten()).backward()
                opt.step()
                times.append(time.perf_counter() - t0)
            rows["PyTorch eager step s"].append(statistics.median(times))
    print(f"TinyGPT (examples/train_gpt.py), batch 16 x 32 tokens, Adam; {args.threads} threads; "
          f"medians of {args.repeats} repeats")
    for name, values in rows.items():
        print(f"  {name:28s} {statistics.median(values):.6f}")


def _tiny_gpt():
    """The example's model class, without running its training (the code before it)."""
    source = open(os.path.join(ROOT, "examples", "train_gpt.py")).read()
    namespace = {"__name__": "example"}
    exec(source.split("torch.manual_seed(0)")[0], namespace)
    return namespace["TinyGPT"]


if __name__ == "__main__":
    sys.exit(main())
