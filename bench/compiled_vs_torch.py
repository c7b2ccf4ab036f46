#!/usr/bin/env python3
"""shardc's compiled runtime next to PyTorch eager on the same CPU, in one run: a GPT
(vocab 4096, d 256, 8 heads, 4 layers, seq 128, batch 8: forward and one Adam step), an
nn.TransformerEncoder (d 256, 8 heads, ff 1024, 4 layers, seq 128, batch 8, post-norm, ReLU:
forward and one Adam step on the mean squared error) and a torchvision ResNet-18 (112x112, batch 8:
forward and one SGD step); with --cases bert, the same encoder's Adam step at BERT-base's width
(d 768, 12 heads, ff 3072, 4 layers).

Each side runs with 1 and 2 threads; the table shows the median step of --repeats runs (each
the median of --steps steps, timed inside the process, so start-up and loading are left out)
and the best thread count of each side. PyTorch's BLAS (the libblas.so.3 it loaded) is
printed; the GEMM floor is the step's FLOPs (shardc's cost model; matmuls and convolutions
are nearly all of them) over the best sgemm rate measured here (PyTorch's 2048^3 sgemm, 1 or 2
threads). Peak memory is each process's max RSS minus the bytes of the weights it loads. The
models are exported at opset 17 (LayerNormalization is one op); neither side's OpenMP wait
policy is changed.

  bench/compiled_vs_torch.py [--build build] [--repeats 5] [--steps 10]
                             [--cases gpt,encoder,resnet18,bert]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from benchutil import add_common_args, max_rss_run

GPT = dict(vocab=4096, d=256, heads=8, block=128, layers=4)
BATCH = 8


def gpt_model(training):
    import torch
    import gen_onnx_fixtures as fx

    torch.manual_seed(0)
    gpt = fx.GPT(GPT["vocab"], GPT["d"], GPT["heads"], GPT["block"], GPT["layers"])
    return fx.GPTLoss(gpt) if training else gpt


def with_loss(net, loss):
    """`net` whose forward(x, y) returns loss(net(x), y): the model a training step exports."""
    import torch

    class WithLoss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = net

        def forward(self, x, y):
            return loss(self.m(x), y)

    return WithLoss()


ENCODER = dict(d=256, heads=8, ff=1024, layers=4, seq=128)
# The same encoder at BERT-base's width (4 of its 12 layers).
BERT = dict(d=768, heads=12, ff=3072, layers=4, seq=128)


def encoder_model(training, shape=ENCODER):
    import torch

    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=shape["d"], nhead=shape["heads"], dim_feedforward=shape["ff"],
        dropout=0.0, batch_first=True)
    net = torch.nn.TransformerEncoder(layer, num_layers=shape["layers"],
                                      enable_nested_tensor=False)
    with torch.no_grad():  # the deep-copied layers would start equal
        for p in net.parameters():
            p.add_(0.01 * torch.randn(p.shape))
    # The mean squared error spelled out: PyTorch 1.13 cannot export mse_loss to ONNX.
    return with_loss(net, lambda out, y: ((out - y) ** 2).mean()) if training else net


def resnet_model(training):
    import torch
    import torchvision

    torch.manual_seed(0)
    net = torchvision.models.resnet18(num_classes=1000)
    return with_loss(net, torch.nn.functional.cross_entropy) if training else net


def inputs(case):
    import torch

    g = torch.Generator().manual_seed(1)
    if case.startswith("gpt"):
        idx = torch.randint(0, GPT["vocab"], (BATCH, GPT["block"]), generator=g)
        return {"idx": idx, "targets": torch.randint(0, GPT["vocab"], (BATCH, GPT["block"]),
                                                     generator=g)}
    if case.startswith(("encoder", "bert")):
        e = BERT if case.startswith("bert") else ENCODER
        shape = (BATCH, e["seq"], e["d"])
        return {"x": torch.randn(*shape, generator=g), "y": torch.randn(*shape, generator=g)}
    return {"x": torch.randn(BATCH, 3, 112, 112, generator=g),
            "y": torch.randint(0, 1000, (BATCH,), generator=g)}


CASES = {  # name: (model, training, optimizer, input names of the forward)
    "gpt-forward": (gpt_model, False, None, ["idx"]),
    "gpt-adam": (gpt_model, True, "adam", ["idx", "targets"]),
    "encoder-forward": (encoder_model, False, None, ["x"]),
    "encoder-adam": (encoder_model, True, "adam", ["x", "y"]),
    "bert-adam": (lambda training: encoder_model(training, BERT), True, "adam", ["x", "y"]),
    "resnet18-forward": (resnet_model, False, None, ["x"]),
    "resnet18-sgd": (resnet_model, True, "sgd", ["x", "y"]),
}


def torch_worker(case, threads, steps):
    """Runs in a child process: times `steps` steps of PyTorch eager, prints JSON."""
    import time

    import torch

    torch.set_num_threads(threads)
    make, training, opt, names = CASES[case]
    model = make(training)
    feed = inputs(case)
    args = [feed[n] for n in names]
    times = []
    if training:
        model.eval() if case.startswith("resnet") else model.train()
        o = (torch.optim.Adam(model.parameters(), lr=1e-3) if opt == "adam"
             else torch.optim.SGD(model.parameters(), lr=1e-3))
        for _ in range(steps + 1):
            t0 = time.perf_counter()
            o.zero_grad(set_to_none=True)
            loss = model(*args)
            loss.backward()
            o.step()
            times.append(time.perf_counter() - t0)
    else:
        model.eval()
        with torch.no_grad():
            for _ in range(steps + 1):
                t0 = time.perf_counter()
                model(*args)
                times.append(time.perf_counter() - t0)
    blas = sorted({line.split()[-1] for line in open("/proc/self/maps")
                   if re.search(r"lib(open)?blas", line)})
    weights = sum(p.numel() * 4 for p in model.parameters())
    print(json.dumps({"step": statistics.median(times[1:]), "blas": blas, "weights": weights}))


def torch_sgemm_rate(threads):
    import time

    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    a @ b
    t0 = time.perf_counter()
    for _ in range(3):
        a @ b
    return 3 * 2 * 2048 ** 3 / (time.perf_counter() - t0)


def export(case, folder):
    import warnings

    import torch

    warnings.simplefilter("ignore")
    make, training, _, names = CASES[case]
    model = make(training)
    feed = inputs(case)
    path = os.path.join(folder, case + ".onnx")
    mode = torch.onnx.TrainingMode.TRAINING if training and not case.startswith("resnet") \
        else torch.onnx.TrainingMode.EVAL
    model.eval()
    torch.onnx.export(model, tuple(feed[n] for n in names), path, input_names=names,
                      output_names=["loss" if training else "out"], opset_version=17,
                      training=mode, do_constant_folding=False)
    files = []
    import numpy as np
    for n in names:
        f = os.path.join(folder, f"{case}-{n}.npy")
        np.save(f, feed[n].numpy())
        files += ["--input", f"{n}={f}"]
    return path, files


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--cases", default="gpt,resnet18")
    ap.add_argument("--torch-worker", nargs=3, metavar=("CASE", "THREADS", "STEPS"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--export-worker", nargs=2, metavar=("CASE", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--sgemm-worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    # PyTorch only ever runs in child processes: a child forked from a parent holding PyTorch
    # would start with the parent's resident pages and spoil every max RSS measured.
    if a.torch_worker:
        torch_worker(a.torch_worker[0], int(a.torch_worker[1]), int(a.torch_worker[2]))
        return
    if a.export_worker:
        print(json.dumps(export(*a.export_worker)))
        return
    if a.sgemm_worker:
        print(max(torch_sgemm_rate(t) for t in (1, 2)))
        return
    shardc = os.path.join(a.build, "bin", "shardc")
    env = dict(os.environ)
    if "avx512f" in open("/proc/cpuinfo").read():
        env.setdefault("OPENBLAS_CORETYPE", "SkylakeX")  # OpenBLAS 0.3.21 misdetects it
    cases = [c for c in CASES if c.split("-")[0] in a.cases.split(",")]
    rows, blas = [], None
    me = [sys.executable, os.path.abspath(__file__)]
    peak = float(subprocess.run(me + ["--sgemm-worker"], check=True, capture_output=True,
                                text=True, env=env).stdout)
    with tempfile.TemporaryDirectory() as out:
        for case in cases:
            model, files = json.loads(subprocess.run(
                me + ["--export-worker", case, out], check=True, capture_output=True,
                text=True).stdout.strip().splitlines()[-1])
            _, training, opt, _ = CASES[case]
            flags = ["--inference"] if not training else ["--optimizer", opt,
                                                          "--learning-rate", "0.001"]
            compiled = subprocess.run([shardc, "compile", model, "--output-folder", out,
                                       "--pef-name", case] + flags, check=True,
                                      capture_output=True, text=True).stdout
            gflop = float(re.search(r"([0-9.]+) GFLOP per device", compiled).group(1))
            pef = os.path.join(out, case, case + ".pef")
            info = json.loads(subprocess.run([shardc, "inspect", "--json", pef], check=True,
                                             capture_output=True, text=True).stdout)
            weights = info["parameter_bytes"]
            side = {"shardc": {}, "torch": {}}
            # Configurations: threads 1 and 2, OpenMP waiting as is and passive; the runs of
            # both sides interleave, so a noisy neighbour hits both alike.
            for _ in range(a.repeats):
                for threads in (1, 2):
                    for policy in ("spin", "passive"):
                        e = dict(env, OMP_WAIT_POLICY="PASSIVE") if policy == "passive" else env
                        o, rss = max_rss_run([shardc, "run", "--pef", pef, "--steps",
                                              str(a.steps + 1), "--threads", str(threads),
                                              "--stats", "--output-dir", out] + files, e)
                        step = float(re.search(r"median step ([0-9.]+) s", o).group(1))
                        side["shardc"].setdefault((threads, policy), []).append(
                            (step, rss - weights))
                        o, rss = max_rss_run(me + ["--torch-worker", case, str(threads),
                                                   str(a.steps)], e)
                        r = json.loads(o)
                        blas = r["blas"]
                        side["torch"].setdefault((threads, policy), []).append(
                            (r["step"], rss - r["weights"]))
            best = {}
            for who, by in side.items():
                med = {c: statistics.median(s for s, _ in v) for c, v in by.items()}
                c = min(med, key=med.get)
                per_threads = [min(med[(t, p)] for p in ("spin", "passive")) for t in (1, 2)]
                best[who] = (per_threads[0], per_threads[1], c, med[c],
                             statistics.median(m for _, m in by[c]))
            rows.append((case, gflop, best))
    print(f"PyTorch BLAS: {', '.join(blas) or 'none found'}; OPENBLAS_CORETYPE="
          f"{env.get('OPENBLAS_CORETYPE', '(unset)')}; {os.cpu_count()} cores; peak sgemm "
          f"{peak / 1e9:.0f} GFLOP/s (PyTorch 2048^3, best of 1 and 2 threads)")
    print("1t/2t: best of the two OpenMP wait policies at that thread count; best: "
          + "; ".join(f"{case} shardc {b['shardc'][2]}, torch {b['torch'][2]}"
                      for case, _, b in rows))
    print(f"medians of {a.repeats} runs x {a.steps} steps; batch {BATCH}")
    print(f"{'case':18} {'GFLOP':>7} {'floor ms':>8} | {'shardc 1t':>9} {'2t':>7} | "
          f"{'torch 1t':>9} {'2t':>7} | {'speedup':>7} {'vs floor':>8} | "
          f"{'shardc MiB':>10} {'torch MiB':>9}")
    for case, gflop, best in rows:
        s, t = best["shardc"], best["torch"]
        floor = gflop * 1e9 / peak
        print(f"{case:18} {gflop:7.2f} {floor * 1e3:8.1f} | {s[0] * 1e3:9.1f} {s[1] * 1e3:7.1f} | "
              f"{t[0] * 1e3:9.1f} {t[1] * 1e3:7.1f} | {t[3] / s[3]:7.2f} {s[3] / floor:8.2f} | "
              f"{s[4] / 2**20:10.1f} {t[4] / 2**20:9.1f}")
    print("speedup: PyTorch's best step over shardc's best; vs floor: shardc's best over the "
          "GEMM floor; memory: max RSS minus the weights, at each side's best thread count")


if __name__ == "__main__":
    main()
