#!/usr/bin/env python3
"""Writes a GPT-2-style decoder (nanoGPT layout: fused qkv, causal mask, tanh-GELU, tied
embedding head) as shardc text IR, with random weights and token ids as .npy files and
PyTorch's logits for them as the reference output.

  gen_gpt.py OUT_DIR [--vocab 64 --dim 32 --heads 4 --seq 8 --batch 2 --layers 2 --seed 0]
             [--layer-function | --scan]

--layer-function writes the decoder layer once, as function @gpt_layer, and each layer as a
`call` of it (as a model's repeated module is); the weights and the numbers are the same.
--scan writes each layer weight stacked over the layers (h.attn.w: [layers, dim, 3 dim]; slice
i is layer i's h<i>.attn.w) and the layers as one `scan` of @gpt_layer over them, as models
whose layers scan over stacked weights do; the numbers are the same.

OUT_DIR receives gpt.ir, one <argument>.npy per function argument, and expected_logits.npy.
The defaults make the small fixture used by the tests; bench/ uses larger sizes.
"""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn.functional as F


def layer_names(i, swiglu=False):
    names = ["ln1.w", "ln1.b", "attn.w", "attn.b", "proj.w", "proj.b", "ln2.w", "ln2.b", "fc.w",
             "fc.b", "fc2.w", "fc2.b"] + (["up.w"] if swiglu else [])
    return [f"h{i}.{n}" for n in names]


def weight_shapes(a):
    """Every parameter's shape, in argument order (bench/ plans shapes without weights)."""
    D, V, T = a.dim, a.vocab, a.seq
    F = getattr(a, "ffn", 0) or 4 * D
    swiglu = getattr(a, "swiglu", False)
    shapes = {"wte": (V, D), "wpe": (T, D)}
    for i in range(a.layers):
        per_layer = [(D,), (D,), (D, 3 * D), (3 * D,), (D, D), (D,), (D,), (D,), (D, F),
                     (F,), (F, D), (D,)] + ([(D, F)] if swiglu else [])
        shapes.update(zip(layer_names(i, swiglu), per_layer))
    shapes["lnf.w"] = (D,)
    shapes["lnf.b"] = (D,)
    return shapes


def stacked_names(a):
    return ["h." + n[len("h0."):] for n in layer_names(0, getattr(a, "swiglu", False))]


def stack_weights(a, w):
    """The per-layer weights stacked over the layers, as --scan's model reads them."""
    out = {k: v for k, v in w.items() if not k.startswith("h")}
    for j, name in enumerate(stacked_names(a)):
        out[name] = np.stack([w[layer_names(i, getattr(a, "swiglu", False))[j]]
                              for i in range(a.layers)])
    return out


def make_weights(a, rng):
    w = {}
    for name, shape in weight_shapes(a).items():
        if name == "wte":
            w[name] = rng.normal(0, 0.5, shape)
        elif name == "wpe":
            w[name] = rng.normal(0, 0.1, shape)
        elif name.endswith("ln1.w") or name.endswith("ln2.w") or name == "lnf.w":
            w[name] = 1.0 + rng.normal(0, 0.1, shape)
        elif name == "lnf.b":
            w[name] = rng.normal(0, 0.1, shape)
        else:
            w[name] = rng.normal(0, 1.0 / math.sqrt(shape[0]), shape)
    return {k: v.astype(np.float32) for k, v in w.items()}


def reference(a, w, ids):
    t = {k: torch.from_numpy(v) for k, v in w.items()}
    return forward(a, t, ids).numpy()


