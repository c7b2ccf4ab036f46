"""The shardc Python module against PyTorch: inference, training steps, weights both ways,
app scripts, errors. Run by ctest (`python`) with PYTHONPATH set to build/python."""

import copy
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import shardc

sys.path.insert(0, os.path.dirname(__file__))
from models import GPT  # noqa: E402

torch.set_num_threads(1)


def gpt_batch(seed, batch=4, seq=16, vocab=64):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, vocab, (batch, seq), generator=g)
    return idx, torch.randint(0, vocab, (batch * seq,), generator=g)


def torch_adam_losses(module, batches, lr):
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    losses = []
    for idx, targets in batches:
        opt.zero_grad()
        loss = F.cross_entropy(module(idx), targets)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    return losses


def test_torchvision_inference_equals_pytorch(tmp_path):
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    x = torch.randn(2, 3, 64, 64)
    pef = shardc.compile(model, (x,), inference=True, pef_name="resnet18",
                         output_folder=str(tmp_path))
    assert pef.mode == "inference" and pef.input_names == ["x"]
    out = pef.run({"x": x})["output"]
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    # Arrays in input order work as well as a dict.
    np.testing.assert_array_equal(pef.run([x.numpy()])["output"], out)


def test_gpt_trains_with_pytorchs_losses(tmp_path):
    torch.manual_seed(1)
    module = GPT()
    reference = copy.deepcopy(module)
    batches = [gpt_batch(s) for s in range(3)]
    pef = shardc.compile(module, (batches[0][0],), loss="cross-entropy", lr=1e-2,
                         pef_name="gpt", output_folder=str(tmp_path))
    assert pef.unmapped == []
    # The module is untouched by the export (no BatchNorm update, same random state).
    for (k, a), b in zip(module.state_dict().items(), reference.state_dict().values()):
        assert torch.equal(a, b), k
    # One step per batch (labels are per token: a dataset of them would not align with idx's
    # samples).
    losses = [pef.run({"idx": idx, "labels": targets})["loss"][0] for idx, targets in batches]
    expected = torch_adam_losses(reference, batches, lr=1e-2)
    np.testing.assert_allclose(losses, expected, rtol=2e-4)
    assert losses[-1] < losses[0]
    # The trained weights under the module's names: PyTorch's, after the same 3 steps.
    trained = pef.state_dict()
    assert list(trained) == list(reference.state_dict())
    for k, v in reference.state_dict().items():
        got, want = trained[k].numpy(), v.numpy()
        if k.endswith("qkv.bias"):
            # The key bias's gradient is zero in exact arithmetic (softmax ignores a shift of
            # the scores per query): both sides step Adam on rounding noise. Compare q and v.
            got, want = np.delete(got, np.s_[32:64]), np.delete(want, np.s_[32:64])
        if k.endswith("qkv.weight"):
            # The same shift makes the key weights' gradient vanish along any input direction
            # that is nearly constant over the tokens: there Adam's steps follow rounding
            # (found 9e-5 apart on an Intel Xeon, under 1% of lr). Within 3% of lr.
            np.testing.assert_allclose(got[32:64], want[32:64], rtol=1e-3, atol=3e-4, err_msg=k)
            got, want = np.delete(got, np.s_[32:64], 0), np.delete(want, np.s_[32:64], 0)
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=2e-5, err_msg=k)
    # ... and they load into a fresh module, which then computes what the PEF computes.
    fresh = GPT()
    fresh.load_state_dict(trained)
    idx, targets = gpt_batch(7)
    out = pef.run({"idx": idx, "labels": targets}, sections="forward")
    with torch.no_grad():
        np.testing.assert_allclose(out["output"][0], fresh(idx).numpy(), rtol=1e-4, atol=1e-4)


def test_load_state_dict_round_trip(tmp_path):
    torch.manual_seed(2)
    module = GPT().eval()
    idx, _ = gpt_batch(3)
    pef = shardc.compile(module, (idx,), inference=True, pef_name="gpt_inf",
                         output_folder=str(tmp_path))
    other = GPT().eval()  # other weights
    pef.load_state_dict(other.state_dict())
    with torch.no_grad():
        np.testing.assert_allclose(pef.run({"idx": idx})["output"], other(idx).numpy(),
                                   rtol=1e-4, atol=1e-4)
    back = pef.state_dict()
    for k, v in other.state_dict().items():
        assert torch.equal(back[k], v), k
    with pytest.raises(shardc.Error, match="lacks parameter"):
        pef.load_state_dict({"wte.weight": other.wte.weight})


