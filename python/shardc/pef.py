"""shardc.compile and the Pef it returns: run, train, weights in and out."""

import functools
import json
import os
import tempfile
import threading
from collections import OrderedDict

import numpy as np

from . import _export, _shardc
from ._flags import to_flags


def compile(model, example_inputs=None, *, inference=False, batch_size=None, optimizer="adam",
            lr=1e-3, loss=None, labels=None, mesh=None, strategy=None, auto_partition=False,
            arch="native", opt_level=3, optimization_rules=None, hypersections=False,
            data_parallel=None, tensor_parallel=None, n_chips=None, pef_name=None,
            output_folder="out", input_names=None, output_names=None, **options):
    """Compiles `model` into a PEF (as `shardc compile`) and returns it as a `Pef`.

    model: a torch.nn.Module (with `example_inputs`, a tensor or a tuple of tensors, one per
        argument of forward), or the path of an .onnx or shardc text-IR file. A module is
        exported by shardc itself, as training needs (training mode, no constant folding,
        every parameter under its module name); its inputs are named after forward's
        arguments (or `input_names`), its outputs `output` (`output0`, ... for several; or
        `output_names`). Parameters with requires_grad False, and float buffers the program
        would otherwise train, are frozen.
    inference: compile the forward pass only (default: the training step).
    batch_size: rebind the inputs' batch dimension (-b); with data_parallel, one replica's.
    optimizer, lr: sgd, adam (default) or adamw, and the learning rate (default 1e-3, as
        torch.optim.Adam; note `shardc compile`'s defaults are sgd and 0.01).
    loss, labels: add a loss on output 0, "cross-entropy" or "mse", fed by an input named
        `labels` (or this name); without it the model's scalar output is the loss.
    mesh: "data=2,model=4" or {"data": 2, "model": 4}; strategy: a strategy file;
        auto_partition: search the shardings on the mesh.
    arch: native, cpu, sn10, sn20, sn30, sn40l, a100, h100, h200, or a target file.
    opt_level: 0, 1 or 3; optimization_rules: a rules file for opt_level 1;
        hypersections: compile repeated layers once.
    data_parallel: N replicas (--data-parallel -ws N); tensor_parallel: "batch" or
        "weight", over n_chips.
    pef_name, output_folder: the PEF goes to OUTPUT_FOLDER/NAME/NAME.pef.
    options: any other `shardc compile` flag, named with '_' for '-': compiler_mode="nlp",
        momentum=0.9, weight_decay=0.01, search_budget=300, verbose=True, estimate_only=True...
        (True for a flag alone; a list for several values).

    Raises shardc.Error with the command line's message on a bad model or option.
    """
    flags = {"inference": inference, "batch_size": batch_size, "loss": loss, "labels": labels,
             "mesh": mesh, "strategy": strategy, "auto_partition": auto_partition, "arch": arch,
             "opt_level": opt_level, "optimization_rules": optimization_rules,
             "hypersections": hypersections, "data_parallel": data_parallel,
             "tensor_parallel": tensor_parallel, "n_chips": n_chips, "pef_name": pef_name,
             "output_folder": output_folder}
    if not inference:
        flags.update(optimizer=optimizer, learning_rate=lr)
    flags.update(options)
    module = None
    with tempfile.TemporaryDirectory(prefix="shardc-export-") as tmp:
        if isinstance(model, (str, os.PathLike)):
            path = os.fspath(model)
        else:
            _export.require_module(model)
            module = model
            path = os.path.join(tmp, "model.onnx")
            # An eval-mode export still merges equal initializers (fresh BatchNorms' ones):
            # each gets its own copy back, under its module name.
            flags["untie_initializers"] = True
            _, _, batch = _export.export(module, example_inputs, path, not inference,
                                         input_names, output_names)
            if flags["batch_size"] is None:
                flags["batch_size"] = batch
            if not inference:
                frozen = _export.frozen_names(module, path)
                if frozen:
                    given = flags.get("freeze") or []
                    flags["freeze"] = list([given] if isinstance(given, str) else given) + frozen
        # The PEF records the module's class, not the temporary file it was exported to.
        recorded = "" if module is None else \
            f"{type(module).__module__}.{type(module).__qualname__} (exported by shardc.compile)"
        result = _shardc.compile(["compile", path] + to_flags(flags), recorded)
    if result["interrupted"] is not None:
        raise result["interrupted"]
    return Pef(result["pef"] or None, estimate=result["estimate"], log=result["log"] or None,
               module=module)


