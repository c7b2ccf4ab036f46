#!/usr/bin/python3
"""Writes OUT/train.onnx: a one-head causal self-attention classifier whose additive mask
(0 on and below the diagonal, -inf above) is a registered buffer, as models keep it, exported
for training (PyTorch writes the buffer as an initializer beside the parameters); OUT/x.npy,
OUT/labels.npy; and OUT/expected_loss.npy: PyTorch's losses of 3 AdamW steps, which train
the parameters and leave the buffer alone.

Usage: make.py OUT
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, d=8, seq=6, classes=4):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.head = nn.Linear(d, classes)
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), 1))

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(1, 2) / 8 ** 0.5 + self.mask, dim=-1)
        return self.head((att @ v)[:, -1])


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
torch.set_num_threads(1)
net = Attention()
x = torch.randn(4, 6, 8)
labels = torch.randint(0, 4, (4,))
torch.onnx.export(net, x, os.path.join(out, "train.onnx"), input_names=["x"],
                  output_names=["logits"], opset_version=14,
                  training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "labels.npy"), labels.numpy())
opt = torch.optim.AdamW(net.parameters(), lr=0.05, weight_decay=0.01)
losses = []
for _ in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), labels)
    loss.backward()
    opt.step()
    losses.append(loss.item())
np.save(os.path.join(out, "expected_loss.npy"), np.array(losses, np.float32))
