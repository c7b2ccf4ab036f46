#!/usr/bin/python3
"""Imports, runs and trains small random-weight instances of every torchvision classification
family and of PyTorch's own sequence models (nn.Transformer with masks, nn.LSTM, nn.GRU) with
shardc, and prints per model the error against PyTorch: the inference output (eval mode,
exported with PyTorch's defaults), the losses of 3 optimizer steps (training mode, exported
for training: BatchNorm normalizes with the batch's statistics) and BatchNorm's running
statistics after them; the same training PEF run through the reference interpreter
(`--reference`) against the compiled run, every step's loss and the weights after the steps;
and the compile and run seconds of the training PEF.

The CNNs train with SGD and momentum 0.9, the transformers and recurrent models with AdamW
(weight decay 0.01); dropout and stochastic depth are off so that both sides compute the same
numbers, and BatchNorm's running statistics are first estimated on 4 random batches so that
eval-mode outputs depend on the input. The training reference is PyTorch in float64; the
table also gives PyTorch's own float32 run against it, the error any float32 implementation
can be expected to reach.

Each instance is chosen to be well conditioned in float32: a 1e-7 relative perturbation of
its weights moves PyTorch's float64 losses by less than about 1e-6. At these small sizes deep
batch-normalized networks explode their gradients at initialization (MobileNet v2 at 32x32,
batch 8: the first convolution's gradient reaches 2e3, and step 3 loses 1.7732 in float32,
1.6808 in float64), so the residual families start with the last BatchNorm of each block
zero-initialized (torchvision's zero_init_residual), the deepest families are built from
their own blocks at a smaller depth, and the ones without residual paths (GoogLeNet,
Inception, and MNASNet's first blocks) train at a learning rate small enough for the three
steps to stay smooth (their losses still fall by 7% to 55%).

Usage: /usr/bin/python3 bench/model_zoo.py [--shardc BUILD/bin/shardc] [--out DIR]
           [--max-rel R] [--no-reference] [--keep] [MODEL ...]
With --max-rel, exits 1 when an error exceeds R (the weights against the reference: 100 R) or
a model fails (the zoo tests use 1e-4). A model's folder under DIR (its ONNX files, PEFs and
saved weights: 2.3 GB for Wide ResNet-50) is removed once its row passes, unless --keep; the
folders of failing models stay for a look.
"""
import argparse
import copy
import os
import shutil
import subprocess
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as tvm
from torchvision.models.efficientnet import EfficientNet, MBConvConfig
from torchvision.models.regnet import BlockParams
from torchvision.models.resnet import Bottleneck
from torchvision.ops import StochasticDepth
from training_export import export_training

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CLASSES = 10


class Entry:
    """A zoo model: how to build it, its inputs and labels for a batch, and its optimizer."""

    def __init__(self, name, make, inputs, labels, batch=8, optimizer="sgd", lr=0.01):
        self.name, self.make, self.inputs, self.labels = name, make, inputs, labels
        self.batch, self.optimizer, self.lr = batch, optimizer, lr


def image(name, make, res, **kw):
    return Entry(name, make, lambda b: {"x": torch.randn(b, 3, res, res)},
                 lambda b: torch.randint(0, CLASSES, (b,)), **kw)


def without(model, *names):
    """The model with the named submodules (shape-preserving blocks) replaced by identity."""
    for n in names:
        setattr(model, n, nn.Identity())
    return model


def zero_last_norms(model, block_type):
    """Zero-initializes the last BatchNorm of every residual block (zero_init_residual for the
    families whose constructor lacks it)."""
    for m in model.modules():
        if type(m).__name__ == block_type and getattr(m, "apply_residual", True):
            norms = [n for n in m.modules() if isinstance(n, nn.BatchNorm2d)]
            nn.init.zeros_(norms[-1].weight)
    return model


class Seq2Seq(nn.Module):
    """nn.Transformer (encoder-decoder) over token embeddings: a causal target mask (a buffer,
    as models keep it) and source padding masks (token 0) on the encoder and the memory."""

    def __init__(self, vocab=32, d=32, heads=2, layers=1, ff=64, seq=8):
        super().__init__()
        self.src_emb, self.tgt_emb = nn.Embedding(vocab, d), nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.1)
        self.tf = nn.Transformer(d, heads, layers, layers, ff, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d, vocab)
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(seq))

    def forward(self, src, tgt):
        pad = src == 0
        h = self.tf(self.src_emb(src) + self.pos, self.tgt_emb(tgt) + self.pos,
                    tgt_mask=self.causal, src_key_padding_mask=pad, memory_key_padding_mask=pad)
        return self.head(h)


