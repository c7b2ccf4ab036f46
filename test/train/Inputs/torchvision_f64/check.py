#!/usr/bin/python3
"""Trains torchvision's BatchNorm families at their own structure (num_classes 10) in float64
with shardc and with PyTorch, and compares every step's loss, the parameters and the running
statistics after the steps.

In float32 no two implementations agree on these networks beyond a few steps: batch-normalized
networks explode their gradients at initialization, so a 1e-7 relative change of the weights
(float32 rounding) moves ShuffleNetV2 x0.5's fifth loss by about 1% even at 224x224
(bench/batchnorm_conditioning.py measures it). In float64 the same chaos starts from 1e-16, so
the batch statistics, the three gradients of BatchNorm, the running-statistics update and the
optimizers are checked here at full depth; bench/model_zoo.py holds float32 to PyTorch on
instances that are well conditioned.

Usage: check.py SHARDC OUT --max-rel R [--steps N] [MODEL ...]
Exits 1 naming the first model whose loss, parameter or statistic is off by more than R
(relative to the array's largest magnitude, or to the floor that `floor` explains).
"""
import argparse
import copy
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F
import torchvision.models as tvm
from torchvision.ops import StochasticDepth

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                                "bench"))
from training_export import export_training  # noqa: E402

FAMILIES = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0",
            "shufflenet_v2_x0_5", "regnet_y_400mf", "densenet121", "mnasnet0_5"]
LR = {"sgd": 0.01, "adamw": 1e-3}
OPTIMIZERS = {
    "sgd": (lambda p: torch.optim.SGD(p, lr=LR["sgd"], momentum=0.9),
            ["--optimizer", "sgd", "--momentum", "0.9", "--learning-rate", str(LR["sgd"])]),
    "adamw": (lambda p: torch.optim.AdamW(p, lr=LR["adamw"], weight_decay=0.01),
              ["--optimizer", "adamw", "--learning-rate", str(LR["adamw"]), "--weight-decay",
               "0.01"]),
}


def rel(got, want, floor=0.0):
    """max |got - want| over the larger of max |want| and `floor`."""
    scale = max(float(np.max(np.abs(want))), floor)
    err = float(np.max(np.abs(got - want)))
    return err / scale if scale else err


class ExportedHardsigmoid(torch.nn.Module):
    """Hardsigmoid as the file holds it: ONNX's HardSigmoid with alpha 1/6 rounded to float32
    (a 3e-9 relative change that the float64 comparison would otherwise see)."""

    def forward(self, x):
        return torch.clamp(x * float(np.float32(1 / 6)) + 0.5, 0.0, 1.0)


def as_exported(model):
    """The module with the parts whose exported form differs in float64 made as exported."""
    for m in list(model.modules()):
        for n, child in m.named_children():
            if isinstance(child, torch.nn.Hardsigmoid):
                setattr(m, n, ExportedHardsigmoid())
    return model


def noise_gradients(model):
    """The parameters whose gradient is zero in exact arithmetic (a bias before a BatchNorm),
    told by a float64 gradient below 1e-10 of the model's largest. AdamW moves them by the
    ratio of two rounding noises, which no two implementations share, so they are left out."""
    top = max(float(p.grad.abs().max()) for p in model.parameters() if p.grad is not None)
    return {n for n, p in model.named_parameters()
            if p.grad is not None and float(p.grad.abs().max()) <= 1e-10 * top}


def floor(name, want, opt):
    """The smallest scale an array is compared at. Some arrays are zero in exact arithmetic
    (the bias of a BatchNorm whose output the next BatchNorm normalizes gets no gradient; a
    running mean of such a zero-mean channel), and their float64 values are rounding noise: a
    parameter is compared at the scale of one learning-rate step at least, a running mean at
    the scale of the values it averages (the running variance's square root)."""
    if name.endswith("running_mean"):
        return float(np.sqrt(np.max(want[name[:-len("mean")] + "var"])))
    if name.endswith("running_var"):
        return 0.0
    return LR[opt]


def check(args, name, opt):
    d = os.path.join(args.out, name + "-" + opt)
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(0)
    model = getattr(tvm, name)(num_classes=10).double().train()
    for m in model.modules():  # both sides must compute the same numbers
        if isinstance(m, (torch.nn.Dropout, StochasticDepth)):
            m.p = 0.0
    x = torch.randn(args.batch, 3, args.res, args.res, dtype=torch.float64)
    y = torch.randint(0, 10, (args.batch,))
    export_training(model, x, d + "/model.onnx", ["x"])
    np.save(d + "/x.npy", x.numpy())
    np.save(d + "/y.npy", y.numpy())
    make_opt, flags = OPTIMIZERS[opt]
    torch_model = as_exported(copy.deepcopy(model))
    optimizer = make_opt(torch_model.parameters())
    losses, noise = [], set()
    for step in range(args.steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(torch_model(x), y)
        loss.backward()
        if step == 0 and opt == "adamw":
            noise = noise_gradients(torch_model)
        optimizer.step()
        losses.append(loss.item())
    want = {k: v.numpy() for k, v in torch_model.state_dict().items()
            if not k.endswith("num_batches_tracked")}
    run = lambda *cmd: subprocess.run([args.shardc, *cmd], check=True, stdout=subprocess.DEVNULL)
    run("compile", d + "/model.onnx", "--loss", "cross-entropy", "--labels", "y", *flags,
        "--pef-name", "t", "--output-folder", d)
    run("run", "--pef", d + "/t/t.pef", "--input", "x=" + d + "/x.npy", "--input",
        "y=" + d + "/y.npy", "--steps", str(args.steps), "--output-dir", d + "/run",
        "--save-weights", d + "/w.npz", "--save-state", d + "/s.npz")
    got = dict(np.load(d + "/w.npz"))
    got.update(np.load(d + "/s.npz"))
    errors = {"loss": rel(np.load(d + "/run/loss.npy"), np.array(losses))}
    for k, v in want.items():
        if k not in got:
            sys.exit("check.py: %s: shardc has no %s" % (name, k))
        if k not in noise:
            errors[k] = rel(got[k], v, floor(k, want, opt))
    worst = max(errors, key=errors.get)
    if args.verbose:
        for k in sorted(errors, key=errors.get)[-4:]:
            w = want.get(k, np.array(losses))
            print("  %s: error %.1e, largest magnitude %.1e" % (k, errors[k], np.abs(w).max()))
    stats = max(e for k, e in errors.items() if "running" in k)
    print("%-20s %-6s loss %.1e  running statistics %.1e  worst %.1e (%s)%s"
          % (name, opt, errors["loss"], stats, errors[worst], worst,
             "; %d zero-gradient weights not compared" % len(noise) if noise else ""), flush=True)
    ok = errors[worst] <= args.max_rel
    if ok and not args.keep:  # a failing run's files stay for a look
        shutil.rmtree(d)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("shardc")
    ap.add_argument("out")
    ap.add_argument("--max-rel", type=float, required=True)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--res", type=int, default=64)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--verbose", action="store_true", help="the four worst arrays per run")
    ap.add_argument("--keep", action="store_true",
                    help="keep each passing run's folder under OUT (its PEF: up to 0.5 GB)")
    ap.add_argument("models", nargs="*", default=FAMILIES)
    args = ap.parse_intermixed_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    bad = [(m, o) for m in args.models for o in OPTIMIZERS if not check(args, m, o)]
    if bad:
        sys.exit("check.py: over --max-rel %g: %s" % (args.max_rel, bad))


if __name__ == "__main__":
    main()
