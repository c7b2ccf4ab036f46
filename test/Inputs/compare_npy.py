"""Compares two .npy files (or every array of two .npz files) elementwise:
|got - want| <= atol + rtol * |want|.

usage: compare_npy.py GOT WANT [--rtol R] [--atol A] [--max-rel M] [--subset]; exits 1 and
says where they differ. With --subset a GOT .npz may hold more arrays than WANT. With --max-rel the criterion is instead max|got - want| / max|want| <= M (per
array for .npz files).
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
ap.add_argument("--subset", action="store_true",
                help="compare only WANT's arrays of a GOT .npz that holds more")
ap.add_argument("--skip", action="append", default=[],
                help="NAME[:SLICE] of an .npz array (or a numpy slice of it) to leave out")
a = ap.parse_args()


def check(got, want, label):
    if got.shape != want.shape or got.dtype != want.dtype:
        sys.exit(f"{label}: got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}")
    if a.max_rel is not None:
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
        if not (err / scale if scale else err) <= a.max_rel:
            sys.exit(f"{label}: max abs error {err} / max abs value {scale} > {a.max_rel}")
        return
    bad = ~np.isclose(got, want, rtol=a.rtol, atol=a.atol, equal_nan=True)
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        sys.exit(f"{label}: {bad.sum()} of {bad.size} elements differ; first at {list(i)}: "
                 f"got {got[i]!r}, want {want[i]!r}")


if a.want.endswith(".npz"):
    got, want = np.load(a.got), np.load(a.want)
    missing = sorted(set(want.files) - set(got.files))
    if missing or (not a.subset and sorted(got.files) != sorted(want.files)):
        sys.exit(f"arrays differ: {sorted(got.files)} vs {sorted(want.files)}")
    skips = dict(s.split(":", 1) if ":" in s else (s, "...") for s in a.skip)
    for name in want.files:
        g, w = got[name].copy(), want[name].copy()
        if name in skips:  # blank out the skipped part in both
            exec(f"g[{skips[name]}] = 0; w[{skips[name]}] = 0")
        check(g, w, name)
    print(f"match: {len(want.files)} arrays")
    sys.exit(0)
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
