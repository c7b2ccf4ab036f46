#!/usr/bin/python3
"""Regenerates the ONNX-importer fixtures in test/import/Inputs/ with PyTorch's own exporter.

Each model gets a folder test/import/Inputs/<model>/ with
  model.onnx                       exported by torch.onnx.export (PyTorch 1.13)
  <input>.npy                      one per ONNX graph input, named exactly as the input
  expected_<output>.npy            PyTorch's eval-mode output, named as the ONNX graph output
  <input>.b16.npy, expected_<output>.b16.npy
                                   (mlp, gpt) the same at batch 16, for rebinding the dynamic
                                   batch axis of the model.onnx exported at batch 4 / 2
  ops.txt                          the sorted ONNX op types the graph contains
and test/import/Inputs/README.md describes them all.

Every export is checked with onnx.checker and onnx.shape_inference (strict), and then run by
the small numpy ONNX interpreter below (run_onnx), which must reproduce PyTorch's outputs: that
proves the fixtures are consistent with the graph, dynamic batch included, without onnxruntime.

Seeds are fixed and torch runs single-threaded, so rerunning the script rewrites byte-identical
files.

Usage: /usr/bin/python3 scripts/gen_onnx_fixtures.py [--out DIR]
"""
import argparse
import io
import math
import os
import shutil
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import onnx.shape_inference
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DEFAULT_OUT = os.path.join(ROOT, "test", "import", "Inputs")
TrainingMode = torch.onnx.TrainingMode


# ---------------------------------------------------------------------------------------------
# Models.