def tokens(b):
    src = torch.randint(1, 32, (b, 8))
    src[1::2, 5:] = 0  # every other sequence padded after 5 tokens
    return {"src": src, "tgt": torch.randint(1, 32, (b, 8))}


class Recurrent(nn.Module):
    """A 2-layer nn.LSTM or nn.GRU over a sequence, classified from the last step."""

    def __init__(self, cell, bidirectional):
        super().__init__()
        self.rnn = cell(16, 32, num_layers=2, batch_first=True, bidirectional=bidirectional)
        self.head = nn.Linear(64 if bidirectional else 32, CLASSES)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


def sequence(name, make, inputs, labels):
    return Entry(name, make, inputs, labels, batch=4, optimizer="adamw", lr=1e-3)


def zoo():
    c = CLASSES
    small_mbconv = [MBConvConfig(1, 3, 1, 32, 16, 1), MBConvConfig(6, 3, 2, 16, 24, 2),
                    MBConvConfig(6, 5, 2, 24, 40, 2), MBConvConfig(6, 3, 2, 40, 80, 2)]
    return [
        image("resnet18", lambda: tvm.resnet18(num_classes=c, zero_init_residual=True), 32),
        image("resnext50_32x4d",
              lambda: tvm.resnext50_32x4d(num_classes=c, zero_init_residual=True), 32),
        image("wide_resnet50_2",
              lambda: tvm.wide_resnet50_2(num_classes=c, zero_init_residual=True), 32),
        image("mobilenet_v2 (4 stages)",
              lambda: tvm.MobileNetV2(c, inverted_residual_setting=[
                  [1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 2, 2], [6, 64, 2, 2]]), 32),
        image("mobilenet_v3_small", lambda: tvm.mobilenet_v3_small(num_classes=c), 32),
        image("efficientnet (4 stages)",
              lambda: EfficientNet(small_mbconv, dropout=0.0, num_classes=c), 32),
        image("regnet_y (depth 4)",
              lambda: tvm.RegNet(BlockParams.from_init_params(
                  depth=4, w_0=24, w_a=24.48, w_m=2.54, group_width=8, se_ratio=0.25),
                  num_classes=c), 32),
        image("squeezenet1_1", lambda: tvm.squeezenet1_1(num_classes=c), 64),
        image("shufflenet_v2 (1 unit/stage)",
              lambda: tvm.ShuffleNetV2([1, 1, 1], [24, 48, 96, 192, 256], num_classes=c), 32),
        image("densenet (4x2 layers)",
              lambda: tvm.DenseNet(12, (2, 2, 2, 2), 24, num_classes=c), 32),
        image("googlenet (no 4b 4c 5a)",
              lambda: without(tvm.googlenet(num_classes=c, aux_logits=False, init_weights=False),
                              "inception4b", "inception4c", "inception5a"), 64, batch=16,
              lr=3e-5),
        image("inception_v3 (no 5d 6c-e 7c)",
              lambda: without(tvm.inception_v3(num_classes=c, aux_logits=False,
                                               init_weights=False),
                              "Mixed_5d", "Mixed_6c", "Mixed_6d", "Mixed_6e", "Mixed_7c"), 75,
              batch=16, lr=1e-5),
        image("mnasnet0_5",
              lambda: zero_last_norms(tvm.mnasnet0_5(num_classes=c), "_InvertedResidual"), 64,
              batch=16, lr=3e-5),
        image("convnext_tiny", lambda: tvm.convnext_tiny(num_classes=c), 32),
        image("vit", lambda: tvm.VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                                                   num_heads=2, hidden_dim=32, mlp_dim=64,
                                                   num_classes=c), 32,
              optimizer="adamw", lr=1e-3),
        image("swin_t", lambda: tvm.swin_t(num_classes=c), 64, optimizer="adamw", lr=1e-3),
        sequence("transformer", Seq2Seq, tokens, lambda b: torch.randint(0, 32, (b, 8))),
        sequence("lstm", lambda: Recurrent(nn.LSTM, False), lambda b: {"x": torch.randn(b, 6, 16)},
                 lambda b: torch.randint(0, c, (b,))),
        sequence("gru (bidirectional)", lambda: Recurrent(nn.GRU, True),
                 lambda b: {"x": torch.randn(b, 6, 16)}, lambda b: torch.randint(0, c, (b,))),
    ]


