"""Compares two .npy files elementwise: |got - want| <= atol + rtol * |want|.

usage: compare_npy.py GOT WANT [--rtol R] [--atol A] [--max-rel M]; exits 1 and says where
they differ. With --max-rel the criterion is instead max|got - want| / max|want| <= M.
"""
import argparse
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("got")
ap.add_argument("want")
ap.add_argument("--rtol", type=float, default=1e-5)
ap.add_argument("--atol", type=float, default=1e-6)
ap.add_argument("--max-rel", type=float)
a = ap.parse_args()
got, want = np.load(a.got), np.load(a.want)
if got.shape != want.shape or got.dtype != want.dtype:
    sys.exit(f"mismatch: {a.got} is {got.dtype}{list(got.shape)}, "
             f"{a.want} is {want.dtype}{list(want.shape)}")
if a.max_rel is not None:
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    rel = err / scale if scale else err
    if not rel <= a.max_rel:
        sys.exit(f"max abs error {err} / max abs value {scale} = {rel} > {a.max_rel}")
    print(f"match: {got.size} elements, max abs error / max abs value = {rel:.3g}")
    sys.exit(0)
bad = ~np.isclose(got, want, rtol=a.rtol, atol=a.atol, equal_nan=True)
if bad.any():
    i = tuple(np.argwhere(bad)[0])
    sys.exit(f"{bad.sum()} of {bad.size} elements differ; first at {list(i)}: "
             f"got {got[i]!r}, want {want[i]!r}; max abs diff {np.nanmax(np.abs(got - want))}")
print(f"match: {got.size} elements, max abs diff {np.nanmax(np.abs(got - want)) if got.size else 0}")
