"""Compares two .npy files elementwise: |got - want| <= atol + rtol * |want|.

usage: compare_npy.py GOT WANT [--rtol R] [--atol A]; exits 1 and says where they differ.
"""
import argparse
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("got")
ap.add_argument("want")
ap.add_argument("--rtol", type=float, default=1e-5)
ap.add_argument("--atol", type=float, default=1e-6)
a = ap.parse_args()
got, want = np.load(a.got), np.load(a.want)
if got.shape != want.shape or got.dtype != want.dtype:
    sys.exit(f"mismatch: {a.got} is {got.dtype}{list(got.shape)}, "
             f"{a.want} is {want.dtype}{list(want.shape)}")
bad = ~np.isclose(got, want, rtol=a.rtol, atol=a.atol, equal_nan=True)
if bad.any():
    i = tuple(np.argwhere(bad)[0])
    sys.exit(f"{bad.sum()} of {bad.size} elements differ; first at {list(i)}: "
             f"got {got[i]!r}, want {want[i]!r}; max abs diff {np.nanmax(np.abs(got - want))}")
print(f"match: {got.size} elements, max abs diff {np.nanmax(np.abs(got - want)) if got.size else 0}")