def forward(a, t, ids):
    """The logits of the parameters `t` (torch tensors by name) for token ids (numpy)."""
    B, T, D, H = a.batch, a.seq, a.dim, a.heads
    x = t["wte"][torch.from_numpy(ids)] + t["wpe"]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for i in range(a.layers):
        p = lambda n: t[f"h{i}.{n}"]
        h = F.layer_norm(x, (D,), p("ln1.w"), p("ln1.b"), 1e-5)
        q, k, v = (h @ p("attn.w") + p("attn.b")).split(D, dim=2)
        q, k, v = (z.view(B, T, H, D // H).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D // H))
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, D)
        x = x + (y @ p("proj.w") + p("proj.b"))
        h = F.layer_norm(x, (D,), p("ln2.w"), p("ln2.b"), 1e-5)
        h = F.gelu(h @ p("fc.w") + p("fc.b"), approximate="tanh")
        x = x + (h @ p("fc2.w") + p("fc2.b"))
    x = F.layer_norm(x, (D,), t["lnf.w"], t["lnf.b"], 1e-5)
    return x @ t["wte"].T


def emit_layer(e, a, F, x, p, v):
    """One decoder layer's ops, reading `x` and parameters p(name), naming values v(name)."""
    B, T, D, H = a.batch, a.seq, a.dim, a.heads
    hd = D // H
    f = lambda *s: "f32[" + ",".join(str(d) for d in s) + "]"
    e(f"  {v('h')} = layer_norm({x}, {p('ln1.w')}, {p('ln1.b')}) {{axis = -1, epsilon = 1.0e-05}} : {f(B, T, D)}")
    e(f"  {v('qkv0')} = matmul({v('h')}, {p('attn.w')}) : {f(B, T, 3 * D)}")
    e(f"  {v('qkv')} = add({v('qkv0')}, {p('attn.b')}) : {f(B, T, 3 * D)}")
    e(f"  {v('q')}, {v('k')}, {v('v')} = split({v('qkv')}) {{axis = 2, sizes = [{D}, {D}, {D}]}} : "
      f"{f(B, T, D)}, {f(B, T, D)}, {f(B, T, D)}")
    for n in "qkv":
        e(f"  {v(n + '4')} = reshape({v(n)}) {{shape = [{B}, {T}, {H}, {hd}]}} : {f(B, T, H, hd)}")
    e(f"  {v('qt')} = transpose({v('q4')}) {{perm = [0, 2, 1, 3]}} : {f(B, H, T, hd)}")
    e(f"  {v('kt')} = transpose({v('k4')}) {{perm = [0, 2, 3, 1]}} : {f(B, H, hd, T)}")
    e(f"  {v('vt')} = transpose({v('v4')}) {{perm = [0, 2, 1, 3]}} : {f(B, H, T, hd)}")
    e(f"  {v('s0')} = matmul({v('qt')}, {v('kt')}) : {f(B, H, T, T)}")
    e(f"  {v('s')} = mul({v('s0')}, %scale) : {f(B, H, T, T)}")
    e(f"  {v('sm')} = where(%causal, {v('s')}, %ninf) : {f(B, H, T, T)}")
    e(f"  {v('pr')} = softmax({v('sm')}) {{axis = -1}} : {f(B, H, T, T)}")
    e(f"  {v('y')} = matmul({v('pr')}, {v('vt')}) : {f(B, H, T, hd)}")
    e(f"  {v('yt')} = transpose({v('y')}) {{perm = [0, 2, 1, 3]}} : {f(B, T, H, hd)}")
    e(f"  {v('y2')} = reshape({v('yt')}) {{shape = [{B}, {T}, {D}]}} : {f(B, T, D)}")
    e(f"  {v('o0')} = matmul({v('y2')}, {p('proj.w')}) : {f(B, T, D)}")
    e(f"  {v('o')} = add({v('o0')}, {p('proj.b')}) : {f(B, T, D)}")
    e(f"  {v('x1')} = add({x}, {v('o')}) : {f(B, T, D)}")
    e(f"  {v('h2')} = layer_norm({v('x1')}, {p('ln2.w')}, {p('ln2.b')}) {{axis = -1, epsilon = 1.0e-05}} : {f(B, T, D)}")
    e(f"  {v('f0')} = matmul({v('h2')}, {p('fc.w')}) : {f(B, T, F)}")
    e(f"  {v('f')} = add({v('f0')}, {p('fc.b')}) : {f(B, T, F)}")
    if getattr(a, "swiglu", False):  # Llama's MLP: silu(x W_gate) * (x W_up), then W_down
        e(f"  {v('sg')} = sigmoid({v('f')}) : {f(B, T, F)}")
        e(f"  {v('si')} = mul({v('f')}, {v('sg')}) : {f(B, T, F)}")
        e(f"  {v('up')} = matmul({v('h2')}, {p('up.w')}) : {f(B, T, F)}")
        e(f"  {v('g')} = mul({v('si')}, {v('up')}) : {f(B, T, F)}")
    else:
        e(f"  {v('g')} = gelu({v('f')}) {{approximate = \"tanh\"}} : {f(B, T, F)}")
    e(f"  {v('m0')} = matmul({v('g')}, {p('fc2.w')}) : {f(B, T, D)}")
    e(f"  {v('m')} = add({v('m0')}, {p('fc2.b')}) : {f(B, T, D)}")
    e(f"  {v('x2')} = add({v('x1')}, {v('m')}) : {f(B, T, D)}")
    return v("x2")


def emit_ir(a, w):
    B, T, D, H, V = a.batch, a.seq, a.dim, a.heads, a.vocab
    hd = D // H
    F = w["h0.fc.w"].shape[1] if a.layers else 4 * D
    f = lambda *s: "f32[" + ",".join(str(d) for d in s) + "]"
    args = [f"input %ids: i64[{B},{T}]"] + [
        f"param %\"{n}\": {f(*w[n].shape)}" for n in w]
    scan = getattr(a, "scan", False) and a.layers
    if scan:
        args = [arg for arg in args if not arg.startswith('param %"h')]
        first = layer_names(0, getattr(a, "swiglu", False))
        args[3:3] = [f"param %\"{n}\": {f(a.layers, *w[first[j]].shape)}"
                     for j, n in enumerate(stacked_names(a))]
    out = [f"// GPT-style decoder: {a.layers} layers, dim {D}, {H} heads, vocab {V}, "
           f"seq {T}, batch {B}. Generated by scripts/gen_gpt.py.",
           f"func @gpt({', '.join(args)}) -> (logits: {f(B, T, V)}) {{"]
    e = out.append
    e(f"  %tok = gather(%wte, %ids) {{axis = 0}} : {f(B, T, D)}")
    e(f"  %x = add(%tok, %wpe) : {f(B, T, D)}")
    e(f"  %row = iota() {{axis = 0, shape = [{T}, {T}]}} : i64[{T},{T}]")
    e(f"  %col = iota() {{axis = 1, shape = [{T}, {T}]}} : i64[{T},{T}]")
    e(f"  %causal = compare(%col, %row) {{direction = \"le\"}} : i1[{T},{T}]")
    e(f"  %ninf = constant() {{value = dense<f32[], -inf>}} : f32[]")
    e(f"  %scale = constant() {{value = dense<f32[], {1.0 / math.sqrt(hd)!r}>}} : f32[]")
    x = "%x"
    layer_args = [f"input %x: {f(B, T, D)}", f"input %causal: i1[{T},{T}]", "input %ninf: f32[]",
                  "input %scale: f32[]"]
    for i in range(0 if scan else a.layers):
        names = layer_names(i, getattr(a, "swiglu", False))
        if getattr(a, "layer_function", False):
            operands = ", ".join([x, "%causal", "%ninf", "%scale"] + [f"%\"{n}\"" for n in names])
            e(f"  %l{i}_x2 = call({operands}) {{callee = \"gpt_layer\"}} : {f(B, T, D)}")
        else:
            emit_layer(e, a, F, x, lambda n: f"%\"h{i}.{n}\"", lambda n: f"%l{i}_{n}")
        x = f"%l{i}_x2"
    if scan:
        stacked = ", ".join(f"%\"{n}\"" for n in stacked_names(a))
        e(f"  %lx = scan({x}, %causal, %ninf, %scale, {stacked}) {{callee = \"gpt_layer\", "
          f"length = {a.layers}, carried = 1, shared = 3}} : {f(B, T, D)}")
        x = "%lx"
    e(f"  %xf = layer_norm({x}, %\"lnf.w\", %\"lnf.b\") {{axis = -1, epsilon = 1.0e-05}} : {f(B, T, D)}")
    e(f"  %wteT = transpose(%wte) {{perm = [1, 0]}} : {f(D, V)}")
    e(f"  %logits = matmul(%xf, %wteT) : {f(B, T, V)}")
    e("  return %logits")
    e("}")
    if (getattr(a, "layer_function", False) or scan) and a.layers:
        params = [f"param %\"{n[len('h0.'):]}\": {f(*w[n].shape)}" for n in
                  layer_names(0, getattr(a, "swiglu", False))]
        e(f"func @gpt_layer({', '.join(layer_args + params)}) -> (y: {f(B, T, D)}) {{")
        y = emit_layer(e, a, F, "%x", lambda n: f"%\"{n}\"", lambda n: f"%{n}")
        e(f"  return {y}")
        e("}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    for name, default in (("vocab", 64), ("dim", 32), ("heads", 4), ("seq", 8), ("batch", 2),
                          ("layers", 2), ("seed", 0)):
        ap.add_argument("--" + name, type=int, default=default)
    form = ap.add_mutually_exclusive_group()
    form.add_argument("--layer-function", action="store_true")
    form.add_argument("--scan", action="store_true")
    a = ap.parse_args()
    assert a.dim % a.heads == 0, "--dim must be a multiple of --heads"
    rng = np.random.default_rng(a.seed)
    w = make_weights(a, rng)
    ids = rng.integers(0, a.vocab, (a.batch, a.seq)).astype(np.int64)
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "gpt.ir"), "w") as fh:
        fh.write(emit_ir(a, w))
    np.save(os.path.join(a.out_dir, "ids.npy"), ids)
    for name, value in (stack_weights(a, w) if a.scan and a.layers else w).items():
        np.save(os.path.join(a.out_dir, name + ".npy"), value)
    np.save(os.path.join(a.out_dir, "expected_logits.npy"), reference(a, w, ids))


if __name__ == "__main__":
    main()
