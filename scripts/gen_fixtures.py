#!/usr/bin/python3
"""Regenerates the numeric-test fixtures in unittests/fixtures/ from numpy and PyTorch.

Each case writes its inputs and the reference output as small float32 (or int64) .npy
files; unittests/*OpTest.cpp load them with fixture("<name>"). Seeds are fixed and torch
runs single-threaded, so rerunning the script rewrites byte-identical files.

Usage: /usr/bin/python3 scripts/gen_fixtures.py
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unittests", "fixtures")


def save(name, a):
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
    assert a.dtype in (np.float32, np.int64), (name, a.dtype)
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(a))


def rand(rng, *shape, lo=-1.0, hi=1.0):
    return torch.from_numpy(rng.uniform(lo, hi, size=shape).astype(np.float32))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rng = np.random.default_rng(1234)

    # matmul: batch dims [2,1] and [3] broadcast to [2,3].
    a, b = rand(rng, 2, 1, 3, 4), rand(rng, 3, 4, 5)
    save("matmul_bcast_a", a)
    save("matmul_bcast_b", b)
    save("matmul_bcast_out", torch.matmul(a, b))

    # conv2d with groups, unequal strides, padding and dilation per dim, and bias.
    x, w, bias = rand(rng, 2, 4, 7, 8), rand(rng, 6, 2, 3, 3), rand(rng, 6)
    save("conv2d_x", x)
    save("conv2d_w", w)
    save("conv2d_bias", bias)
    save("conv2d_out",
         F.conv2d(x, w, bias, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2))
    # Asymmetric pads [top=0, left=1, bottom=2, right=0]: pad explicitly, then convolve.
    xa, wa = rand(rng, 1, 3, 5, 6), rand(rng, 4, 3, 2, 3)
    save("conv2d_asym_x", xa)
    save("conv2d_asym_w", wa)
    save("conv2d_asym_out", F.conv2d(F.pad(xa, (1, 0, 0, 2)), wa, stride=(1, 2)))

    # Pooling with padding.
    xp = rand(rng, 2, 3, 7, 6)
    save("pool_x", xp)
    save("max_pool2d_out", F.max_pool2d(xp, (3, 2), stride=(2, 1), padding=(1, 1)))
    save("max_pool2d_dil_out", F.max_pool2d(xp, 2, stride=1, padding=1, dilation=(2, 3)))
    save("avg_pool2d_incl_out",
         F.avg_pool2d(xp, 3, stride=2, padding=1, count_include_pad=True))
    save("avg_pool2d_excl_out",
         F.avg_pool2d(xp, 3, stride=2, padding=1, count_include_pad=False))

    # layer_norm over the last two dims with scale and bias, and over the last dim without.
    xl, wl, bl = rand(rng, 3, 4, 5, lo=-3, hi=3), rand(rng, 4, 5), rand(rng, 4, 5)
    save("layer_norm_x", xl)
    save("layer_norm_scale", wl)
    save("layer_norm_bias", bl)
    save("layer_norm_out", F.layer_norm(xl, (4, 5), wl, bl, eps=1e-5))
    save("layer_norm_plain_out", F.layer_norm(xl, (5,), eps=1e-5))

    # softmax / log_softmax on a middle and on the last axis.
    xs = rand(rng, 3, 4, 5, lo=-4, hi=4)
    save("softmax_x", xs)
    save("softmax_axis1_out", F.softmax(xs, dim=1))
    save("softmax_last_out", F.softmax(xs, dim=-1))
    save("log_softmax_axis1_out", F.log_softmax(xs, dim=1))
    save("log_softmax_last_out", F.log_softmax(xs, dim=-1))

    # Unary math on float32 inputs.
    xu = rand(rng, 64, lo=-5, hi=5)
    save("unary_x", xu)
    save("gelu_out", F.gelu(xu))
    save("gelu_tanh_out", F.gelu(xu, approximate="tanh"))
    save("erf_out", torch.erf(xu))
    save("tanh_out", torch.tanh(xu))
    save("sigmoid_out", torch.sigmoid(xu))
    save("exp_out", torch.exp(xu))
    xpos = rand(rng, 64, lo=0.01, hi=10)
    save("unary_pos_x", xpos)
    save("log_out", torch.log(xpos))
    save("rsqrt_out", torch.rsqrt(xpos))

    # gather as an embedding lookup (axis 0) and as index_select on an inner axis.
    table = rand(rng, 10, 4)
    ids = torch.tensor([[3, 0, 9], [3, 7, 1]], dtype=torch.int64)
    save("embedding_table", table)
    save("embedding_ids", ids)
    save("embedding_out", F.embedding(ids, table))
    xi = rand(rng, 3, 5, 2)
    sel = torch.tensor([4, 0, 2, 2], dtype=torch.int64)
    save("index_select_x", xi)
    save("index_select_idx", sel)
    save("index_select_out", torch.index_select(xi, 1, sel))

    # Reductions over several axes (numpy).
    xr = rng.uniform(-2, 2, size=(3, 4, 5)).astype(np.float32)
    save("reduce_x", xr)
    save("reduce_sum_02_out", xr.sum(axis=(0, 2)))
    save("reduce_mean_12_keep_out", xr.mean(axis=(1, 2), keepdims=True))
    save("reduce_max_01_out", xr.max(axis=(0, 1)))


if __name__ == "__main__":
    main()
