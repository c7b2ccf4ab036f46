"""Checks that two one-step SGD runs at learning rate 1 moved every parameter alike: the
initial weights (one .npy per parameter in MODEL_DIR) minus each run's weights are its
gradients, equal within TOL of each tensor's largest gradient.

  same_gradients.py MODEL_DIR A.npz B.npz TOL
"""
import sys

import numpy as np

model, a_path, b_path, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
a, b = np.load(a_path), np.load(b_path)
worst = 0.0
for name in a.files:
    w0 = np.load(f"{model}/{name}.npy")
    ga, gb = w0 - a[name], w0 - b[name]
    scale = np.abs(ga).max()
    rel = np.abs(ga - gb).max() / scale if scale > 0 else np.abs(gb).max()
    worst = max(worst, rel)
    if rel > tol:
        sys.exit(f"{name}: gradients differ by {rel:.3g} of the largest (tolerance {tol})")
print(f"ok: {len(a.files)} gradients, worst {worst:.3g} of the largest")
