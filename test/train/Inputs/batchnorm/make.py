#!/usr/bin/python3
"""Writes OUT/model.onnx: a small CNN with BatchNorm2d and BatchNorm1d, exported by PyTorch
for training (training=TrainingMode.TRAINING, do_constant_folding=False) at opset OPSET
(13: training mode told by the extra outputs; 14 on: by training_mode); OUT/x.npy,
OUT/y.npy; PyTorch's eval-mode logits before training (OUT/expected_eval_logits.npy), its
cross-entropy losses over 3 steps of SGD with momentum (OUT/expected_loss.npy) and the
running statistics after them (OUT/expected_state.npz, named as in its state_dict).

Usage: make.py OUT OPSET
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

out, opset = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
torch.set_num_threads(1)
net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                    nn.Conv2d(8, 8, 3, stride=2), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(),
                    nn.Linear(72, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 5))
x = torch.randn(6, 3, 8, 8)
y = torch.randint(0, 5, (6,))
net.train()
torch.onnx.export(net, x, os.path.join(out, "model.onnx"), input_names=["x"],
                  output_names=["logits"], opset_version=opset,
                  training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "y.npy"), y.numpy())
with torch.no_grad():
    np.save(os.path.join(out, "expected_eval_logits.npy"), net.eval()(x).numpy())
net.train()
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
losses = []
for _ in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
np.save(os.path.join(out, "expected_loss.npy"), np.array(losses, np.float32))
np.savez(os.path.join(out, "expected_state.npz"),
         **{k: v.numpy() for k, v in net.state_dict().items() if "running" in k})
