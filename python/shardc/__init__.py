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

# Under mpirun, OpenMPI's plugins look up libmpi's symbols in the global namespace: the
# extension (which links libmpi) must be loaded with RTLD_GLOBAL.
_flags = sys.getdlopenflags()
sys.setdlopenflags(_flags | os.RTLD_GLOBAL)
try:
    from . import _shardc
finally:
    sys.setdlopenflags(_flags)

Error = _shardc.Error
Error.__doc__ = "A shardc error: a bad model, option, file or input, with the command line's message."
__version__ = _shardc.__version__

from .pef import Pef, compile, load  # noqa: E402

__all__ = ["Error", "Pef", "compile", "load", "__version__"]