def prepare(model, inputs):
    """Dropout and stochastic depth off, zero-initialized heads (ViT's) given small random
    weights, BatchNorm's running statistics estimated from 4 random batches."""
    for m in model.modules():
        if isinstance(m, (nn.Dropout, StochasticDepth)):
            m.p = 0.0
        if isinstance(m, nn.Linear) and m.weight.abs().max() == 0:
            nn.init.normal_(m.weight, std=0.1)
    if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        model.train()
        with torch.no_grad():
            for _ in range(4):
                model(*[torch.randn_like(t) for t in inputs.values()])
    return model


def torch_losses(entry, model, inputs, labels, dtype, steps=3):
    """PyTorch's losses over the steps, and its running statistics after them (float64)."""
    model = copy.deepcopy(model).to(dtype).train()
    if entry.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=entry.lr, momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=entry.lr, weight_decay=0.01)
    args = [t.to(dtype) if t.is_floating_point() else t for t in inputs.values()]
    out = []
    for _ in range(steps):
        opt.zero_grad()
        logits = model(*args)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
        loss.backward()
        opt.step()
        out.append(loss.item())
    stats = {k: v.double().numpy() for k, v in model.state_dict().items()
             if k.endswith(("running_mean", "running_var"))}
    return np.array(out), stats


def optimizer_flags(entry):
    if entry.optimizer == "sgd":
        return ["--optimizer", "sgd", "--momentum", "0.9", "--learning-rate", str(entry.lr)]
    return ["--optimizer", "adamw", "--learning-rate", str(entry.lr), "--weight-decay", "0.01"]


def shardc(args, *cmd):
    t = time.perf_counter()
    r = subprocess.run([args.shardc, *cmd], capture_output=True, text=True)
    if r.returncode:
        lines = r.stderr.strip().splitlines() or ["exit %d" % r.returncode]
        raise RuntimeError(lines[-1][:160])
    return time.perf_counter() - t


def rel(got, want, scale=None):
    """max |got - want| over `scale` (default: max |want|)."""
    scale = float(np.max(np.abs(want))) if scale is None else scale
    return float(np.max(np.abs(got.astype(np.float64) - want))) / (scale if scale else 1.0)


def stats_error(got, want):
    """The running statistics' error: a mean at the scale of the values it averages (its
    variance's square root), since a channel's mean may be zero in exact arithmetic."""
    err = 0.0
    for k, v in want.items():
        scale = float(np.sqrt(np.max(want[k[:-4] + "var"]))) if k.endswith("mean") else None
        err = max(err, rel(got[k], v, scale))
    return err


def reference_errors(entry, compiled, reference):
    """Compiled against reference: every step's loss relative to its largest, and the weights
    after the steps, each relative to its largest magnitude or to the learning rate where that
    is larger (a bias before a BatchNorm has a zero true gradient and holds float32 noise);
    Adam's pass within a quarter of the learning rate, and where an element's gradient
    (the root of its second moment in the reference) is below 1e-6 of the model's largest,
    Adam moves it by the ratio of two float32 noises, so it is not compared. Deep networks cancel large terms in some gradients (they explode their
    gradients at initialization), and float32 accumulation misses those by up to percents in
    any implementation, PyTorch's included (GoogLeNet's momentum buffers: 6.6% off float64 in
    both), while the reference accumulates in double: the weights are held to 100 times the
    losses' bound, which a wrong gradient, off by its own size, still misses by far."""
    weights = 0.0
    moments = {k[:-len(".exp_avg_sq")]: np.sqrt(v) for k, v in reference["state"].items()
               if k.endswith(".exp_avg_sq")}
    top = max([float(np.max(m)) for m in moments.values() if m.size] or [0.0])
    for k, v in reference["weights"].items():
        diff = np.abs(compiled["weights"][k].astype(np.float64) - v)
        if k in moments:  # Adam: only where the gradient is above float32 noise
            diff = diff[moments[k] >= 1e-6 * top]
        e = float(np.max(diff)) if diff.size else 0.0
        if not (entry.optimizer != "sgd" and e <= entry.lr / 4):
            weights = max(weights, e / max(float(np.max(np.abs(v))), entry.lr))
    return rel(compiled["loss"], reference["loss"]), weights


