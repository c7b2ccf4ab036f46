#!/usr/bin/env python3
"""Wall time of `shardc compile --inference` and `shardc run` for the PyTorch-exported
fixtures under test/import/Inputs, median of --repeats runs each (whole processes, so
process start, file I/O and checks are included).

  bench/compile_run.py [--build build] [--repeats 5] [--models gpt,mlp,...]
"""
import argparse
import glob
import os
import tempfile

from benchutil import ROOT, add_common_args, median_time, run_quiet

FIXTURES = os.path.join(ROOT, "test", "import", "Inputs")


def timed(cmd, repeats):
    return median_time(lambda: run_quiet(cmd), repeats)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--models", default="mlp,gpt,gpt_opset17,gpt_loss,transformer_encoder,resnet")
    a = ap.parse_args()
    shardc = os.path.join(a.build, "bin", "shardc")
    import numpy as np

    print(f"median of {a.repeats} runs, wall time in ms")
    print(f"{'model':28} {'compile':>9} {'run':>9} {'inspect':>9}")
    with tempfile.TemporaryDirectory() as out:
        for m in a.models.split(","):
            d = os.path.join(FIXTURES, m)
            inputs = [f for f in sorted(glob.glob(os.path.join(d, "*.npy")))
                      if not os.path.basename(f).startswith("expected_") and not f.endswith(".b16.npy")]
            batch = np.load(inputs[0]).shape[0]
            compile_cmd = [shardc, "compile", os.path.join(d, "model.onnx"), "--inference", "-b",
                           str(batch), "--output-folder", out, "--pef-name", m]
            t_compile = timed(compile_cmd, a.repeats)
            pef = os.path.join(out, m, m + ".pef")
            run_cmd = [shardc, "run", "--pef", pef, "--output-dir", os.path.join(out, m, "res")]
            for f in inputs:
                run_cmd += ["--input", f"{os.path.basename(f)[:-4]}={f}"]
            t_run = timed(run_cmd, a.repeats)
            t_inspect = timed([shardc, "inspect", pef], a.repeats)
            print(f"{m:28} {t_compile * 1e3:9.1f} {t_run * 1e3:9.1f} {t_inspect * 1e3:9.1f}")


if __name__ == "__main__":
    main()
