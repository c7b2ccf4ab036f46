#!/usr/bin/python3
"""Faults users meet around a run, each provoked for real and checked: outputs pointed at
device nodes, FIFOs and links; a data file rewritten during training; two runs sharing a
checkpoint folder and the temporaries of dead runs; a compile stopped by a signal; a loss
that turns non-finite; a weight that holds NaN; a fusion rule named in invalid UTF-8; a
YAML file nested 100,000 levels deep. Prints one line per scenario, "ok" or what went
wrong, then a summary; exits 1 when any scenario failed.

Device nodes are made with mknod in the scenario's own folder (never the system's /dev),
which needs root (as CI runs); elsewhere that scenario is reported as skipped.

Usage: run_faults.py SHARDC WORK_DIR
"""
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GPT_LOSS = os.path.join(REPO, "test/import/Inputs/gpt_loss/model.onnx")
EPOCHS = os.path.join(REPO, "test/train/Inputs/gpt_epochs")
FIRST_RULE = b"attention:"  # rules/default.yaml's first rule


class Failed(Exception):
    pass


class Skipped(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


class Faults:
    def __init__(self, shardc, work):
        self.shardc, self.work = shardc, work
        self.results = []

    def sh(self, *args, cwd=None, timeout=120):
        return subprocess.run([self.shardc, *map(str, args)], capture_output=True, text=True,
                              cwd=cwd or self.work, stdin=subprocess.DEVNULL, timeout=timeout)

    def refused(self, r, *words):
        """A clean refusal: exit 1, `shardc: error:` and each of `words` on stderr."""
        check(r.returncode == 1, "exit %d, not 1; stderr: %s" % (r.returncode, r.stderr[-400:]))
        check("shardc: error:" in r.stderr, "no 'shardc: error:' in: " + r.stderr[-400:])
        for w in words:
            check(w in r.stderr, "the error does not say %r: %s" % (w, r.stderr[-400:]))

    def accepted(self, r):
        check(r.returncode == 0, "exit %d; stderr: %s" % (r.returncode, r.stderr[-400:]))

    def scenario(self, name, fn):
        folder = os.path.join(self.work, name)
        os.makedirs(folder)
        try:
            fn(folder)
            self.results.append((name, "ok"))
        except Failed as e:
            self.results.append((name, "FAILED: " + str(e)))
        except Skipped as e:
            self.results.append((name, "skipped: " + str(e)))
        except subprocess.TimeoutExpired as e:
            self.results.append((name, "FAILED: hung (%s)" % " ".join(map(str, e.cmd))))

    # -- fixtures -------------------------------------------------------------------------

    def prepare(self):
        r = self.sh("compile", GPT_LOSS, "-b", "2", "--optimizer", "sgd", "--output-folder",
                    self.work, "--pef-name", "train")
        self.accepted(r)
        self.pef = os.path.join(self.work, "train", "train.pef")
        idx, targets = np.load(EPOCHS + "/idx.npy"), np.load(EPOCHS + "/targets.npy")
        # Enough samples for a run of a few seconds.
        self.idx, self.targets = np.tile(idx, (100, 1)), np.tile(targets, (100, 1))
        self.data = ["--data", "idx=" + EPOCHS + "/idx.npy", "--data",
                     "targets=" + EPOCHS + "/targets.npy"]

    @staticmethod
    def start_training(cmd):
        """Starts a training run and returns once it has taken its first step (a slow,
        sanitized build may spend a while loading), with a thread collecting its stderr."""
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines, stepped = [], threading.Event()

        def read():
            for line in p.stderr:
                lines.append(line)
                if line.startswith("step "):
                    stepped.set()
            stepped.set()  # ended before a step: the caller's checks say how

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        stepped.wait(120)
        return p, lines, reader

    @staticmethod
    def finish(run, timeout=120):
        p, lines, reader = run
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            raise Failed("the run went on: " + " ".join(map(str, p.args)))
        reader.join(10)
        return p.returncode, "".join(lines)

    def big_data(self, folder):
        x, y = os.path.join(folder, "x.npy"), os.path.join(folder, "y.npy")
        np.save(x, self.idx)
        np.save(y, self.targets)
        return x, y, ["--data", "idx=" + x, "--data", "targets=" + y]

    def train(self, folder, *extra, timeout=120):
        return self.sh("run", "--pef", self.pef, *self.data, "--steps", 3, "--output-dir",
                       os.path.join(folder, "out"), *extra, timeout=timeout)

    # -- 1. outputs to special files ------------------------------------------------------

    def special_outputs(self, folder):
        if os.geteuid() != 0:
            raise Skipped("mknod needs root")
        null, full = os.path.join(folder, "null"), os.path.join(folder, "full")
        try:
            os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        except PermissionError:  # a container without CAP_MKNOD
            raise Skipped("mknod is not permitted here")
        metrics = os.path.join(folder, "m.jsonl")
        self.accepted(self.train(folder, "--metrics", metrics))
        for flag in ["--save-weights", "--save-state", "--stats-json", "--metrics"]:
            self.accepted(self.train(folder, flag, null))
            check(stat.S_ISCHR(os.stat(null).st_mode), flag + " /dev/null-like: replaced")
            self.refused(self.train(folder, flag, full), "No space left on device")
            check(stat.S_ISCHR(os.stat(full).st_mode), flag + " /dev/full-like: replaced")
        # Standard output is an output too.
        with open(full, "w") as out:
            r = subprocess.run([self.shardc, "inspect", self.pef], stdout=out,
                               stderr=subprocess.PIPE, text=True, timeout=60)
        self.refused(r, "standard output: write failed")
        self.accepted(self.sh("report", self.pef, "-o", null))
        check(stat.S_ISCHR(os.stat(null).st_mode), "report -o: replaced the device")
        self.refused(self.sh("report", self.pef, "-o", full), "No space left on device")
        # A bad output among several leaves none of them: output.npy is not written either.
        out = os.path.join(folder, "bad")
        r = self.sh("run", "--pef", self.pef, *self.data, "--steps", 2, "--output-dir", out,
                    "--save-weights", full)
        self.refused(r, "No space left on device")
        check(not os.path.exists(os.path.join(out, "loss.npy")),
              "loss.npy written though --save-weights failed")

    def fifo_and_links(self, folder):
        fifo = os.path.join(folder, "fifo")
        os.mkfifo(fifo)
        # Nobody reads: refused at once, not waited on.
        self.refused(self.train(folder, "--save-weights", fifo, timeout=60), "no reader")
        check(stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced")
        # A reader: the weights stream through it.
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
        reader.start()
        time.sleep(0.2)
        r = self.train(folder, "--save-weights", fifo)
        reader.join(30)
        self.accepted(r)
        check(got and got[0][:2] == b"PK", "the FIFO's reader got no .npz")
        # A link is followed: its target gets the file, the link stays a link.
        target = os.path.join(folder, "target.npz")
        link = os.path.join(folder, "link.npz")
        os.symlink("target.npz", link)
        self.accepted(self.train(folder, "--save-weights", link))
        check(os.path.islink(link), "the link was replaced by a file")
        check(open(target, "rb").read(2) == b"PK", "the link's target holds no .npz")
        # --metrics into a folder that does not exist yet, as every other output.
        self.accepted(self.train(folder, "--metrics", os.path.join(folder, "new", "m.jsonl")))
        check(os.path.getsize(os.path.join(folder, "new", "m.jsonl")) > 0, "no metrics written")

    # -- 3. a data file rewritten during a run --------------------------------------------

    def data_rewritten(self, folder):
        for how in ["truncated", "rewritten"]:
            x, y, data = self.big_data(folder)
            ck = os.path.join(folder, "ck-" + how)
            run = self.start_training([self.shardc, "run", "--pef", self.pef, *data, "--epochs",
                                       "1000", "--checkpoint-dir", ck, "--checkpoint-every",
                                       "100000", "--output-dir", os.path.join(folder, "out")])
            time.sleep(0.3)
            # numpy rewrites the file in place (same inode): fewer samples, or the same
            # number with other values.
            np.save(x, self.idx[:10] if how == "truncated" else (self.idx + 1) % 64)
            code, err = self.finish(run, 60)
            check(code == 1, "%s: exit %d: %s" % (how, code, err[-300:]))
            check("shardc: error: " + x in err, how + ": the error does not name the file: " +
                  err[-300:])
            check("checkpointed in" in err, how + ": no checkpoint of the finished steps")
            steps = [d for d in os.listdir(ck) if d.startswith("step-")]
            check(len(steps) == 1, how + ": checkpoints: %s" % steps)

    # -- 6. two runs on one checkpoint folder, and the temporaries of dead ones -----------

    def shared_checkpoints(self, folder):
        x, y, data = self.big_data(folder)
        ck = os.path.join(folder, "ck")
        first = self.start_training([self.shardc, "run", "--pef", self.pef, *data, "--steps",
                                     "3000", "--checkpoint-dir", ck, "--checkpoint-every", "50",
                                     "--output-dir", os.path.join(folder, "o1")])
        second = self.sh("run", "--pef", self.pef, *data, "--steps", 3000, "--checkpoint-dir",
                         ck, "--output-dir", os.path.join(folder, "o2"))
        self.refused(second, "in use by another run")
        code, err = self.finish(first)
        check(code == 0, "the first run failed: " + err[-300:])
        check("step-00003000" in os.listdir(ck), "the first run's last checkpoint is missing")
        # A dead run's temporary is removed; a live process's is left alone.
        host = subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip()
        dead = subprocess.Popen(["true"])
        dead.wait()
        live_tmp = os.path.join(ck, ".tmp-step-00000009-%s-%d" % (host, os.getpid()))
        dead_tmp = os.path.join(ck, ".tmp-step-00000009-%s-%d" % (host, dead.pid))
        os.makedirs(live_tmp)
        os.makedirs(dead_tmp)
        self.accepted(self.train(folder, "--checkpoint-dir", ck))
        check(os.path.isdir(live_tmp), "a live process's temporary folder was removed")
        check(not os.path.exists(dead_tmp), "a dead run's temporary folder was left")

    # -- 7. a compile stopped by a signal -------------------------------------------------

    def compile_signalled(self, folder):
        for sig in [signal.SIGINT, signal.SIGTERM]:
            out = os.path.join(folder, sig.name)
            os.makedirs(out)
            p = subprocess.Popen([self.shardc, "compile", GPT_LOSS, "-b", "8", "--auto-partition",
                                  "--mesh", "data=2,model=2", "--search-budget", "60s", "--debug",
                                  "--output-folder", out, "--pef-name", "g"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            # --debug stages its dumps from the start: wait for the staging folder.
            deadline = time.time() + 30
            while not os.listdir(out) and time.time() < deadline and p.poll() is None:
                time.sleep(0.01)
            time.sleep(0.3)
            p.send_signal(sig)
            p.wait(60)
            check(p.returncode == -sig, "%s: exit %s" % (sig.name, p.returncode))
            check(os.listdir(out) == [], "%s left %s" % (sig.name, os.listdir(out)))

    # -- 7. a loss that turns non-finite --------------------------------------------------

    def nonfinite_loss(self, folder):
        r = self.sh("compile", GPT_LOSS, "-b", "2", "--optimizer", "sgd", "--learning-rate",
                    "1e30", "--output-folder", folder, "--pef-name", "diverge")
        self.accepted(r)
        pef = os.path.join(folder, "diverge", "diverge.pef")
        args = ["run", "--pef", pef, *self.data, "--steps", 6, "--output-dir",
                os.path.join(folder, "out"), "--save-weights", os.path.join(folder, "w.npz")]
        r = self.sh(*args)
        self.accepted(r)
        warnings = [ln for ln in r.stderr.splitlines() if "warning: the loss is" in ln]
        check(len(warnings) == 1, "expected one warning about the loss, got: " + r.stderr[-500:])
        check("--save-weights" in r.stderr and "not finite" in r.stderr,
              "--save-weights wrote non-finite weights without a word")
        r = self.sh(*args[:-2], "--stop-on-nonfinite")
        self.refused(r, "(--stop-on-nonfinite)", "at step")

    # -- 7. a weight that holds NaN -------------------------------------------------------

    def nan_weight(self, folder):
        import onnx
        from onnx import numpy_helper
        m = onnx.load(os.path.join(REPO, "test/import/Inputs/mlp/model.onnx"))
        init = next(i for i in m.graph.initializer if i.data_type == onnx.TensorProto.FLOAT)
        w = numpy_helper.to_array(init).copy()
        w.flat[3] = np.nan
        init.CopyFrom(numpy_helper.from_array(w, init.name))
        path = os.path.join(folder, "nan.onnx")
        onnx.save(m, path)
        r = self.sh("compile", path, "-b", "4", "--loss", "cross-entropy", "--output-folder",
                    folder)
        self.accepted(r)
        check("'%s' holds NaN (element 3)" % init.name in r.stderr,
              "no warning naming the NaN: " + r.stderr[-400:])
        check("mask buffer" not in r.stderr, "the NaN is called a mask buffer")

    # -- 7. names and nesting in YAML -----------------------------------------------------

    def yaml_text(self, folder):
        rules = os.path.join(folder, "rules.yaml")
        with open(os.path.join(REPO, "rules/default.yaml"), "rb") as f:
            text = f.read()
        first = text.index(b"\n" + FIRST_RULE) + 1
        with open(rules, "wb") as f:
            f.write(text[:first] + b"\xff" + text[first:])  # the first rule's name
        r = self.sh("compile", os.path.join(REPO, "test/import/Inputs/mlp/model.onnx"),
                    "--inference", "-b", "4", "-o1", "--optimization-rules", rules,
                    "--output-folder", folder)
        self.refused(r, "not UTF-8 text (byte 0xFF)")
        deep = os.path.join(folder, "deep.yaml")
        with open(deep, "w") as f:
            f.write("name: x\ninfo: " + "[" * 100000 + "]" * 100000 + "\n")
        r = self.sh("compile", os.path.join(REPO, "test/import/Inputs/mlp/model.onnx"),
                    "--inference", "-b", "4", "--arch-file", deep, "--output-folder", folder)
        self.refused(r, "levels deep")


def main():
    args = sys.argv[1:]
    if len(args) != 2:
        sys.exit(__doc__)
    f = Faults(os.path.abspath(args[0]), os.path.abspath(args[1]))
    os.makedirs(f.work, exist_ok=True)
    f.prepare()
    for name in ["special_outputs", "fifo_and_links", "data_rewritten", "shared_checkpoints",
                 "compile_signalled", "nonfinite_loss", "nan_weight", "yaml_text"]:
        f.scenario(name.replace("_", "-"), getattr(f, name))
    bad = skipped = 0
    for name, result in f.results:
        print("%-20s %s" % (name, result))
        bad += result.startswith("FAILED")
        skipped += result.startswith("skipped")
    print("summary: %d of %d scenarios ok, %d skipped, %d failed" % (
        len(f.results) - bad - skipped, len(f.results), skipped, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