def test_batchnorm_trains_over_data_with_its_statistics(tmp_path):
    torch.manual_seed(3)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4),
                              torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(144, 5))
    reference = copy.deepcopy(net)
    xs, ys = torch.randn(12, 3, 8, 8), torch.randint(0, 5, (12,))
    pef = shardc.compile(net, (xs[:4],), loss="cross-entropy", optimizer="sgd", lr=0.1,
                         output_folder=str(tmp_path), pef_name="bn")
    metrics = tmp_path / "metrics.jsonl"
    records = pef.train((xs, ys), epochs=2, eval_data={"input": xs[:8], "labels": ys[:8]},
                        metrics=str(metrics))
    steps = [r for r in records if not r.get("eval")]
    assert [r["step"] for r in steps] == [1, 2, 3, 4, 5, 6]
    assert sum(1 for r in records if r.get("eval")) == 2
    assert len(metrics.read_text().splitlines()) == len(records)
    opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    expected = []
    for _ in range(2):
        for k in range(3):
            opt.zero_grad()
            loss = F.cross_entropy(reference(xs[4 * k:4 * k + 4]), ys[4 * k:4 * k + 4])
            expected.append(loss.item())
            loss.backward()
            opt.step()
    np.testing.assert_allclose([r["loss"] for r in steps], expected, rtol=1e-4)
    got = pef.state_dict()
    for k, v in reference.state_dict().items():
        np.testing.assert_allclose(got[k].numpy(), v.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)
    # A second call goes on from there, counting steps on, in the metrics file too; the
    # eval data's inputs may come in any order.
    more = pef.train((xs, ys), steps=1, metrics=str(metrics),
                     eval_data={"labels": ys[:4], "input": xs[:4]})
    assert [r["step"] for r in more] == [7, 7]
    assert [json.loads(line)["step"] for line in metrics.read_text().splitlines()][-2:] == [7, 7]
    assert pef.state_dict()["1.num_batches_tracked"] == 7
    with pytest.raises(shardc.Error, match="compiled for batches of 4"):
        pef.train((xs, ys), batch_size=6)


def test_data_parallel_matches_one_device(tmp_path):
    torch.manual_seed(5)
    module = GPT()
    idx, targets = gpt_batch(6)
    one = shardc.compile(module, (idx,), loss="cross-entropy", output_folder=str(tmp_path),
                         pef_name="one")
    dp = shardc.compile(module, (idx[:2],), loss="cross-entropy", data_parallel=2,
                        output_folder=str(tmp_path), pef_name="dp")
    assert one.plan() == {}
    plan = dp.plan()
    assert plan["idx"].startswith("[{data}") and plan["wte.weight"] == "[{}, {}]", plan
    a = one.run({"idx": idx, "labels": targets}, steps=2)["loss"]
    stats = tmp_path / "stats.json"
    b = dp.run({"idx": idx, "labels": targets}, steps=2, stats_json=str(stats))["loss"]
    np.testing.assert_allclose(b, a, rtol=1e-5)
    # The report page, with the run's measurements beside the estimate.
    page = dp.report(stats=stats)
    assert page == str(tmp_path / "dp" / "dp.html")
    html = open(page, encoding="utf-8").read()
    # The module is recorded by its class, the same for every compile of it.
    assert dp.inspect()["compile_args"][2] == "models.GPT (exported by shardc.compile)"
    assert "<td>model</td><td>models.GPT (exported by shardc.compile)</td>" in html
    assert '<section id="mesh">' in html and '<section id="measured">' in html
    assert "<code>[{data}, {}]</code>" in html


APP = """
import sys, torch
sys.path.insert(0, {models!r})
import shardc.app
from models import GPT
torch.manual_seed(4)
shardc.app.main(GPT, lambda: (torch.zeros(2, 16, dtype=torch.long),))
"""


def test_app_script_compile_and_run(tmp_path):
    script = tmp_path / "app.py"
    script.write_text(APP.format(models=os.path.dirname(__file__)))
    env = dict(os.environ)
    run = lambda *a: subprocess.run([sys.executable, str(script), *a], cwd=tmp_path, env=env,
                                    capture_output=True, text=True)
    r = run("compile", "--pef-name", "app", "--inference", "-b", "3", "-o1")
    assert r.returncode == 0, r.stderr
    assert "wrote out/app/app.pef" in r.stdout
    idx, _ = gpt_batch(5, batch=3)
    np.save(tmp_path / "idx.npy", idx.numpy())
    r = run("run", "--pef", "out/app/app.pef", "--input", "idx=idx.npy", "--output-dir", "res")
    assert r.returncode == 0, r.stderr
    torch.manual_seed(4)
    with torch.no_grad():
        expected = GPT().eval()(idx).numpy()
    np.testing.assert_allclose(np.load(tmp_path / "res" / "output.npy"), expected, rtol=1e-4,
                               atol=1e-4)
    r = run("compile", "--pef-name", "bad", "--inference", "-o2")
    assert r.returncode == 1 and "not expected: -o2" in r.stderr
    assert not (tmp_path / "out" / "bad").exists()


def test_errors_are_shardc_errors(tmp_path):
    with pytest.raises(shardc.Error, match="no-such-model.onnx"):
        shardc.compile(str(tmp_path / "no-such-model.onnx"))
    with pytest.raises(shardc.Error, match="--momentum applies to --optimizer sgd"):
        shardc.compile(GPT(), (gpt_batch(0)[0],), loss="cross-entropy", momentum=0.9,
                       output_folder=str(tmp_path))
    idx, _ = gpt_batch(0)
    pef = shardc.compile(GPT().eval(), (idx,), inference=True, output_folder=str(tmp_path),
                         pef_name="e")
    with pytest.raises(shardc.Error, match="input 'idx' expects i64"):
        pef.run({"idx": idx.float()})
    with pytest.raises(shardc.Error, match="train runs a training PEF"):
        pef.train({"idx": idx})
    with pytest.raises(shardc.Error, match="'idz': the PEF has no such input"):
        pef.run({"idx": idx, "idz": idx})
    with pytest.raises(shardc.Error, match="not expected: 1 --no-such"):
        pef.run({"idx": idx}, no_such=1)
    assert issubclass(shardc.Error, Exception)
