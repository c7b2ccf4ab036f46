#!/usr/bin/python3
"""Regenerates test/train/Inputs/gpt_epochs/: PyTorch's training loop over a dataset, for
checking `shardc run --data ... --epochs 2 --shuffle`.

The model and weights are the GPT of test/import/Inputs/gpt_loss (rebuilt by
gen_onnx_fixtures.make_mlp_and_gpt, checked against that fixture's loss); the dataset is 43
samples of random tokens (idx) and next-token targets, so that a batch of 2 gives 21 batches
per epoch and one sample is dropped. Each epoch visits the samples in shardc's documented
order (README, `--shuffle`): a Fisher-Yates shuffle driven by SplitMix64 seeded with
data_seed + 0x9E3779B97F4A7C15 * (epoch + 1), reimplemented here. Writes
  idx.npy, targets.npy   int64 [43, 8]
  expected_loss.npy      float32 [42]: the loss of every step of 2 epochs, SGD(lr=0.1,
                         momentum=0.9), before that step's update

Seeds are fixed and torch runs single-threaded, so rerunning rewrites byte-identical files.

Usage: /usr/bin/python3 scripts/gen_epochs_fixture.py
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_onnx_fixtures as G  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = os.path.join(ROOT, "test", "train", "Inputs", "gpt_epochs")
SAMPLES, BATCH, EPOCHS, DATA_SEED = 43, 2, 2, 11
MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def sample_order(n, seed, epoch):
    """shardc's --shuffle order of epoch `epoch` (lib/io/Dataset.cpp, sampleOrder)."""
    state = (seed + GOLDEN * (epoch + 1)) & MASK
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        state = (state + GOLDEN) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        j = z % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def main():
    torch.set_num_threads(1)
    m = G.make_mlp_and_gpt(torch.Generator().manual_seed(1234))
    model = G.GPTLoss(m["gpt"]).train()
    expected0 = np.load(os.path.join(ROOT, "test", "import", "Inputs", "gpt_loss",
                                     "expected_loss.npy"))
    with torch.no_grad():
        got0 = model(m["idx"], m["targets"]).numpy()
    assert abs(float(got0) - float(expected0)) < 1e-6, (got0, expected0)

    gen = torch.Generator().manual_seed(4321)
    idx = torch.randint(0, 64, (SAMPLES, 8), generator=gen)
    targets = torch.randint(0, 64, (SAMPLES, 8), generator=gen)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for epoch in range(EPOCHS):
        order = sample_order(SAMPLES, DATA_SEED, epoch)
        for k in range(SAMPLES // BATCH):
            pick = torch.tensor(order[k * BATCH:(k + 1) * BATCH])
            opt.zero_grad(set_to_none=True)
            loss = model(idx[pick], targets[pick])
            losses.append(loss.detach().numpy().copy())
            loss.backward()
            opt.step()
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, "idx.npy"), idx.numpy())
    np.save(os.path.join(OUT, "targets.npy"), targets.numpy())
    np.save(os.path.join(OUT, "expected_loss.npy"), np.stack(losses).astype(np.float32))
    print(f"wrote {OUT}: {len(losses)} losses, {losses[0]:.6f} .. {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
