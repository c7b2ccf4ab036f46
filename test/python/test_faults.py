"""Faults around the Python module: Ctrl-C during training and during the search, several
threads on one Pef, a model that is not a module. Ctrl-C is sent to a child Python (its
main thread), as a terminal would."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import torch

import shardc

HERE = os.path.dirname(__file__)


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))


def dataset(n=64):
    g = np.random.default_rng(0)
    return g.standard_normal((n, 16)).astype(np.float32), g.integers(0, 4, n)


def child(code, tmp_path):
    """Runs `code` in a child Python that imports the same shardc and this file; returns the
    last line it printed."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(shardc.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([package, HERE]))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip().splitlines()[-1]


INTERRUPT = """
    import os, signal, threading, time
    import numpy as np
    import torch
    import shardc
    from test_faults import mlp, dataset

    def interrupt_after(seconds):
        t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
        t.start()
        return time.monotonic() + seconds
"""


def test_ctrl_c_stops_training_and_keeps_the_last_step(tmp_path):
    out = child(INTERRUPT + """
    x, y = dataset()
    pef = shardc.compile(mlp(), (torch.from_numpy(x[:8]),), loss="cross-entropy", pef_name="m", output_folder=".")
    at = interrupt_after(2.0)
    try:
        pef.train((x, y), epochs=100000, threads=1)
        raise SystemExit("train ended without the interrupt")
    except KeyboardInterrupt:
        late = time.monotonic() - at
    steps = pef._steps
    assert 0 < steps < 100000 * 8, steps
    # The weights kept are those of step `steps`: a fresh run of that many steps gets them.
    again = shardc.compile(mlp(), (torch.from_numpy(x[:8]),), loss="cross-entropy", pef_name="m2",
                           output_folder=".")
    again.train((x, y), steps=steps, threads=1)
    for k, v in again.state_dict().items():
        assert np.array_equal(v.numpy(), pef.state_dict()[k].numpy()), k
    print("late %.2f steps %d" % (late, steps))
    """, tmp_path)
    late = float(out.split()[1])
    assert late < 1.0, out


def test_ctrl_c_stops_the_search(tmp_path):
    out = child(INTERRUPT + """
    x, y = dataset()
    at = interrupt_after(2.0)
    try:
        shardc.compile(mlp(), (torch.from_numpy(x[:8]),), loss="cross-entropy", mesh="data=2,model=2",
                       auto_partition=True, search_budget="120s", pef_name="m",
                       output_folder=".")
        raise SystemExit("compile ended without the interrupt")
    except KeyboardInterrupt:
        late = time.monotonic() - at
    assert not [f for f in os.listdir(".") if f != "m" and f.startswith(".")], os.listdir(".")
    print("late %.2f" % late)
    """, tmp_path)
    assert float(out.split()[1]) < 2.0, out


def test_calls_from_two_threads_both_count(tmp_path):
    x, y = dataset()
    pef = shardc.compile(mlp(), (torch.from_numpy(x[:8]),), loss="cross-entropy", pef_name="m",
                         output_folder=str(tmp_path))
    errors = []

    def train():
        try:
            pef.train((x, y), epochs=3, threads=1)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=train) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert pef._steps == 2 * 3 * 8
    # One call after the other, as the lock made them.
    serial = shardc.compile(mlp(), (torch.from_numpy(x[:8]),), loss="cross-entropy", pef_name="s",
                            output_folder=str(tmp_path))
    serial.train((x, y), epochs=3, threads=1)
    serial.train((x, y), epochs=3, threads=1)
    for k, v in serial.state_dict().items():
        assert torch.equal(v, pef.state_dict()[k]), k


def test_compile_wants_a_module():
    with pytest.raises(TypeError, match="torch.nn.Module"):
        shardc.compile(42, (torch.zeros(2, 16),))
