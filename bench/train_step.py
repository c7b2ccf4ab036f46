#!/usr/bin/env python3
"""Wall time of one training step (forward, backward, optimizer update) of the GPT fixture
(test/import/Inputs/gpt_loss) in shardc's reference interpreter next to PyTorch eager on the
same model, weights and batch, in the same run. Medians of --repeats.

shardc's per-step time is (time of `run --steps S+1`) - (time of `run --steps 1`), divided
by S, so process start, loading and writing outputs cancel out.

  bench/train_step.py [--build build] [--repeats 5] [--steps 10] [--optimizer sgd|adam]
"""
import argparse
import os
import subprocess
import tempfile

from benchutil import ROOT, add_common_args, median_time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    a = ap.parse_args()
    import torch
    import gen_onnx_fixtures as fx

    torch.set_num_threads(1)
    shardc = os.path.join(a.build, "bin", "shardc")
    d = os.path.join(ROOT, "test", "import", "Inputs", "gpt_loss")
    opt_flags = ["--optimizer", a.optimizer, "--learning-rate", "0.01"]
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([shardc, "compile", os.path.join(d, "model.onnx"), "-b", "2", "--output-folder",
                        out, "--pef-name", "g"] + opt_flags, check=True, stdout=subprocess.DEVNULL)
        run = lambda steps: subprocess.run(
            [shardc, "run", "--pef", os.path.join(out, "g", "g.pef"), "--steps", str(steps),
             "--input", "idx=" + os.path.join(d, "idx.npy"), "--input",
             "targets=" + os.path.join(d, "targets.npy"), "--output-dir", out],
            check=True, stdout=subprocess.DEVNULL)
        t1 = median_time(lambda: run(1), a.repeats)
        tn = median_time(lambda: run(a.steps + 1), a.repeats)
    shardc_step = (tn - t1) / a.steps

    m = fx.make_mlp_and_gpt(torch.Generator().manual_seed(1234))
    model = fx.GPTLoss(m["gpt"]).train()
    opt = (torch.optim.SGD if a.optimizer == "sgd" else torch.optim.Adam)(model.parameters(), lr=0.01)

    def torch_step():
        opt.zero_grad()
        loss = model(m["idx"], m["targets"])
        loss.backward()
        opt.step()

    torch_step()  # warm-up
    torch_time = median_time(lambda: [torch_step() for _ in range(a.steps)], a.repeats) / a.steps
    print(f"GPT fixture training step ({a.optimizer}), batch 2 x 8 tokens, 2 layers, d 32; "
          f"median of {a.repeats}, {a.steps} steps each")
    print(f"  shardc reference interpreter: {shardc_step * 1e3:8.2f} ms/step")
    print(f"  PyTorch eager (1 thread):     {torch_time * 1e3:8.2f} ms/step")
    print(f"  ratio shardc / PyTorch:       {shardc_step / torch_time:8.2f}x")


if __name__ == "__main__":
    main()
