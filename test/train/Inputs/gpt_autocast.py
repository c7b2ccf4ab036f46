"""Trains scripts/gen_gpt.py's model in PyTorch, Adam (--lr, default 0.01), cross-entropy on labels, as
shardc's --precision bf16 step does: under torch.autocast("cpu", dtype=torch.bfloat16) (or
in f32 with --f32), the loss computed in f32. Writes the losses, one per step, as .npy.

  gpt_autocast.py MODEL_DIR LABELS.npy STEPS OUT.npy [--f32] [--lr F] --layers L --dim D --heads H
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts"))
import gen_gpt  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("labels")
ap.add_argument("steps", type=int)
ap.add_argument("out")
ap.add_argument("--f32", action="store_true")
ap.add_argument("--lr", type=float, default=0.01)
for name in ("layers", "dim", "heads"):
    ap.add_argument("--" + name, type=int, required=True)
a = ap.parse_args()
ids = np.load(os.path.join(a.model, "ids.npy"))
a.batch, a.seq = ids.shape
params = {n: torch.nn.Parameter(torch.from_numpy(np.load(os.path.join(a.model, n + ".npy"))))
          for n in gen_gpt.weight_shapes(argparse.Namespace(**vars(a), vocab=0))}
labels = torch.from_numpy(np.load(a.labels))
opt = torch.optim.Adam(params.values(), lr=a.lr)
losses = []
for _ in range(a.steps):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=not a.f32):
        logits = gen_gpt.forward(a, params, ids)
    loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1))
    loss.backward()
    opt.step()
    losses.append(loss.item())
np.save(a.out, np.array(losses, np.float32))
print(" ".join(f"{x:.5f}" for x in losses))
