"""The package sets how long shardc's OpenMP threads spin before they sleep, before its extension
loads OpenMP, and leaves the environment as it found it; a policy the user chose, or an OpenMP
that another module loaded first, is left alone."""
import os
import subprocess
import sys

PROBE = r"""
import os, sys
before = dict(os.environ)
if sys.argv[1] == "torch-first":
    import torch  # noqa: F401  loads libgomp first
import shardc
from shardc import _waitpolicy
n = _waitpolicy.spin_count()
assert 100 <= n <= 100000, n
assert dict(os.environ) == before, "the environment changed"
print("set" if shardc._set_policy else "left")
"""


def probe(mode, **env):
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    out = subprocess.run([sys.executable, "-c", PROBE, mode], env=dict(base, **env),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_sets_the_spin_before_openmp_loads():
    assert probe("alone") == "set"


def test_leaves_a_policy_the_user_chose():
    assert probe("alone", OMP_WAIT_POLICY="active") == "left"
    assert probe("alone", GOMP_SPINCOUNT="5") == "left"


def test_too_late_once_another_module_loaded_openmp():
    assert probe("torch-first") == "left"
