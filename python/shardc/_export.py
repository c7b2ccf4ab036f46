"""A torch.nn.Module to ONNX, the way shardc trains it."""

import copy
import inspect


def require_module(model):
    """Raises TypeError unless `model` is a torch.nn.Module."""
    import torch
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"shardc.compile: model must be a torch.nn.Module or the path of an .onnx "
                        f"or text-IR file, not {type(model).__name__}")


def _as_tuple(example_inputs):
    if example_inputs is None:
        raise TypeError("compiling a torch.nn.Module needs example_inputs (a tensor or a tuple "
                        "of tensors, one per argument of forward)")
    return tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)


def input_names_of(module, n):
    """forward's argument names for its first n arguments (input0.. where it has none)."""
    names = []
    try:
        for p in inspect.signature(module.forward).parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(p.name)
    except (TypeError, ValueError):
        pass
    return names[:n] if len(names) >= n else [f"input{i}" for i in range(n)]


def export(module, example_inputs, path, training, input_names=None, output_names=None):
    """Writes `module` to `path` as ONNX, its inputs' batch axis symbolic (compile it with
    -b); returns (input names, output names, the example's batch or None).

    Exports keep every parameter under its module name and untied. Training: training mode
    (BatchNorm with batch statistics, Dropout on) and no constant folding (an eval-mode,
    folded export merges equal initializers, such as every untrained LayerNorm's ones, and
    renames transposed weights). The export traces a copy, so the module's BatchNorm
    statistics and PyTorch's random-number state stay as they were.
    """
    import torch

    args = _as_tuple(example_inputs)
    for i, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            raise TypeError(f"example_inputs[{i}] is {type(a).__name__}, not a torch.Tensor")
    names = list(input_names) if input_names else input_names_of(module, len(args))
    with torch.random.fork_rng(devices=[]):
        twin = copy.deepcopy(module)
        if not output_names:
            with torch.no_grad():
                out = twin.eval()(*args)
            n = len(out) if isinstance(out, (tuple, list)) else 1
            output_names = ["output"] if n == 1 else [f"output{i}" for i in range(n)]
        # PRESERVE in eval mode rather than EVAL: EVAL folds each BatchNorm into the conv
        # before it under a new name, and the weights would no longer be the module's.
        mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.PRESERVE
        twin.train(training)
        # The batch axis left free, so that batch_size (-b) and data parallelism rebind it.
        batch = {n: {0: "batch"} for n, a in zip(names, args) if a.dim() > 0}
        torch.onnx.export(twin, args, path, training=mode, do_constant_folding=False,
                          input_names=names, output_names=list(output_names),
                          dynamic_axes=batch)
    if training:
        _restore_buffers(module, path)
    dims = [a.shape[0] for a in args if a.dim() > 0]
    return names, list(output_names), dims[0] if dims else None


def frozen_names(module, path):
    """What a training compile must not train: parameters with requires_grad False, and the
    float buffers the importer would take for weights (finite float initializers other than
    training BatchNorm's running statistics, which it carries as state)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    names = [n for n, p in module.named_parameters() if not p.requires_grad]
    buffers = {n for n, _ in module.named_buffers()}
    graph = onnx.load(path).graph
    stats = {i for node in graph.node if node.op_type == "BatchNormalization"
             for i in node.input[3:5]}
    for init in graph.initializer:
        if init.name in buffers and init.name not in stats:
            a = numpy_helper.to_array(init)
            if np.issubdtype(a.dtype, np.floating) and np.isfinite(a).all():
                names.append(init.name)
    return names


def _restore_buffers(module, path):
    """Tracing in training mode ran the copy's forward once, moving its BatchNorm statistics
    before the exporter read them: the file gets the module's own back."""
    import onnx
    from onnx import numpy_helper

    buffers = {n: b.detach().cpu().numpy() for n, b in module.named_buffers()}
    model = onnx.load(path)
    changed = False
    for init in model.graph.initializer:
        if init.name in buffers:
            init.CopyFrom(numpy_helper.from_array(buffers[init.name], init.name))
            changed = True
    if changed:
        onnx.save(model, path)
