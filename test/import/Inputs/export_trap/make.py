#!/usr/bin/python3
"""Writes OUT/{eval,train}.onnx: one small pre-LN transformer-style MLP with fresh LayerNorms
(all ones and zeros) and zero biases, exported by PyTorch in eval mode (which merges the
parameters with equal values) and for training; OUT/x.npy, OUT/labels.npy; and
OUT/expected_loss.npy: PyTorch's cross-entropy losses of 3 SGD steps (lr 0.5) on them.

Usage: make.py OUT
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)
        nn.init.zeros_(self.fc.bias)

    def forward(self, x):
        return x + self.fc(torch.tanh(self.ln(x)))


class Net(nn.Module):
    def __init__(self, d=8, layers=3, classes=4):
        super().__init__()
        self.h = nn.ModuleList([Block(d) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        for b in self.h:
            x = b(x)
        return self.head(self.ln_f(x))


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
torch.set_num_threads(1)
net = Net()
x = torch.randn(6, 8)
labels = torch.randint(0, 4, (6,))
torch.onnx.export(net, x, os.path.join(out, "eval.onnx"), input_names=["x"],
                  output_names=["logits"], opset_version=13)
torch.onnx.export(net, x, os.path.join(out, "train.onnx"), input_names=["x"],
                  output_names=["logits"], opset_version=13,
                  training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "labels.npy"), labels.numpy())
opt = torch.optim.SGD(net.parameters(), lr=0.5)
losses = []
for _ in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), labels)
    loss.backward()
    opt.step()
    losses.append(loss.item())
np.save(os.path.join(out, "expected_loss.npy"), np.array(losses, np.float32))