def load(path):
    """The PEF at `path` (as `shardc compile` wrote it), to run, train or inspect."""
    return Pef(os.fspath(path))


def _numpy(x, what):
    try:
        import torch
        if isinstance(x, torch.Tensor):
            x = x.detach().cpu()
            if x.dtype == torch.bfloat16:  # numpy has none: its bits, as shardc takes them
                return x.view(torch.int16).numpy().view(np.uint16)
            return x.numpy()
    except ImportError:
        pass
    if isinstance(x, np.ndarray):
        return x
    raise TypeError(f"{what}: expected a numpy array or a torch tensor, got {type(x).__name__}")


def _serialized(method):
    """One call at a time on a Pef: a second thread's call waits for the first, so that no
    training is lost (each call starts from the weights the one before reached)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return wrapper


class Pef:
    """A compiled model: its PEF file, and the weights and optimizer state it has reached.

    Training through `run` or `train` updates the weights this object holds (the file stays
    as compiled); `state_dict` reads them, `load_state_dict` replaces them. Calls from several
    threads run one after another. Ctrl-C (or another signal whose handler raises) stops a
    run or training between steps: the Pef keeps the weights of the last finished step, and
    the handler's exception (KeyboardInterrupt) is raised.
    """

    def __init__(self, path, estimate=None, log=None, module=None):
        self.path = path        # the PEF file (None for an estimate_only compile)
        self.estimate = estimate  # the cost model's report for one step, as text
        self.log = log          # the compile log
        self._params = None     # None: the PEF's own
        self._state = None
        self._steps = 0         # training steps run so far (step numbers go on from here)
        self._since_load = 0    # of them, since the module's (or load_state_dict's) weights
        self._module_state, self._module_params = None, []
        self._lock = threading.RLock()
        if module is not None:
            self._module_params = [k for k, _ in module.named_parameters()]
            self._module_state = OrderedDict(
                (k, v.detach().clone()) for k, v in module.state_dict().items())
        if path is not None:
            self._info = json.loads(_shardc.inspect(path, True, False))
            self.unmapped = self._check_mapping()
        else:
            self._info, self.unmapped = None, []

    def __repr__(self):
        return f"shardc.Pef({self.path!r})"

    def _need_file(self):
        if self.path is None:
            raise _shardc.Error("this compile was estimate_only: it wrote no PEF to run")

    def inspect(self, sections=False):
        """`shardc inspect --json` as a dict: mode, target, mesh, inputs, outputs, parameters
        (with their shardings when partitioned), plan, sections, cost."""
        self._need_file()
        return json.loads(_shardc.inspect(self.path, True, sections))

    def report(self, output=None, metrics=None, stats=None):
        """Writes `shardc report`'s HTML page of this PEF (default: beside it, .html) and
        returns its path. metrics: a `train(..., metrics=FILE)` file, for the loss and
        throughput curves; stats: a `run(..., stats_json=FILE)` file, for measured against
        estimated."""
        self._need_file()
        return _shardc.report(self.path, str(output or ""), str(metrics or ""), str(stats or ""))

    @property
    def mode(self):
        """"training" or "inference"."""
        self._need_file()
        return self._info["mode"]

    @property
    def input_names(self):
        """The PEF's inputs in order (what `run` takes positionally)."""
        self._need_file()
        return [i["name"] for i in self._info["inputs"]]

    @property
    def output_names(self):
        """The PEF's outputs in order (the keys of `run`'s result)."""
        self._need_file()
        return [o["name"] for o in self._info["outputs"]]

    def plan(self):
        """Every argument's sharding over the mesh, {name: text} as `shardc inspect` prints
        it (`[{data}, {}]`: dimension 0 split over the axis `data`); empty on one device."""
        self._need_file()
        args = self._info.get("partition", {}).get("arguments", [])
        return {a["name"]: a["sharding"] for a in args}

    def _inputs(self, inputs, what):
        if inputs is None:
            return {}
        if isinstance(inputs, dict):
            return {str(k): _numpy(v, f"{what} '{k}'") for k, v in inputs.items()}
        if hasattr(inputs, "tensors"):  # torch.utils.data.TensorDataset
            inputs = inputs.tensors
        if not isinstance(inputs, (tuple, list)):
            inputs = (inputs,)
        names = self.input_names
        if len(inputs) > len(names):
            raise _shardc.Error(f"{what}: {len(inputs)} arrays for the PEF's {len(names)} "
                                f"inputs ({', '.join(names)})")
        return {n: _numpy(v, f"{what} '{n}'") for n, v in zip(names, inputs)}

    def _run(self, args, inputs=None, data=None, eval_data=None, steps=0):
        """Runs; a training run that took `steps` steps moves the weights and the count."""
        self._need_file()
        resumed = "--resume" in args
        r = _shardc.run(["run", "--pef", self.path] + args, inputs or {}, data or {},
                        eval_data or {}, self._params, self._state,
                        0 if resumed else self._steps)
        if self._info["mode"] == "training":
            self._params, self._state = r["params"], r["state"]
            if resumed:
                done = [rec["step"] for rec in map(json.loads, r["records"]) if "eval" not in rec]
                self._steps = self._since_load = done[-1] if done else self._steps
            else:
                ran = r["steps_run"] if r["interrupted"] is not None else steps
                self._steps += ran
                self._since_load += ran
        return r

    @staticmethod
    def _raise_if_interrupted(r):
        if r["interrupted"] is not None:
            raise r["interrupted"]

    @_serialized
    def run(self, inputs, *, steps=None, **options):
        """Runs the PEF on `inputs` (a dict by input name, or arrays in the PEF's input order;
        numpy arrays or torch tensors) in this process, as `shardc run` does; returns the
        outputs as numpy arrays by name.

        A training PEF runs `steps` (default 1) training steps on that batch and stacks each
        step's outputs along a new first axis (the loss has shape [steps]); the weights move.
        options: other `shardc run` flags (threads=2, replicas=4, seed=1, reference=True,
        sections="forward", ...).
        """
        forward = options.get("sections") is not None
        r = self._run(to_flags(dict(options, steps=steps)), self._inputs(inputs, "input"),
                      steps=0 if forward else steps or 1)
        self._raise_if_interrupted(r)
        return dict(r["outputs"])

    @_serialized
    def train(self, data, *, epochs=None, steps=None, batch_size=None, eval_data=None,
              eval_every=None, shuffle=False, data_seed=None, checkpoint_dir=None,
              checkpoint_every=None, metrics=None, **options):
        """Trains over `data` (arrays with the samples along the first axis, by input name or
        in the PEF's input order, or a TensorDataset), a batch per step, for `epochs` passes
        (default 1) or `steps` steps; returns each step's record ({step, epoch, loss, lr,
        samples, samples_per_s, step_s, wall_s}) and each evaluation's ({eval, step, epoch,
        eval_loss, batches}) as dicts, the records `shardc run --metrics` writes.

        batch_size: the PEF's batch is fixed when compiled; given, it must equal it.
        eval_data: held-out samples evaluated at each epoch's end (or every `eval_every`
        steps); metrics: also write the records to this .jsonl file; checkpoint_dir,
        checkpoint_every: checkpoints as `shardc run` writes them. Steps count on across calls.
        """
        if self.mode != "training":
            raise _shardc.Error(f"train runs a training PEF; {self.path} is {self.mode}")
        if batch_size is not None:
            compiled = self._info["inputs"][0]["shape"][0] if self._info["inputs"] else None
            if batch_size != compiled:
                raise _shardc.Error(f"batch_size {batch_size}: {self.path} was compiled for "
                                    f"batches of {compiled} (compile with batch_size="
                                    f"{batch_size})")
        args = to_flags(dict(options, epochs=epochs, steps=steps, eval_every=eval_every,
                             shuffle=shuffle, data_seed=data_seed, checkpoint_dir=checkpoint_dir,
                             checkpoint_every=checkpoint_every, metrics=metrics))
        data = self._inputs(data, "data")
        eval_data = self._inputs(eval_data, "eval data")
        before = self._steps
        r = self._run(args, data=data, eval_data=eval_data, steps=0)
        records = [json.loads(line) for line in r["records"]]
        if "--resume" not in args:
            ran = sum(1 for rec in records if not rec.get("eval"))
            self._steps, self._since_load = before + ran, self._since_load + ran
        self._raise_if_interrupted(r)
        return records

    def _weights(self):
        if self._params is None:
            self._need_file()
            w = _shardc.weights(self.path)
            self._params, self._state = w["params"], w["state"]
        return self._params, self._state

    @_serialized
    def state_dict(self):
        """The weights now. Compiled from a module: its state_dict's keys, as torch tensors
        (parameters and BatchNorm statistics from the PEF; what the PEF does not hold, such
        as buffers it folded into constants, as the module had them; num_batches_tracked
        counts the steps trained), so `module.load_state_dict(pef.state_dict())` works.
        Otherwise: the PEF's parameters and model state (not the optimizer's) as numpy arrays.
        """
        params, state = self._weights()
        if self._module_state is None:
            out = OrderedDict(params)
            out.update((k, v) for k, v in state.items() if not _optimizer_entry(k, params))
            return out
        import torch
        out = OrderedDict()
        for key, initial in self._module_state.items():
            held = params.get(key, state.get(key))
            if held is not None:
                out[key] = (torch.from_numpy(held.view(np.int16)).view(torch.bfloat16)
                            if held.dtype == np.uint16 else torch.from_numpy(held))
            elif key.endswith("num_batches_tracked"):
                out[key] = initial + self._since_load
            else:
                out[key] = initial.clone()
        return out

    @_serialized
    def load_state_dict(self, state_dict):
        """Replaces the weights: every parameter of the PEF (and its model state: BatchNorm
        statistics) from `state_dict` by name (torch tensors or numpy arrays); keys the PEF
        does not hold are ignored. The optimizer's state is kept."""
        params, state = self._weights()
        missing = [k for k in params if k not in state_dict]
        if missing:
            raise _shardc.Error(f"load_state_dict: lacks parameter(s) {', '.join(missing)} of "
                                f"{self.path}")

        def take(k, old):
            new = np.ascontiguousarray(_numpy(state_dict[k], f"state_dict '{k}'"))
            if new.shape != old.shape or new.dtype != old.dtype:
                raise _shardc.Error(f"load_state_dict: '{k}' is {new.dtype}{list(new.shape)}, "
                                    f"the PEF holds {old.dtype}{list(old.shape)}")
            return new.copy()

        self._params = {k: take(k, v) for k, v in params.items()}
        self._state = {k: take(k, v) if k in state_dict else v for k, v in state.items()}
        # What the PEF does not hold (buffers it folded, num_batches_tracked) comes from here
        # too from now on.
        if self._module_state is not None:
            import torch
            for k in self._module_state:
                if k in state_dict and k not in params and k not in state:
                    v = state_dict[k]
                    self._module_state[k] = (v.detach().clone() if isinstance(v, torch.Tensor)
                                             else torch.from_numpy(np.array(v)))
            self._since_load = 0

    def _check_mapping(self):
        """The module's parameters the PEF does not hold under their names (unused in forward,
        or renamed by the exporter); warns about them."""
        held = {p["name"] for p in self._info["parameters"]}
        missing = [k for k in self._module_params if k not in held]
        if missing:
            import warnings
            warnings.warn("shardc: the PEF holds no value for " + ", ".join(missing) +
                          " (unused by forward, or renamed by the exporter): state_dict() "
                          "returns them as the module had them",
                          stacklevel=3)
        return missing


def _optimizer_entry(name, params):
    """Whether an opt_state entry is the optimizer's (moments, step count, the dropout
    generator's state) rather than the model's."""
    if name in ("step", "dropout.rng"):
        return True
    base, _, suffix = name.rpartition(".")
    return base in params and suffix in ("exp_avg", "exp_avg_sq", "momentum_buffer")
