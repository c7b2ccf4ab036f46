"""shardc from Python: compile a model into a PEF, run and train it in this process, and hand
the trained weights back to PyTorch.

    import shardc
    pef = shardc.compile(model, (x,), loss="cross-entropy", lr=1e-3)
    metrics = pef.train({"x": xs, "labels": ys}, epochs=2)
    model.load_state_dict(pef.state_dict())

`model` is a torch.nn.Module (shardc exports it to ONNX itself, as training needs), an
.onnx file or a shardc text-IR file. Every option of `shardc compile` and `shardc run` is a
keyword argument (its flag's name with '_' for '-'). shardc's errors are `shardc.Error`,
with the command line's messages.

App scripts in the seed compiler's style: see `shardc.app.main`.
"""

import os
import sys


def _choose_wait_policy():
    """OpenMP threads that spin while they wait hold the cores a descheduled thread needs (a
    step beside one busy process took several times its idle time). libgomp reads how long
    they spin when it loads: unless the user chose a policy, or another module (PyTorch) loaded
    libgomp already (then it is too late), shardc's threads spin for about 20 us before they
    sleep, as the command line's do. Returns whether it set the environment, to be put back
    once the extension has loaded."""
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return False
    try:
        with open("/proc/self/maps") as maps:
            if "libgomp" in maps.read():
                return False
    except OSError:
        return False
    from . import _waitpolicy

    os.environ["GOMP_SPINCOUNT"] = str(_waitpolicy.spin_count())
    return True


_set_policy = _choose_wait_policy()
# Under mpirun, OpenMPI's plugins look up libmpi's symbols in the global namespace: the
# extension (which links libmpi) must be loaded with RTLD_GLOBAL.
_flags = sys.getdlopenflags()
sys.setdlopenflags(_flags | os.RTLD_GLOBAL)
try:
    from . import _shardc
finally:
    sys.setdlopenflags(_flags)
    if _set_policy:  # read by now; the user's child processes get their own environment
        del os.environ["GOMP_SPINCOUNT"]

Error = _shardc.Error
Error.__doc__ = "A shardc error: a bad model, option, file or input, with the command line's message."
__version__ = _shardc.__version__

from .pef import Pef, compile, load  # noqa: E402

__all__ = ["Error", "Pef", "compile", "load", "__version__"]
