#!/usr/bin/python3
"""How far apart two correct implementations of a BatchNorm network's training can land: trains
torchvision's ShuffleNetV2 x0.5 (10 classes, training mode) with SGD for a few steps and prints
the losses of PyTorch in float32 and float64, of PyTorch float64 with its weights perturbed by a
relative 1e-12 and 1e-7 (float32's rounding), and of shardc (compiled, --reference, and
--reference on the model exported in float64).

Small images and batches make these networks chaotic: a channel of four values normalized by
their own spread multiplies rounding errors, so where the perturbed runs move, float32 runs can
only agree with each other by chance; the float64 export through shardc then tells a real
difference from chaos.

Usage: /usr/bin/python3 bench/batchnorm_conditioning.py [--shardc BUILD/bin/shardc]
           [--res 32] [--batch 4] [--steps 3] [--lr 0.05] [--out DIR]
"""
import argparse
import copy
import os
import subprocess
import warnings

import numpy as np
import torch
import torch.nn.functional as F
import torchvision.models as tvm
from training_export import export_training

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def torch_losses(model, x, y, dtype, steps, lr, perturb=0.0):
    m = copy.deepcopy(model).to(dtype).train()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in m.parameters():
            p.mul_(1 + perturb * torch.randn(p.shape, generator=g, dtype=dtype))
    opt = torch.optim.SGD(m.parameters(), lr=lr)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(m(x.to(dtype)), y)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def shardc_losses(args, model, x, y, dtype, reference):
    d = os.path.join(args.out, str(dtype).split(".")[-1])
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(d + "/model.onnx"):
        export_training(copy.deepcopy(model).to(dtype).train(), x.to(dtype), d + "/model.onnx",
                        ["x"])
        np.save(d + "/x.npy", x.to(dtype).numpy())
        np.save(d + "/y.npy", y.numpy())
        subprocess.run([args.shardc, "compile", d + "/model.onnx", "--loss", "cross-entropy",
                        "--labels", "y", "--optimizer", "sgd", "--learning-rate", str(args.lr),
                        "--pef-name", "t", "--output-folder", d], check=True,
                       stdout=subprocess.DEVNULL)
    out = d + ("/reference" if reference else "/compiled")
    subprocess.run([args.shardc, "run", "--pef", d + "/t/t.pef", "--input", "x=" + d + "/x.npy",
                    "--input", "y=" + d + "/y.npy", "--steps", str(args.steps), "--output-dir", out,
                    *(["--reference"] if reference else [])], check=True, stdout=subprocess.DEVNULL)
    return np.load(out + "/loss.npy").tolist()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shardc", default=os.path.join(ROOT, "build", "bin", "shardc"))
    ap.add_argument("--res", type=int, default=32)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--out", default="/tmp/shardc-bn-conditioning")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = tvm.shufflenet_v2_x0_5(num_classes=10)
    x = torch.randn(args.batch, 3, args.res, args.res)
    y = torch.randint(0, 10, (args.batch,))
    rows = [
        ("PyTorch float64", torch_losses(model, x, y, torch.float64, args.steps, args.lr)),
        ("PyTorch float64, weights x(1+1e-12)",
         torch_losses(model, x, y, torch.float64, args.steps, args.lr, 1e-12)),
        ("PyTorch float64, weights x(1+1e-7)",
         torch_losses(model, x, y, torch.float64, args.steps, args.lr, 1e-7)),
        ("PyTorch float32", torch_losses(model, x, y, torch.float32, args.steps, args.lr)),
        ("shardc run (compiled, float32)", shardc_losses(args, model, x, y, torch.float32, False)),
        ("shardc run --reference (float32)",
         shardc_losses(args, model, x, y, torch.float32, True)),
        ("shardc run --reference (float64 export)",
         shardc_losses(args, model, x, y, torch.float64, True)),
    ]
    print("ShuffleNetV2 x0.5, %d images of %dx%d, SGD lr %g: loss per step"
          % (args.batch, args.res, args.res, args.lr))
    for name, losses in rows:
        print("%-42s %s" % (name, "  ".join("%.6f" % v for v in losses)))


if __name__ == "__main__":
    main()
