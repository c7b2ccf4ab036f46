#!/usr/bin/python3
"""Writes OUT/model.onnx: an MLP with Dropout(0.1) between its layers, exported by PyTorch
for training (training=TrainingMode.TRAINING, do_constant_folding=False, dynamic batch);
OUT/x.npy and OUT/labels.npy (batch 8); and OUT/expected_eval_y.npy, PyTorch's eval-mode
output (dropout off) for an inference compile to match.

Usage: make.py OUT
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 64)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
torch.set_num_threads(1)
net = Net().train()
x = torch.randn(8, 16)
torch.onnx.export(net, x, os.path.join(out, "model.onnx"), input_names=["x"],
                  output_names=["y"], opset_version=13, dynamic_axes={"x": {0: "batch"}},
                  training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "labels.npy"), torch.randint(0, 4, (8,)).numpy())
with torch.no_grad():
    np.save(os.path.join(out, "expected_eval_y.npy"), net.eval()(x).numpy())