def check(args, entry):
    """The model's row (inference error, training error, PyTorch f32 error, compile s, run s;
    None where it failed) and its failures."""
    d = os.path.join(args.out, entry.name.split()[0])
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(0)
    inputs = entry.inputs(entry.batch)
    labels = entry.labels(entry.batch)
    model = prepare(entry.make(), inputs)
    flags = []
    for k, v in inputs.items():
        np.save("%s/%s.npy" % (d, k), v.numpy())
        flags += ["--input", "%s=%s/%s.npy" % (k, d, k)]
    np.save(d + "/y.npy", labels.numpy())
    names, args_ = list(inputs), tuple(inputs.values())
    row, failures = [None] * 8, []
    try:
        model.eval()
        torch.onnx.export(model, args_, d + "/eval.onnx", input_names=names,
                          output_names=["logits"], opset_version=14)
        with torch.no_grad():
            want = model(*args_).numpy()
        shardc(args, "compile", d + "/eval.onnx", "--inference", "--pef-name", "eval",
               "--output-folder", d)
        shardc(args, "run", "--pef", d + "/eval/eval.pef", *flags, "--output-dir", d + "/eval-out")
        row[0] = rel(np.load(d + "/eval-out/logits.npy"), want)
    except Exception as e:  # report and go on
        failures.append("inference fails: %s" % str(e).splitlines()[0][:100])
    try:
        model.train()
        export_training(model, args_, d + "/train.onnx", names)
        want, want_stats = torch_losses(entry, model, inputs, labels, torch.float64)
        f32, _ = torch_losses(entry, model, inputs, labels, torch.float32)
        tc = shardc(args, "compile", d + "/train.onnx", "--loss", "cross-entropy", "--labels", "y",
                    *optimizer_flags(entry), "--pef-name", "train", "--output-folder", d)
        runs, tr = {}, None
        for how in ("compiled", "reference")[:1 if args.no_reference else 2]:
            out = "%s/train-%s" % (d, how)
            t = shardc(args, "run", "--pef", d + "/train/train.pef", *flags, "--input",
                       "y=" + d + "/y.npy", "--steps", "3", "--output-dir", out,
                       "--save-weights", out + "/w.npz", "--save-state", out + "/s.npz",
                       *(["--reference"] if how == "reference" else []))
            tr = tr or t
            runs[how] = {"loss": np.load(out + "/loss.npy"), "weights": dict(np.load(out + "/w.npz")),
                         "state": dict(np.load(out + "/s.npz"))}
        got = runs["compiled"]["loss"]
        err = lambda a: float(np.max(np.abs(a - want) / np.abs(want)))
        stats = stats_error(runs["compiled"]["state"], want_stats) if want_stats else None
        against = (None, None) if args.no_reference else reference_errors(
            entry, runs["compiled"], runs["reference"])
        row[1:] = [err(got), err(f32), stats, *against, tc, tr]
    except Exception as e:
        failures.append("training fails: %s" % str(e).splitlines()[0][:100])
    return row, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shardc", default=os.path.join(ROOT, "build", "bin", "shardc"))
    ap.add_argument("--out", default="/tmp/shardc-zoo")
    ap.add_argument("--max-rel", type=float, help="exit 1 when an error exceeds this")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the --reference run (the sanitized build's tests: the interpreter "
                         "takes minutes there on the larger models)")
    ap.add_argument("--keep", action="store_true",
                    help="keep every model's folder under --out (default: only failing ones)")
    ap.add_argument("models", nargs="*", help="first words of the names (default: all)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    entries = [e for e in zoo() if not args.models or e.name.split()[0] in args.models]
    unknown = set(args.models) - {e.name.split()[0] for e in zoo()}
    if unknown:
        sys.exit("model_zoo.py: unknown model(s) %s" % ", ".join(sorted(unknown)))
    print("max relative error against PyTorch (training: 3 steps against float64, with "
          "PyTorch's own float32 run beside it; BatchNorm's running statistics after them); "
          "compiled against --reference (every step's loss; the weights, held to 100 times "
          "the bound); compile and run seconds of the training PEF")
    print("%-30s %10s %10s %10s %10s %10s %10s %8s %6s"
          % ("model", "inference", "training", "torch f32", "statistics", "ref loss",
             "ref weight", "compile", "run"))
    bad = []
    for e in entries:
        row, failures = check(args, e)
        cells = [("%.1e" if i < 6 else "%.1f") % v if v is not None else "-"
                 for i, v in enumerate(row)]
        cells = [c.rjust(w) for c, w in zip(cells, (10, 10, 10, 10, 10, 10, 8, 6))]
        print("%-30s %s %s" % (e.name, " ".join(cells), "; ".join(failures)), flush=True)
        checked = [row[0], row[1], row[3] or 0.0, row[4] or 0.0, (row[5] or 0.0) / 100]
        failed = failures or (args.max_rel is not None and max(checked) > args.max_rel)
        if failed and args.max_rel is not None:
            bad.append(e.name)
        if not failed and not args.keep:
            shutil.rmtree(os.path.join(args.out, e.name.split()[0]))
    if bad:
        sys.exit("model_zoo.py: over --max-rel %g or failing: %s" % (args.max_rel, ", ".join(bad)))


if __name__ == "__main__":
    main()