class MLP(nn.Module):
    def __init__(self, d_in=16, hidden=32, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class CausalSelfAttention(nn.Module):
    def __init__(self, d, heads, block):
        super().__init__()
        self.n_head, self.n_embd = heads, d
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, d, heads, block):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, block)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab=64, d=32, heads=4, block=8, layers=2):
        super().__init__()
        self.vocab = vocab
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.h = nn.ModuleList([Block(d, heads, block) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        _, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class GPTLoss(nn.Module):
    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    def forward(self, idx, targets):
        logits = self.gpt(idx)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = BasicBlock(8, 8, 1)
        self.layer2 = BasicBlock(8, 16, 2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(self.flatten(self.avgpool(x)))


def randomize_norms(model, gen):
    """Non-trivial affine parameters and running statistics for every LayerNorm/BatchNorm."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.LayerNorm, nn.BatchNorm2d)):
                m.weight.copy_(1.0 + 0.2 * torch.randn(m.weight.shape, generator=gen))
                m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=gen))
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(0.5 * torch.randn(m.running_mean.shape, generator=gen))
                m.running_var.copy_(0.5 + 1.5 * torch.rand(m.running_var.shape, generator=gen))


def make_mlp_and_gpt(gen):
    """The `mlp` and `gpt`/`gpt_loss` models with their weights and inputs, exactly as the
    fixtures hold them (scripts/gen_train_fixtures.py trains these same models).

    gen: the torch.Generator seeded 1234 that main() goes on using for later models; this
    draws x, x16, the GPT norms, idx, idx16 and targets from it, in that order. Returns a
    dict: mlp (eval mode), x [4,16], x16 [16,16], gpt (eval mode), idx, idx16, targets."""
    torch.manual_seed(1)
    mlp = MLP().eval()
    x = torch.randn(4, 16, generator=gen)
    x16 = torch.randn(16, 16, generator=gen)
    torch.manual_seed(2)
    gpt = GPT()
    randomize_norms(gpt, gen)
    gpt.eval()
    idx = torch.randint(0, 64, (2, 8), generator=gen)
    idx16 = torch.randint(0, 64, (16, 8), generator=gen)
    targets = torch.randint(0, 64, (2, 8), generator=gen)
    return dict(mlp=mlp, x=x, x16=x16, gpt=gpt, idx=idx, idx16=idx16, targets=targets)


def make_transformer_encoder():
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                       batch_first=True)
    # enable_nested_tensor=False: no nested-tensor conversion in TransformerEncoder.forward.
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)


def reinit_matrices(model, gen):
    """New random weights and biases for every Linear/attention parameter (not the norms).

    TransformerEncoder deep-copies its layer, so both layers would start with identical
    weights: a layer mix-up in an importer would go unnoticed, and the exporter would
    deduplicate the equal initializers into Identity nodes."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                continue
            bound = 1.0 / math.sqrt(p.shape[-1]) if p.dim() > 1 else 0.1
            p.copy_((2 * torch.rand(p.shape, generator=gen) - 1) * bound)


# ---------------------------------------------------------------------------------------------
# A small numpy ONNX interpreter, only for the op types these fixtures contain. It runs each
# exported graph on the saved inputs so the fixtures are checked against the graph itself.


def _attrs(node):
    a = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    return {k: v.decode() if isinstance(v, bytes) else v for k, v in a.items()}


def _np_dtype(onnx_type):
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[onnx_type]


def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _pool_patches(x, kernel, strides, pads, fill):
    """[N,C,H,W] -> [N,C,OH,OW,kh*kw] windows of the padded input."""
    n, c, h, w = x.shape
    kh, kw = kernel
    xp = np.full((n, c, h + pads[0] + pads[2], w + pads[1] + pads[3]), fill, x.dtype)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = x
    oh = (xp.shape[2] - kh) // strides[0] + 1
    ow = (xp.shape[3] - kw) // strides[1] + 1
    out = np.empty((n, c, oh, ow, kh * kw), x.dtype)
    for i in range(kh):
        for j in range(kw):
            out[..., i * kw + j] = xp[:, :, i:i + strides[0] * oh:strides[0],
                                      j:j + strides[1] * ow:strides[1]]
    return out


def _conv(x, w, b, a):
    assert a.get("group", 1) == 1 and tuple(a.get("dilations", [1, 1])) == (1, 1)
    kh, kw = w.shape[2:]
    pads = a.get("pads", [0, 0, 0, 0])
    patches = _pool_patches(x, (kh, kw), a.get("strides", [1, 1]), pads, 0.0)
    y = np.einsum("nchwk,ock->nohw", patches.astype(np.float64),
                  w.reshape(w.shape[0], w.shape[1], -1).astype(np.float64))
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y.astype(x.dtype)


def _run_node(node, v):
    op, a = node.op_type, _attrs(node)
    x = [v[i] if i else None for i in node.input]
    if op == "Constant":
        return [onnx.numpy_helper.to_array(a["value"])]
    if op in ("Add", "Sub", "Mul", "Div", "Pow", "Equal"):
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
             "Pow": np.power, "Equal": np.equal}[op]
        r = f(x[0], x[1])
        return [r if op == "Equal" else r.astype(x[0].dtype)]
    if op in ("Relu", "Tanh", "Sqrt", "Erf", "Neg", "Exp", "Log"):
        f = {"Relu": lambda t: np.maximum(t, 0), "Tanh": np.tanh, "Sqrt": np.sqrt,
             "Neg": np.negative, "Exp": np.exp, "Log": np.log,
             "Erf": np.vectorize(math.erf)}[op]
        return [np.asarray(f(x[0])).astype(x[0].dtype)]
    if op == "Identity":
        return [x[0]]
    if op == "Cast":
        return [x[0].astype(_np_dtype(a["to"]))]
    if op == "Shape":
        return [np.array(x[0].shape, np.int64)]
    if op == "Gather":
        return [np.take(x[0], x[1], axis=a.get("axis", 0))]
    if op == "Unsqueeze":
        rank = x[0].ndim + len(x[1])
        r = x[0]
        for ax in sorted(int(i) % rank for i in x[1]):
            r = np.expand_dims(r, ax)
        return [r]
    if op == "Squeeze":
        axes = tuple(int(i) for i in x[1]) if len(x) > 1 and x[1] is not None else None
        return [np.squeeze(x[0], axis=axes)]
    if op == "Concat":
        return [np.concatenate(x, axis=a["axis"])]
    if op == "Reshape":
        shape = [d if d != 0 or a.get("allowzero", 0) else x[0].shape[i]
                 for i, d in enumerate(x[1].tolist())]
        return [x[0].reshape(shape)]
    if op == "Transpose":
        return [np.transpose(x[0], a.get("perm"))]
    if op == "Flatten":
        ax = a.get("axis", 1)
        return [x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)]
    if op == "Slice":
        starts, ends = x[1], x[2]
        axes = x[3] if len(x) > 3 and x[3] is not None else np.arange(len(starts))
        steps = x[4] if len(x) > 4 and x[4] is not None else np.ones(len(starts), np.int64)
        sl = [slice(None)] * x[0].ndim
        for s, e, ax, st in zip(starts, ends, axes, steps):
            dim = x[0].shape[ax]
            s = int(np.clip(s + dim if s < 0 else s, 0, dim))
            e = int(np.clip(e + dim if e < 0 else e, 0, dim))
            sl[int(ax)] = slice(s, e, int(st))
        return [x[0][tuple(sl)]]
    if op == "Split":
        ax = a.get("axis", 0)
        sizes = x[1] if len(x) > 1 and x[1] is not None else a.get("split")
        if sizes is None:
            sizes = [x[0].shape[ax] // len(node.output)] * len(node.output)
        return np.split(x[0], np.cumsum(sizes)[:-1], axis=ax)
    if op == "Range":
        return [np.arange(x[0], x[1], x[2]).astype(x[0].dtype)]
    if op == "ConstantOfShape":
        val = onnx.numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
        return [np.full(x[0].tolist(), val.reshape(-1)[0], val.dtype)]
    if op == "Expand":
        return [x[0] * np.ones(x[1].tolist(), x[0].dtype)]
    if op == "Where":
        return [np.where(x[0], x[1], x[2])]
    if op == "MatMul":
        return [np.matmul(x[0].astype(np.float64), x[1].astype(np.float64)).astype(x[0].dtype)]
    if op == "Gemm":
        A = x[0].T if a.get("transA", 0) else x[0]
        B = x[1].T if a.get("transB", 0) else x[1]
        y = a.get("alpha", 1.0) * (A.astype(np.float64) @ B.astype(np.float64))
        if len(x) > 2 and x[2] is not None:
            y = y + a.get("beta", 1.0) * x[2]
        return [y.astype(x[0].dtype)]
    if op == "Softmax":
        return [_softmax(x[0], a.get("axis", -1))]
    if op == "LogSoftmax":
        ax = a.get("axis", -1)
        m = np.max(x[0], axis=ax, keepdims=True)
        return [x[0] - m - np.log(np.sum(np.exp(x[0] - m), axis=ax, keepdims=True))]
    if op in ("ReduceMean", "ReduceSum"):
        axes = a.get("axes") if op == "ReduceMean" else (
            x[1].tolist() if len(x) > 1 and x[1] is not None else None)
        f = np.mean if op == "ReduceMean" else np.sum
        return [f(x[0], axis=tuple(axes) if axes is not None else None,
                  keepdims=bool(a.get("keepdims", 1))).astype(x[0].dtype)]
    if op == "LayerNormalization":
        ax = a.get("axis", -1) % x[0].ndim
        axes = tuple(range(ax, x[0].ndim))
        mu = x[0].mean(axis=axes, keepdims=True)
        var = ((x[0] - mu) ** 2).mean(axis=axes, keepdims=True)
        y = (x[0] - mu) / np.sqrt(var + a.get("epsilon", 1e-5)) * x[1]
        if len(x) > 2 and x[2] is not None:
            y = y + x[2]
        return [y.astype(x[0].dtype)]
    if op == "BatchNormalization":
        assert not a.get("training_mode", 0)
        s = (1, -1) + (1,) * (x[0].ndim - 2)
        scale, bias, mean, var = (t.reshape(s) for t in x[1:5])
        eps = a.get("epsilon", 1e-5)
        return [((x[0] - mean) / np.sqrt(var + eps) * scale + bias).astype(x[0].dtype)]
    if op == "Conv":
        return [_conv(x[0], x[1], x[2] if len(x) > 2 else None, a)]
    if op == "MaxPool":
        assert len(node.output) == 1 and not a.get("ceil_mode", 0)
        p = _pool_patches(x[0], a["kernel_shape"], a.get("strides", [1, 1]),
                          a.get("pads", [0, 0, 0, 0]), -np.inf)
        return [p.max(axis=-1)]
    if op == "GlobalAveragePool":
        return [x[0].mean(axis=(2, 3), keepdims=True)]
    if op == "SoftmaxCrossEntropyLoss":
        assert a.get("reduction", "mean") == "mean" and len(x) == 2
        logp = _run_node(onnx.helper.make_node("LogSoftmax", ["s"], ["o"], axis=1),
                         {"s": x[0]})[0]
        ignore = a.get("ignore_index")
        keep = np.ones(x[1].shape, bool) if ignore is None else x[1] != ignore
        picked = -np.take_along_axis(logp, np.where(keep, x[1], 0)[:, None], axis=1)[:, 0]
        return [np.asarray(picked[keep].sum() / keep.sum(), x[0].dtype)] + (
            [-logp] if len(node.output) > 1 else [])
    if op == "NegativeLogLikelihoodLoss":
        assert a.get("reduction", "mean") == "mean" and len(x) == 2
        ignore = a.get("ignore_index")
        keep = np.ones(x[1].shape, bool) if ignore is None else x[1] != ignore
        picked = -np.take_along_axis(x[0], np.where(keep, x[1], 0)[:, None], axis=1)[:, 0]
        return [np.asarray(picked[keep].sum() / keep.sum(), x[0].dtype)]
    raise NotImplementedError(f"run_onnx: no numpy rule for {op}")


def run_onnx(model, feeds):
    """Runs the graph of an onnx ModelProto on numpy feeds; returns {output name: array}."""
    v = {init.name: onnx.numpy_helper.to_array(init) for init in model.graph.initializer}
    v.update(feeds)
    for node in model.graph.node:
        outs = _run_node(node, v)
        for name, val in zip(node.output, outs):
            if name:
                v[name] = np.asarray(val)
    return {o.name: v[o.name] for o in model.graph.output}


# ---------------------------------------------------------------------------------------------
# Export and write.


def to_np(t):
    a = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    assert a.dtype in (np.float32, np.int64), a.dtype
    return np.array(a, order="C", copy=True)  # not ascontiguousarray: it makes 0-d arrays 1-d


def save_npy(folder, name, a):
    with open(os.path.join(folder, name + ".npy"), "wb") as f:
        np.save(f, to_np(a))


def dim_str(d):
    return d.dim_param if d.HasField("dim_param") else str(d.dim_value)


def io_sig(values):
    out = []
    for vi in values:
        t = vi.type.tensor_type
        dims = ", ".join(dim_str(d) for d in t.shape.dim)
        out.append(f"{vi.name}: {onnx.TensorProto.DataType.Name(t.elem_type).lower()}[{dims}]")
    return out


def check(model_or_path, model):
    onnx.checker.check_model(model_or_path, full_check=False)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnx.checker.check_model(inferred)
    return inferred


def export(out, name, module, args, input_names, output_names, opset, dynamic_axes=None,
           do_constant_folding=True, training=TrainingMode.EVAL, external=False, extra=None,
           note=""):
    """Exports module at `args`, writes the folder, checks it; returns a summary dict.

    extra: optional (suffix, args) with more inputs to evaluate at (batch 16): written as
    <input><suffix>.npy and expected_<output><suffix>.npy and checked with run_onnx too."""
    folder = os.path.join(out, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    module.eval()
    # Reference outputs: plain eval-mode forward, grad mode left on as it is during the
    # export trace, so that nothing takes a different (fast-path) kernel than the trace did.
    expected = module(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)

    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, buf, input_names=input_names, output_names=output_names,
                          opset_version=opset, dynamic_axes=dynamic_axes,
                          do_constant_folding=do_constant_folding, training=training,
                          export_params=True, verbose=False)
    data = buf.getvalue()
    model = onnx.load_from_string(data)
    path = os.path.join(folder, "model.onnx")
    if external:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="model.onnx.data", size_threshold=0)
        model = onnx.load(path)  # loads the side file back in
        check(path, model)
    else:
        with open(path, "wb") as f:
            f.write(data)
        check(model, model)

    graph_inputs = [i.name for i in model.graph.input]
    graph_outputs = [o.name for o in model.graph.output]
    assert graph_inputs == list(input_names), (name, graph_inputs)
    assert graph_outputs == list(output_names), (name, graph_outputs)

    feeds = {}
    for n, a in zip(input_names, args):
        save_npy(folder, n, a)
        feeds[n] = to_np(a)
    for n, e in zip(output_names, expected):
        save_npy(folder, "expected_" + n, e)
    verify(name, model, feeds, dict(zip(output_names, map(to_np, expected))))

    if extra:
        suffix, eargs = extra
        eexp = module(*eargs)
        eexp = eexp if isinstance(eexp, tuple) else (eexp,)
        efeeds = {}
        for n, a in zip(input_names, eargs):
            save_npy(folder, n + suffix, a)
            efeeds[n] = to_np(a)
        for n, e in zip(output_names, eexp):
            save_npy(folder, "expected_" + n + suffix, e)
        verify(name + suffix, model, efeeds, dict(zip(output_names, map(to_np, eexp))))

    ops = sorted({n.op_type for n in model.graph.node})
    with open(os.path.join(folder, "ops.txt"), "w") as f:
        f.write("\n".join(ops) + "\n")
    opset_ver = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")][0]
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    summary = dict(name=name, opset=opset_ver, ops=ops, nodes=len(model.graph.node),
                   inputs=io_sig(model.graph.input), outputs=io_sig(model.graph.output),
                   initializers=len(model.graph.initializer), size=size, note=note,
                   extra=extra[0] if extra else None)
    print(f"{name}: opset {opset_ver}, {len(model.graph.node)} nodes, {size} bytes")
    print(f"  inputs  {'; '.join(summary['inputs'])}")
    print(f"  outputs {'; '.join(summary['outputs'])}")
    print(f"  ops     {' '.join(ops)}")
    return summary


def verify(name, model, feeds, expected):
    got = run_onnx(model, feeds)
    for n, e in expected.items():
        g = got[n]
        assert g.shape == e.shape and g.dtype == e.dtype, (name, n, g.shape, e.shape, g.dtype)
        err = float(np.max(np.abs(g.astype(np.float64) - e))) if e.size else 0.0
        assert err < 1e-4 * max(1.0, float(np.max(np.abs(e)))), (name, n, err)
        print(f"  verified {name}/{n} with the numpy interpreter: max |diff| {err:.2e}")


# ---------------------------------------------------------------------------------------------


README_HEAD = """\
# ONNX importer fixtures

Models built in PyTorch 1.13 and exported with PyTorch's own ONNX exporter
(`torch.onnx.export`), float32, eval mode, with the outputs PyTorch computes for them.
Regenerate (byte-identical, fixed seeds, one torch thread) with

    /usr/bin/python3 scripts/gen_onnx_fixtures.py

Per folder: `model.onnx`; one `<input>.npy` per ONNX graph input, named exactly as the graph
input; `expected_<output>.npy` per graph output (PyTorch's result); `ops.txt`, the ONNX op
types the graph contains. `mlp` and `gpt` also hold `<input>.b16.npy` and
`expected_<output>.b16.npy`: the same weights and the same `model.onnx` (exported at batch 4 /
2) run at batch 16, for an importer that rebinds the dynamic batch axis to 16. The generator
checks every export with `onnx.checker` and strict `onnx.shape_inference`, and runs it with a
small numpy ONNX interpreter (`run_onnx` in the script) that must reproduce the PyTorch
outputs; it agrees to within 1e-6 absolute on every fixture.

In the signatures below a named dimension is symbolic (`batch` is a declared dynamic axis);
numbers are fixed sizes.
"""

README_QUIRKS = """## What PyTorch 1.13's exporter does (what an importer meets)

- Shape arithmetic. Every `view`/`reshape` on a traced size becomes a chain
  Shape -> Gather(axis 0, scalar index) -> Unsqueeze -> Concat -> Reshape; `C // n_head` is an
  int64 Div then Cast(int64) twice; `torch.arange(T)` is Cast + Range feeding Gather(wpe).
  The trace keeps T as `Shape(idx)[1]` although only the batch axis is declared dynamic, so
  the exporter's own shape inference cannot size the GPT logits' dim 1 and names it
  `MatMullogits_dim_1` (it is 8): fold Shape of known dimensions (data propagation) to get it.
  The static transformer encoder still cuts q/k/v with Slice whose bounds come from
  Shape -> Gather -> Add -> Div -> Mul; its Reshape targets are constants with the batch baked
  in. `mlp`/`resnet` Gemm and Flatten need no shape chain.
- Linear: a 2-D input gives Gemm(transB=1) on the original weight; a 3-D input gives MatMul
  with a constant-folded, pre-transposed initializer named like `onnx::MatMul_328`, then
  `Add(bias, matmul)` with the bias first.
- Initializers are not graph inputs. Equal initializers are deduplicated: the second block's
  causal-mask buffer is `h.1.attn.mask = Identity(h.0.attn.mask)`. Value names contain `/`,
  `.` and `::` (`/h.0/attn/Shape_output_0`); scalars and small shape vectors are Constant
  nodes, not initializers.
- Causal mask: Slice(mask, 0, T) on axes 2 and 3 (ends computed), Equal(., 0), Cast(to bool),
  Where(cond, Constant -inf, scores); Softmax(axis -1) then sees -inf.
- GELU(approximate='tanh') is decomposed (no Gelu op before opset 20):
  0.5 * x * (1 + Tanh(0.7978846 * (x + 0.044715 * x*x*x))) with Mul/Add/Tanh.
- LayerNorm: opset 13 decomposes it (ReduceMean(axes [-1]), Sub, Pow 2, ReduceMean, Add eps,
  Sqrt, Div, Mul, Add); opset 17 emits LayerNormalization(axis -1, epsilon 1e-5).
- Opset-13 operand forms: Split sizes, Squeeze/Unsqueeze axes and Slice starts/ends/axes/steps
  are inputs, not attributes; ReduceMean still has an `axes` attribute (input from opset 18).
- `F.cross_entropy` at opset 13 becomes one SoftmaxCrossEntropyLoss(reduction 'mean',
  ignore_index -100) on logits reshaped to [B*T, 64] (the -1 resolved through Shape, Slice,
  Squeeze, Unsqueeze, Concat) and targets reshaped to [-1]; no LogSoftmax +
  NegativeLogLikelihoodLoss pair. Output `loss` is a 0-d float.
- TransformerEncoderLayer has a fused fast path (`aten::_transformer_encoder_layer_fwd`,
  which the exporter cannot export). It is taken in eval mode only when grad is disabled
  (torch.no_grad / inference_mode) or no weight requires grad; the export trace runs with grad
  on, so it records the op-by-op graph, and the expected outputs are computed the same way
  (the fast path would differ by up to 5e-7). `enable_nested_tensor=False` turns off the
  nested-tensor path of TransformerEncoder. MultiheadAttention is exported sequence-first
  (Transpose perm [1,0,2] around it), q is divided by sqrt(head dim) before MatMul, and
  out_proj is a Gemm on a [T*B, 32] reshape.
- BatchNorm: an eval-mode export (training=EVAL, the default) always folds BatchNorm into the
  preceding Conv (the exporter's eval peephole pass), even with do_constant_folding=False; the
  folded Convs get a bias input. `resnet_nofold` uses training=PRESERVE on the eval-mode
  module, giving BatchNormalization(epsilon 1e-5, momentum 0.9, no training_mode, 1 output)
  on the running statistics. AdaptiveAvgPool2d(1) is GlobalAveragePool, nn.Flatten is
  Flatten(axis 1), MaxPool has ceil_mode 0 and pads [1,1,1,1].
- External data (`mlp_external`): each initializer has data_location EXTERNAL and
  external_data keys location `model.onnx.data`, offset, length (no alignment padding);
  offsets are relative to the side file, which sits next to model.onnx.
"""


def write_readme(out, summaries):
    lines = [README_HEAD, "| folder | opset | inputs | outputs | notes |",
             "|---|---|---|---|---|"]
    for s in summaries:
        notes = s["note"] + (f" Batch-16 files: `*{s['extra']}.npy`." if s["extra"] else "")
        lines.append(f"| `{s['name']}` | {s['opset']} | {'<br>'.join(s['inputs'])} | "
                     f"{'<br>'.join(s['outputs'])} | {notes.strip()} |")
    lines += ["", "## ONNX op types per model", ""]
    for s in summaries:
        lines.append(f"- `{s['name']}` ({s['nodes']} nodes): {', '.join(s['ops'])}")
    union = sorted(set().union(*(s["ops"] for s in summaries)))
    lines += ["", f"Union ({len(union)} op types, the importer's to-do list): {', '.join(union)}",
              "", README_QUIRKS]
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(lines))
    return union


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=DEFAULT_OUT)
    out = p.parse_args().out
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(1234)
    m = make_mlp_and_gpt(gen)
    mlp, x, x16 = m["mlp"], m["x"], m["x16"]
    gpt, idx, idx16, targets = m["gpt"], m["idx"], m["idx16"], m["targets"]
    summaries = []

    # 1. mlp (and 6. mlp_external with the same weights), with batch-16 rebinding inputs.
    batch_axes = {"x": {0: "batch"}, "logits": {0: "batch"}}
    summaries.append(export(out, "mlp", mlp, (x,), ["x"], ["logits"], 13, batch_axes,
                            extra=(".b16", (x16,)),
                            note="Linear-ReLU-Linear-ReLU-Linear classifier."))
    summaries.append(export(out, "mlp_external", mlp, (x,), ["x"], ["logits"], 13, batch_axes,
                            external=True,
                            note="The `mlp` model and weights, every initializer stored as "
                                 "external data in `model.onnx.data` (one file, offsets in "
                                 "each initializer's external_data)."))

    # 2. gpt at opset 13 and 17, 3. gpt_loss, all with the same weights.
    gpt_axes = {"idx": {0: "batch"}, "logits": {0: "batch"}}
    gpt_note = ("nanoGPT-style decoder: vocab 64, d 32, 4 heads, block 8, 2 layers, tanh GELU, "
                "causal mask buffer + masked_fill(-inf).")
    summaries.append(export(out, "gpt", gpt, (idx,), ["idx"], ["logits"], 13, gpt_axes,
                            extra=(".b16", (idx16,)),
                            note=gpt_note + " LayerNorm is decomposed (ReduceMean, Sub, Pow, "
                                            "Sqrt, Div, Mul, Add)."))
    summaries.append(export(out, "gpt_opset17", gpt, (idx,), ["idx"], ["logits"], 17, gpt_axes,
                            note="`gpt` (same weights, same idx) at opset 17: LayerNorm is "
                                 "LayerNormalization."))
    summaries.append(export(out, "gpt_loss", GPTLoss(gpt), (idx, targets), ["idx", "targets"],
                            ["loss"], 13, {"idx": {0: "batch"}, "targets": {0: "batch"}},
                            note="`gpt` (same weights, same idx) returning the scalar "
                                 "F.cross_entropy(logits.view(-1, 64), targets.view(-1)) "
                                 "(mean, ignore_index -100)."))

    # 4. transformer_encoder at opset 13 and 17.
    torch.manual_seed(3)
    enc = make_transformer_encoder()
    reinit_matrices(enc, gen)
    randomize_norms(enc, gen)
    enc.eval()
    xe = torch.randn(2, 8, 32, generator=gen)
    enc_note = ("nn.TransformerEncoder(TransformerEncoderLayer(d_model 32, nhead 4, ff 64, "
                "dropout 0, batch_first, relu, post-norm), 2 layers), enable_nested_tensor=False; "
                "op-by-op graph (no fast path).")
    summaries.append(export(out, "transformer_encoder", enc, (xe,), ["x"], ["y"], 13,
                            note=enc_note))
    summaries.append(export(out, "transformer_encoder_opset17", enc, (xe,), ["x"], ["y"], 17,
                            note="`transformer_encoder` at opset 17."))

    # 5. resnet, folded and not.
    torch.manual_seed(4)
    resnet = ResNet()
    randomize_norms(resnet, gen)
    resnet.eval()
    xr = torch.randn(2, 3, 16, 16, generator=gen)
    r_axes = {"x": {0: "batch"}, "logits": {0: "batch"}}
    r_note = ("Conv-BN-ReLU-MaxPool, BasicBlock(8), BasicBlock(16, stride 2, 1x1 conv+BN "
              "shortcut), global average pool, Flatten, Linear(16, 10). Random BN statistics.")
    summaries.append(export(out, "resnet", resnet, (xr,), ["x"], ["logits"], 13, r_axes,
                            note=r_note + " Exported as usual: the exporter folds every "
                                          "BatchNorm into the Conv before it."))
    summaries.append(export(out, "resnet_nofold", resnet, (xr,), ["x"], ["logits"], 13, r_axes,
                            do_constant_folding=False, training=TrainingMode.PRESERVE,
                            note="`resnet` with do_constant_folding=False and "
                                 "training=PRESERVE (module in eval mode), which skips the "
                                 "exporter's Conv+BN fusion: inference BatchNormalization "
                                 "nodes stay."))

    union = write_readme(out, summaries)
    total = 0
    for root, _, files in os.walk(out):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print(f"union of op types ({len(union)}): {' '.join(union)}")
    print(f"total size of {out}: {total} bytes")
    assert total < 2 * 1024 * 1024


if __name__ == "__main__":
    main()
