#!/usr/bin/python3
"""Imports, runs and trains small random-weight instances of torchvision's classification
families with shardc and prints, per model, the error against PyTorch: the inference
output (eval mode, exported with PyTorch's defaults) and the losses of 3 SGD steps with
momentum (training mode, exported for training), with compile and run times.

Dropout and stochastic depth are set to p = 0 so that both sides compute the same numbers.
The training reference is PyTorch in float64, and the table also gives PyTorch's own
float32 run against it: at these small sizes batch-normalized networks are ill-conditioned
(MobileNet v2 at 32x32, batch 8: step 3 loses 1.7732 in float32, 1.6808 in float64), so a
float32 error is only meaningful next to that column.

Usage: /usr/bin/python3 bench/model_zoo.py [--shardc BUILD/bin/shardc] [--out DIR] [MODEL ...]
"""
import argparse
import copy
import os
import subprocess
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as tvm
from torchvision.ops import StochasticDepth

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def zoo():
    """(name, constructor, input resolution): the smallest member of each family."""
    c = 10
    return [
        ("resnet18", lambda: tvm.resnet18(num_classes=c), 32),
        ("resnext50_32x4d", lambda: tvm.resnext50_32x4d(num_classes=c), 32),
        ("wide_resnet50_2", lambda: tvm.wide_resnet50_2(num_classes=c), 32),
        ("mobilenet_v2", lambda: tvm.mobilenet_v2(num_classes=c), 32),
        ("mobilenet_v3_small", lambda: tvm.mobilenet_v3_small(num_classes=c), 32),
        ("efficientnet_b0", lambda: tvm.efficientnet_b0(num_classes=c), 32),
        ("regnet_y_400mf", lambda: tvm.regnet_y_400mf(num_classes=c), 32),
        ("squeezenet1_1", lambda: tvm.squeezenet1_1(num_classes=c), 64),
        ("shufflenet_v2_x0_5", lambda: tvm.shufflenet_v2_x0_5(num_classes=c), 32),
        ("densenet121", lambda: tvm.densenet121(num_classes=c), 32),
        ("googlenet", lambda: tvm.googlenet(num_classes=c, aux_logits=False, init_weights=True), 64),
        ("inception_v3",
         lambda: tvm.inception_v3(num_classes=c, aux_logits=False, init_weights=True), 75),
        ("mnasnet0_5", lambda: tvm.mnasnet0_5(num_classes=c), 32),
        ("convnext_tiny", lambda: tvm.convnext_tiny(num_classes=c), 32),
        ("vit", lambda: tvm.VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                                              num_heads=2, hidden_dim=32, mlp_dim=64,
                                              num_classes=c), 32),
        ("swin_t", lambda: tvm.swin_t(num_classes=c), 64),
    ]


def prepare(model):
    """Dropout and stochastic depth off; zero-initialized heads (ViT's) get small random
    weights."""
    for m in model.modules():
        if isinstance(m, (nn.Dropout, StochasticDepth)):
            m.p = 0.0
        if isinstance(m, nn.Linear) and m.weight.abs().max() == 0:
            nn.init.normal_(m.weight, std=0.1)
    return model


def torch_losses(model, x, y, dtype, steps=3):
    model = copy.deepcopy(model).to(dtype).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x.to(dtype)), y)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return np.array(out)


def shardc(args, *cmd):
    t = time.perf_counter()
    r = subprocess.run([args.shardc, *cmd], capture_output=True, text=True)
    if r.returncode:
        lines = r.stderr.strip().splitlines() or ["exit %d" % r.returncode]
        raise RuntimeError(lines[-1][:160])
    return time.perf_counter() - t


def rel(got, want):
    scale = float(np.max(np.abs(want)))
    return float(np.max(np.abs(got - want))) / (scale if scale else 1.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shardc", default=os.path.join(ROOT, "build", "bin", "shardc"))
    ap.add_argument("--out", default="/tmp/shardc-zoo")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    print("max relative error against PyTorch (training: against float64, with PyTorch's own "
          "float32 run beside it); compile and run seconds of the training PEF (3 steps)")
    print("%-20s %12s %12s %12s %9s %9s" % ("model", "inference", "training", "torch f32",
                                             "compile", "run"))
    for name, make, res in zoo():
        if args.models and name not in args.models:
            continue
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        torch.manual_seed(0)
        model = prepare(make())
        x = torch.randn(args.batch, 3, res, res)
        y = torch.randint(0, 10, (args.batch,))
        np.save(d + "/x.npy", x.numpy())
        np.save(d + "/y.npy", y.numpy())
        cells = []
        try:
            model.eval()
            torch.onnx.export(model, x, d + "/eval.onnx", input_names=["x"],
                              output_names=["logits"], opset_version=14)
            with torch.no_grad():
                want = model(x).numpy()
            shardc(args, "compile", d + "/eval.onnx", "--inference", "--pef-name", "eval",
                   "--output-folder", d)
            shardc(args, "run", "--pef", d + "/eval/eval.pef", "--input", "x=" + d + "/x.npy",
                   "--output-dir", d + "/eval-out")
            cells.append("%.1e" % rel(np.load(d + "/eval-out/logits.npy"), want))
        except Exception as e:  # report and go on with the next model
            cells.append("fails: %s" % str(e).splitlines()[0][:100])
        try:
            model.train()
            torch.onnx.export(model, x, d + "/train.onnx", input_names=["x"],
                              output_names=["logits"], opset_version=14,
                              training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False)
            want = torch_losses(model, x, y, torch.float64)
            f32 = torch_losses(model, x, y, torch.float32)
            tc = shardc(args, "compile", d + "/train.onnx", "--loss", "cross-entropy", "--labels",
                        "y", "--optimizer", "sgd", "--momentum", "0.9", "--learning-rate", "0.01",
                        "--pef-name", "train", "--output-folder", d)
            tr = shardc(args, "run", "--pef", d + "/train/train.pef", "--input",
                        "x=" + d + "/x.npy", "--input", "y=" + d + "/y.npy", "--steps", "3",
                        "--output-dir", d + "/train-out")
            got = np.load(d + "/train-out/loss.npy")
            err = lambda a: "%.1e" % float(np.max(np.abs(a - want) / np.abs(want)))
            cells += [err(got), err(f32), "%.1f" % tc, "%.1f" % tr]
        except Exception as e:
            cells.append("fails: %s" % str(e).splitlines()[0][:100])
        print("%-20s %s" % (name, " ".join("%12s" % c if len(c) < 13 else c for c in cells)),
              flush=True)


if __name__ == "__main__":
    main()
