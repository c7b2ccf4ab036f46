"""Compiles a model, checks that its executable plan runs no op on a reference kernel, runs
it compiled (native f32 kernels) and through the reference interpreter, and compares every
output (and, for training, every step's outputs, the weights and the optimizer and model
state after the steps): max |compiled - reference| / max |reference| per array must stay
within --max-rel (--weight-max-rel for weights and state).

usage: compiled_vs_reference.py SHARDC OUT_DIR MODEL --max-rel R [--steps N]
       [--weight-max-rel R] [--input NAME=FILE ...] [--skip WEIGHT ...] -- COMPILE_FLAGS...
Prints one "match NAME" line per compared array; exits 1 naming the first mismatch.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("shardc")
ap.add_argument("out")
ap.add_argument("model")
ap.add_argument("--max-rel", type=float, required=True)
ap.add_argument("--weight-max-rel", type=float, help="for the weights (default: --max-rel)")
ap.add_argument("--steps", type=int, default=1)
ap.add_argument("--input", action="append", default=[])
ap.add_argument("--skip", action="append", default=[], help="a weight not to compare")
argv = sys.argv[1:]
cut = argv.index("--") if "--" in argv else len(argv)
a = ap.parse_args(argv[:cut])
flags = argv[cut + 1:]

subprocess.run([a.shardc, "compile", a.model, "--output-folder", a.out, "--pef-name", "m"] + flags,
               check=True, stdout=subprocess.DEVNULL)
pef = os.path.join(a.out, "m", "m.pef")
info = json.loads(subprocess.run([a.shardc, "inspect", "--json", pef], check=True,
                                 capture_output=True, text=True).stdout)
if info["plan"]["reference_ops"]:
    sys.exit(f"ops on reference kernels: {info['plan']['reference_ops']}")
training = info["mode"] == "training"
runs = {}
for how in ("compiled", "reference"):
    d = os.path.join(a.out, how)
    cmd = [a.shardc, "run", "--pef", pef, "--output-dir", d, "--steps", str(a.steps)]
    cmd += sum((["--input", i] for i in a.input), [])
    if how == "reference":
        cmd.append("--reference")
    if training:
        cmd += ["--save-weights", os.path.join(d, "weights.npz"),
                "--save-state", os.path.join(d, "state.npz")]
    subprocess.run(cmd, check=True)
    arrays = {o["name"]: np.load(os.path.join(d, o["name"] + ".npy")) for o in info["outputs"]}
    if training:
        w = np.load(os.path.join(d, "weights.npz"))
        arrays.update({"weight " + n: w[n] for n in w.files})
        st = np.load(os.path.join(d, "state.npz"))
        arrays.update({"state " + n: st[n] for n in st.files})
    runs[how] = arrays


def kind(name):
    """A state array's kind (momentum_buffer, exp_avg, running_mean...): its name's last part."""
    return name.rsplit(".", 1)[-1] if name.startswith("state ") else name


# A state array is compared at the scale of the largest of its kind: the moments of a
# parameter whose true gradient is zero (a bias before a BatchNorm) are float32 noise.
kind_scale = {}
for name, want in runs["reference"].items():
    if want.size:
        kind_scale[kind(name)] = max(kind_scale.get(kind(name), 0.0), float(np.max(np.abs(want))))
for name, want in runs["reference"].items():
    if any(name.startswith(("weight ", "state ")) and name.endswith(w) for w in a.skip):
        continue
    got = runs["compiled"][name]
    if got.shape != want.shape or got.dtype != want.dtype:
        sys.exit(f"{name}: compiled {got.dtype}{list(got.shape)}, reference {want.dtype}{list(want.shape)}")
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    if name.startswith("state "):
        scale = kind_scale.get(kind(name), scale)
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    tol = a.max_rel
    if name.startswith(("weight ", "state ")) and a.weight_max_rel:
        tol = a.weight_max_rel
    if not (err <= tol * scale or err == 0):
        sys.exit(f"{name}: max |compiled - reference| {err} > {tol} x max |reference| {scale}")
    print("match", name)
