"""App scripts in the seed compiler's style: a model's own script compiles and runs it.

    # app.py
    import shardc.app
    shardc.app.main(build_model, lambda: (torch.randn(16, 3, 32, 32),))

    python app.py compile --pef-name net -b 16 -o1 --data-parallel -ws 2
    python app.py run --pef out/net/net.pef --input x=x.npy
    mpirun -np 2 python app.py run --pef out/net/net.pef --data x=x.npy ...

`compile` takes exactly `shardc compile`'s flags, the model being the script's (exported for
training unless --inference); every other command is `shardc`'s own (run, inspect, ...).
"""

import os
import sys
import tempfile

from . import _export, _shardc


def main(build_model, example_inputs, argv=None, input_names=None, output_names=None):
    """Runs the script's command line and exits with shardc's status.

    build_model: a torch.nn.Module or a function that makes one; example_inputs: a tensor, a
    tuple of tensors, or a function returning them (called only to compile).
    """
    argv = list(sys.argv if argv is None else argv)
    prog = os.path.basename(argv[0]) if argv else "app.py"
    args = argv[1:]
    if not args or args[0] != "compile" or any(a in ("-h", "--help") for a in args):
        if args[:1] == ["compile"]:
            print(f"{prog} compile: the model is the script's; the flags are shardc compile's "
                  "(its MODEL argument is given by the script)\n", flush=True)
        sys.exit(_shardc.main([prog] + args))
    module = build_model() if callable(build_model) and not _is_module(build_model) else build_model
    inputs = example_inputs() if callable(example_inputs) else example_inputs
    training = "--inference" not in args
    with tempfile.TemporaryDirectory(prefix="shardc-app-") as tmp:
        path = os.path.join(tmp, "model.onnx")
        _, _, batch = _export.export(module, inputs, path, training, input_names, output_names)
        given = any(a == "--batch-size" or a.startswith(("-b", "--batch-size=")) for a in args)
        if batch is not None and not given:
            args = args + ["-b", str(batch)]
        frozen = _export.frozen_names(module, path) if training else []
        flags = ["--untie-initializers"] + [f for name in frozen for f in ("--freeze", name)]
        status = _shardc.main([prog, "compile", path] + args[1:] + flags)
    sys.exit(status)


def _is_module(obj):
    try:
        import torch
        return isinstance(obj, torch.nn.Module)
    except ImportError:
        return False
