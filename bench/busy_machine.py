#!/usr/bin/env python3
"""shardc and ONNX Runtime on an idle machine and beside one busy process, in one run.

For each case the script times a step on the idle machine, then starts `yes > /dev/null` (one
process that keeps one core busy), times the step again, and stops it; the table shows both
medians and the slowdown. shardc runs as users run it (`shardc run --stats`, the median step of
--steps steps, start-up left out: its default waits spin about 20 us, then sleep), and again
with libgomp's own default (GOMP_SPINCOUNT=300000: a waiting thread spins for milliseconds) and
with OMP_WAIT_POLICY=passive (it sleeps at once), to show what the default chose. ONNX Runtime (onnxruntime-node, CPU provider, graph optimization
"all") runs the forward cases with 1 and 2 intra-op threads; the faster is shown. Cases: the
GPT of bench/compiled_vs_torch.py (vocab 4096, d 256, 4 layers, seq 128, batch 8) forward and
Adam step, and torchvision's ResNet-50 forward at batch 1, 224x224; random weights.

  bench/busy_machine.py [--build build] [--steps 20] [--cases gpt-forward,resnet50-forward,gpt-adam]
                        [--ort DIR]   (DIR/node_modules/onnxruntime-node; default: ./node_modules)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from benchutil import ROOT, add_common_args, beside_busy_process
import compiled_vs_torch as cvt


def resnet50_model(training):
    import torch
    import torchvision

    torch.manual_seed(0)
    return torchvision.models.resnet50(num_classes=1000)


def export_resnet50(folder):
    import numpy as np
    import torch

    path = os.path.join(folder, "resnet50-forward.onnx")
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    model = resnet50_model(False).eval()
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["out"],
                      opset_version=17, do_constant_folding=False)
    f = os.path.join(folder, "resnet50-forward-x.npy")
    np.save(f, x.numpy())
    return path, ["--input", f"x={f}"]


def shardc_step(args, pef, inputs, env_extra):
    env = dict(os.environ, **env_extra)
    out = subprocess.run([os.path.join(args.build, "bin", "shardc"), "run", "--pef", pef,
                          "--steps", str(args.steps), "--stats", "--output-dir",
                          os.path.dirname(pef) + "/results"] + inputs,
                         check=True, capture_output=True, text=True, env=env).stdout
    return float(re.search(r"median step ([0-9.e-]+) s", out).group(1))


def ort_step(args, model, inputs):
    """Best median of 1 and 2 threads, and ONNX Runtime's version; None if not installed."""
    node_path = os.path.join(args.ort, "node_modules")
    if not os.path.isdir(os.path.join(node_path, "onnxruntime-node")):
        return None, "not installed"
    specs = [inputs[i + 1] for i in range(0, len(inputs), 2)]
    best, version = None, ""
    for threads in (1, 2):
        out = subprocess.run(["node", os.path.join(ROOT, "bench", "ort_run.js"), model,
                              str(threads), str(args.steps)] + specs, check=True,
                             capture_output=True, text=True,
                             env=dict(os.environ, NODE_PATH=node_path)).stdout
        r = json.loads(out)
        version = r["version"]
        if best is None or r["median_ms"] < best:
            best = r["median_ms"]
    return best / 1e3, version


def measure(args, case, pef, model, inputs):
    """{column: seconds} for the machine as it is now."""
    row = {"shardc": shardc_step(args, pef, inputs, {}),
           "spin-4ms": shardc_step(args, pef, inputs, {"GOMP_SPINCOUNT": "300000"}),
           "passive": shardc_step(args, pef, inputs, {"OMP_WAIT_POLICY": "passive"})}
    if not case.endswith("adam"):
        row["ort"], args.ort_version = ort_step(args, model, inputs)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--cases", default="gpt-forward,resnet50-forward,gpt-adam")
    ap.add_argument("--ort", default=os.getcwd())
    args = ap.parse_args()
    args.ort_version = "not installed"
    cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read())
    print(f"CPU: {cpu.group(1) if cpu else '?'}, {os.cpu_count()} cores; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            if case == "resnet50-forward":
                model, inputs = export_resnet50(tmp)
            else:
                model, inputs = cvt.export(case, tmp)
            training = cvt.CASES[case][1] if case in cvt.CASES else False
            flags = ["--optimizer", cvt.CASES[case][2]] if training else ["--inference"]
            subprocess.run([os.path.join(args.build, "bin", "shardc"), "compile", model,
                            "--pef-name", case, "--output-folder", tmp] + flags,
                           check=True, stdout=subprocess.DEVNULL)
            pef = os.path.join(tmp, case, case + ".pef")
            idle = measure(args, case, pef, model, inputs)
            busy = beside_busy_process(lambda: measure(args, case, pef, model, inputs))
            rows.append((case, idle, busy))
    print(f"ONNX Runtime: {args.ort_version}; shardc: its default, libgomp's default spin "
          "(spin-4ms), OMP_WAIT_POLICY=passive")
    print(f"{'case':18} {'column':8} {'idle ms':>9} {'busy ms':>9} {'slowdown':>9}")
    for case, idle, busy in rows:
        for col in idle:
            if idle[col] is None:
                print(f"{case:18} {col:8} {'not installed':>29}")
                continue
            print(f"{case:18} {col:8} {idle[col] * 1e3:9.1f} {busy[col] * 1e3:9.1f} "
                  f"{busy[col] / idle[col]:8.2f}x")


if __name__ == "__main__":
    sys.exit(main())
