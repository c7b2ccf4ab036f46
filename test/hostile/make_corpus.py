#!/usr/bin/python3
"""Writes a corpus of hostile inputs for shardc into OUT_DIR, and OUT_DIR/manifest.json, the
list of cases: {"class", "name", "args"}, args being shardc's command line after the program
name, where the runner (run_corpus.py) replaces "{out}" with a fresh empty folder made for
the case (also its working directory) and "{case}" with OUT_DIR. Every case is an input that
shardc must refuse: exit code 1 and an error line, no crash, no hang, nothing left behind.

Classes: text-ir, onnx (models for `compile`), pef (`run --pef`, `inspect`), npy (`run
--input`), npz (`run --weights`), target (`compile --arch-file`), strategy (`compile --mesh
--strategy`), rules (`compile -o1 --optimization-rules`), flags (command-line values).

OUT_DIR/controls.json lists, in the same form, valid inputs built from the same files that
shardc must accept (exit 0), so that a corpus refused for a reason other than the one each
case was written for (a missing base PEF, a wrong path) does not pass unnoticed.

The valid PEFs the run cases start from (the GPT example for inference, the MLP for training
with cross-entropy labels, the MLP data parallel over 2 devices) are compiled first with the
shardc named by the SHARDC environment variable; PEFs are forged with valid checksums through
lib/pef/pef.proto (protoc writes its Python module under OUT_DIR/_proto).

Usage: SHARDC=build/bin/shardc make_corpus.py OUT_DIR
"""
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "test", "Inputs"))
from pef_file import HEADER, TRAILER, pef_file, pef_parts, seal  # noqa: E402


class Corpus:
    def __init__(self, root):
        self.root = root
        self.cases = []
        self.controls = []
        self.seen = set()

    def file(self, cls, name):
        """Absolute path of a corpus file of class `cls` (its folder made)."""
        d = os.path.join(self.root, cls)
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, name)

    @staticmethod
    def ref(cls, name):
        """The same file as the manifest names it."""
        return "{case}/%s/%s" % (cls, name)

    def write(self, cls, name, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        with open(self.file(cls, name), "wb") as f:
            f.write(data)
        return self.ref(cls, name)

    def add(self, cls, name, args):
        key = (cls, name)
        if key in self.seen:
            raise SystemExit("make_corpus.py: case %s/%s is defined twice" % key)
        self.seen.add(key)
        self.cases.append({"class": cls, "name": name, "args": [str(a) for a in args]})

    def control(self, cls, name, args):
        self.controls.append({"class": cls, "name": name, "args": [str(a) for a in args]})


def sh(shardc, *args, cwd=None):
    """Runs shardc for the corpus's own fixtures; they must build."""
    r = subprocess.run([shardc, *args], capture_output=True, text=True, cwd=cwd,
                       stdin=subprocess.DEVNULL, timeout=120)
    if r.returncode != 0:
        raise SystemExit("make_corpus.py: shardc %s failed (exit %d):\n%s" %
                         (" ".join(args), r.returncode, r.stderr))
    return r.stdout


def replaced(text, old, new, count=1):
    """`text` with `old` replaced by `new`; `old` must occur (a case that changes nothing
    would be a valid input)."""
    if old not in text:
        raise SystemExit("make_corpus.py: %r not found in the base text" % old)
    return text.replace(old, new, count)


# ---------------------------------------------------------------------------------------
# Shared fixtures.

def fixtures(c, shardc):
    fx = os.path.join(c.root, "fixtures")
    os.makedirs(fx)
    for src, dst in [("test/import/Inputs/gpt/model.onnx", "gpt.onnx"),
                     ("test/import/Inputs/gpt/idx.npy", "idx.npy"),
                     ("test/import/Inputs/mlp/model.onnx", "mlp.onnx"),
                     ("test/import/Inputs/mlp/x.npy", "x.npy"),
                     ("test/run/Inputs/gpt/gpt.ir", "gpt.ir"),
                     ("rules/default.yaml", "rules.yaml"),
                     ("targets/cpu.yaml", "cpu.yaml")]:
        shutil.copyfile(os.path.join(REPO, src), os.path.join(fx, dst))
    # The valid PEF that pef, npy, npz and run's flags work on: the GPT example, inference.
    sh(shardc, "compile", os.path.join(fx, "gpt.onnx"), "--inference", "-b", "2",
       "--output-folder", c.root, "--pef-name", "base")
    # A training PEF with cross-entropy labels (an input with an index bound).
    sh(shardc, "compile", os.path.join(fx, "mlp.onnx"), "-b", "4", "--loss", "cross-entropy",
       "--output-folder", c.root, "--pef-name", "train")
    np.save(os.path.join(fx, "labels.npy"), np.array([0, 3, 9, 1], np.int64))
    # A data set of 20 samples (5 batches) and a checkpoint of 7 steps over it (epoch 1,
    # position 8), for the checkpoint cases.
    x = np.load(os.path.join(fx, "x.npy"))
    np.save(os.path.join(fx, "xs.npy"), np.concatenate([x] * 5))
    np.save(os.path.join(fx, "ys.npy"), np.arange(20, dtype=np.int64) % 10)
    sh(shardc, "run", "--pef", os.path.join(c.root, "train", "train.pef"), "--data",
       "x=" + os.path.join(fx, "xs.npy"), "--data", "labels=" + os.path.join(fx, "ys.npy"),
       "--steps", "7", "--checkpoint-dir", os.path.join(fx, "ck"), "--output-dir",
       os.path.join(c.root, "train", "run"))
    # A partitioned PEF: the MLP, data parallel over 2 thread devices (2 samples each).
    sh(shardc, "compile", os.path.join(fx, "mlp.onnx"), "--inference", "-b", "2", "--data-parallel",
       "-ws", "2", "--output-folder", c.root, "--pef-name", "dp")
    # The base PEF's parameters, as --save-weights writes them.
    sh(shardc, "run", "--pef", os.path.join(c.root, "base", "base.pef"), "--input",
       "idx=" + os.path.join(fx, "idx.npy"), "--save-weights",
       os.path.join(fx, "good.npz"), "--output-dir", os.path.join(c.root, "base", "run"))
    # Special files: a FIFO (must not block the reader) and a symbolic-link loop.
    os.mkfifo(os.path.join(fx, "fifo"))
    os.symlink("loop", os.path.join(fx, "loop"))
    os.mkdir(os.path.join(fx, "adir"))
    with open(os.path.join(fx, "afile"), "w") as f:
        f.write("a plain file\n")


SPECIAL = [("empty-file", None), ("directory", "{case}/fixtures/adir"),
           ("dev-zero", "/dev/zero"), ("fifo", "{case}/fixtures/fifo"),
           ("symlink-loop", "{case}/fixtures/loop"), ("missing", "{case}/fixtures/no-such-file")]


def special_files(c, cls, ext, make_args):
    """Cases where the file is empty, a folder, a device, a FIFO, a link loop or missing."""
    for name, path in SPECIAL:
        if path is None:
            path = c.write(cls, "empty" + ext, b"")
        c.add(cls, name, make_args(path))


# ---------------------------------------------------------------------------------------
# text-ir: malformed and ill-typed text-IR models for compile.

SMALL = """func @main(input %x: f32[4,8], param %w: f32[8,3], param %b: f32[3]) -> (y: f32[4,3]) {
  %m = matmul(%x, %w) : f32[4,3]
  %y = add(%m, %b) : f32[4,3]
  return %y
}
"""


def unary(body_type, line, result_type=None):
    """A one-input model whose single op is `line` (defining %r) on %x: `body_type`."""
    rt = result_type or body_type
    return ("func @main(input %%x: %s) -> (r: %s) {\n  %s\n  return %%r\n}\n" %
            (body_type, rt, line))


def text_ir(c):
    cls = "text-ir"

    def compile_args(path):
        return ["compile", path, "--inference", "--output-folder", "{out}/o", "--pef-name", "p"]

    def case(name, text, ext=".ir"):
        c.add(cls, name, compile_args(c.write(cls, name + ext, text)))

    c.control(cls, "small", compile_args(c.write(cls, "control-small.ir", SMALL)))
    c.control(cls, "gpt", compile_args("{case}/fixtures/gpt.ir"))

    special_files(c, cls, ".ir", compile_args)
    case("whitespace-only", " \n\t\n  \n")
    case("comments-only", "// a model\n// with nothing in it\n")
    case("onnx-bytes", open(os.path.join(REPO, "test/import/Inputs/mlp/model.onnx"), "rb").read())
    case("pef-bytes", open(os.path.join(c.root, "base", "base.pef"), "rb").read())
    case("two-functions", SMALL + SMALL.replace("@main", "@other"))
    case("duplicate-function", SMALL + SMALL)
    case("no-results", "func @main(input %x: f32[4]) -> () {\n  return\n}\n")
    case("no-arguments-no-ops", "func @main() -> (r: f32[2]) {\n  return\n}\n")

    # Truncations of the GPT model at many byte offsets (each prefix lacks the closing brace).
    gpt = open(os.path.join(REPO, "test/run/Inputs/gpt/gpt.ir"), "rb").read()
    end = gpt.rindex(b"}")
    for k in range(40):
        at = 1 + k * (end - 1) // 40
        case("gpt-truncated-at-%d" % at, gpt[:at])
    small = SMALL.encode()
    end = small.rindex(b"}")
    for at in range(5, end, 13):
        case("small-truncated-at-%d" % at, small[:at])

    # Syntax errors.
    syntax = {
        "no-func-keyword": ("func @main", "function @main"),
        "no-at-sign": ("func @main", "func main"),
        "no-colon-in-arg": ("%x: f32", "%x f32"),
        "no-arg-kind": ("input %x", "%x"),
        "unknown-arg-kind": ("input %x", "inpt %x"),
        "no-arrow": (") -> (y", ") (y"),
        "no-open-brace": (") {\n", ")\n"),
        "extra-close-brace": ("}\n", "}\n}\n"),
        "no-close-paren-args": ("f32[3]) ->", "f32[3] ->"),
        "no-comma-operands": ("matmul(%x, %w)", "matmul(%x %w)"),
        "unclosed-operands": ("matmul(%x, %w) :", "matmul(%x, %w :"),
        "no-equals": ("%m = matmul", "%m matmul"),
        "no-op-name": ("%m = matmul(", "%m = ("),
        "number-as-op-name": ("%m = matmul(", "%m = 42("),
        "no-result-type": ("matmul(%x, %w) : f32[4,3]", "matmul(%x, %w)"),
        "unclosed-bracket": ("f32[4,3]\n  %y", "f32[4,3\n  %y"),
        "double-comma-dims": ("f32[4,8]", "f32[4,,8]"),
        "semicolon-dims": ("f32[4,8]", "f32[4;8]"),
        "parens-for-dims": ("f32[4,8]", "f32(4,8)"),
        "float-dim": ("f32[4,8]", "f32[4.0,8]"),
        "hex-dim": ("f32[4,8]", "f32[0x4,8]"),
        "value-without-percent": ("add(%m, %b)", "add(m, %b)"),
        "return-without-value": ("return %y", "return"),
        "return-trailing-comma": ("return %y", "return %y,"),
        "garbage-after-function": ("}\n", "}\n@@@ trailing\n"),
        "statement-before-function": ("func @main", "%z = neg(%x) : f32[4]\nfunc @main"),
        "unterminated-quoted-name": ("%m = matmul", "%\"m = matmul"),
        "unterminated-comment-block": ("func @main", "/* no end\nfunc @main"),
        "backslash-in-name": ("%m = matmul(%x, %w)", "%\\m = matmul(%x, %w)"),
    }
    for name, (old, new) in syntax.items():
        case(name, replaced(SMALL, old, new))

    # Wrong types.
    types = {
        "unknown-dtype": ("f32[4,8]", "f31[4,8]"),
        "dtype-float32": ("f32[4,8]", "float32[4,8]"),
        "dtype-u8": ("f32[4,8]", "u8[4,8]"),
        "matmul-declared-transposed": ("matmul(%x, %w) : f32[4,3]", "matmul(%x, %w) : f32[3,4]"),
        "matmul-declared-rank3": ("matmul(%x, %w) : f32[4,3]", "matmul(%x, %w) : f32[1,4,3]"),
        "add-declared-i64": ("add(%m, %b) : f32[4,3]", "add(%m, %b) : i64[4,3]"),
        "return-declared-f64": ("(y: f32[4,3])", "(y: f64[4,3])"),
        "return-declared-other-shape": ("(y: f32[4,3])", "(y: f32[4,4])"),
        "bool-matmul": ("input %x: f32[4,8]", "input %x: i1[4,8]"),
        "mixed-dtype-matmul": ("param %w: f32[8,3]", "param %w: i64[8,3]"),
        "matmul-inner-mismatch": ("param %w: f32[8,3]", "param %w: f32[7,3]"),
        "add-no-broadcast": ("param %b: f32[3]", "param %b: f32[5]"),
        "scalar-matmul": ("input %x: f32[4,8]", "input %x: f32[]"),
    }
    for name, (old, new) in types.items():
        case(name, replaced(SMALL, old, new))

    # Unknown ops.
    for name, op in [("unknown-op-conv3d", "conv3d"), ("unknown-op-capitalized", "MatMul"),
                     ("unknown-op-suffix", "matmul_"), ("unknown-op-onnx-name", "Gemm"),
                     ("unknown-op-1mb-name", "q" * (1 << 20))]:
        case(name, replaced(SMALL, "matmul(", op + "("))

    # Bad attributes, one op each.
    f48, f84, f4 = "f32[4,8]", "f32[8,4]", "f32[4]"
    attrs = {
        "transpose-no-perm": (f48, "%r = transpose(%x) : f32[8,4]", f84),
        "transpose-perm-short": (f48, "%r = transpose(%x) {perm = [0]} : f32[8,4]", f84),
        "transpose-perm-duplicate": (f48, "%r = transpose(%x) {perm = [0, 0]} : f32[4,4]", "f32[4,4]"),
        "transpose-perm-out-of-range": (f48, "%r = transpose(%x) {perm = [0, 9]} : f32[4,8]", f48),
        "transpose-perm-string": (f48, "%r = transpose(%x) {perm = \"10\"} : f32[8,4]", f84),
        "transpose-perm-huge": (f48, "%r = transpose(%x) {perm = [9223372036854775807, 0]} : f32[8,4]", f84),
        "softmax-axis-out-of-range": (f48, "%r = softmax(%x) {axis = 2} : f32[4,8]", f48),
        "softmax-axis-string": (f48, "%r = softmax(%x) {axis = \"last\"} : f32[4,8]", f48),
        "softmax-axis-float": (f48, "%r = softmax(%x) {axis = 1.5} : f32[4,8]", f48),
        "softmax-axis-min-int64": (f48, "%r = softmax(%x) {axis = -9223372036854775808} : f32[4,8]", f48),
        "axis-beyond-int64": (f48, "%r = softmax(%x) {axis = 9223372036854775808} : f32[4,8]", f48),
        "axis-huge-integer": (f48, "%r = softmax(%x) {axis = 123456789012345678901234567890} : f32[4,8]", f48),
        "attribute-twice": (f48, "%r = softmax(%x) {axis = 1, axis = 1} : f32[4,8]", f48),
        "unknown-attribute": (f48, "%r = neg(%x) {inplace = 1} : f32[4,8]", f48),
        "reshape-count-mismatch": (f48, "%r = reshape(%x) {shape = [5, 7]} : f32[5,7]", "f32[5,7]"),
        "reshape-negative-product": (f48, "%r = reshape(%x) {shape = [-4, -8]} : f32[4,8]", f48),
        "reshape-to-scalar": (f48, "%r = reshape(%x) {shape = []} : f32[]", "f32[]"),
        "reshape-huge": (f48, "%r = reshape(%x) {shape = [4294967296, 4294967296]} : f32[4294967296,4294967296]", f48),
        "split-sizes-short": (f48, "%r, %s = split(%x) {axis = 1, sizes = [3, 4]} : f32[4,3], f32[4,4]", "f32[4,3]"),
        "split-result-count": (f48, "%r, %s = split(%x) {axis = 1, sizes = [2, 2, 4]} : f32[4,2], f32[4,2]", "f32[4,2]"),
        "split-negative-size": (f48, "%r, %s = split(%x) {axis = 1, sizes = [-4, 12]} : f32[4,-4], f32[4,12]", "f32[4,12]"),
        "slice-zero-stride": (f48, "%r = slice(%x) {start = [0, 0], limit = [4, 8], stride = [0, 1]} : f32[4,8]", f48),
        "slice-start-after-limit": (f48, "%r = slice(%x) {start = [3, 0], limit = [1, 8], stride = [1, 1]} : f32[2,8]", "f32[2,8]"),
        "slice-limit-past-end": (f48, "%r = slice(%x) {start = [0, 0], limit = [9, 8], stride = [1, 1]} : f32[9,8]", "f32[9,8]"),
        "pad-negative-interior": (f4, "%r = pad(%x) {low = [0], high = [0], interior = [-1]} : f32[1]", "f32[1]"),
        "pad-huge-high": (f4, "%r = pad(%x) {low = [0], high = [4611686018427387904], interior = [0]} : f32[4]", f4),
        "gelu-unknown-approximation": (f4, "%r = gelu(%x) {approximate = \"fast\"} : f32[4]", f4),
        "compare-unknown-direction": (f4, "%r = compare(%x, %x) {direction = \"approx\"} : i1[4]", "i1[4]"),
        "cast-unknown-type": (f4, "%r = cast(%x) {to = f8} : f32[4]", f4),
        "cast-to-number": (f4, "%r = cast(%x) {to = 5} : f32[4]", f4),
        "reduce-axis-out-of-range": (f48, "%r = reduce_sum(%x) {axes = [7]} : f32[4]", f4),
        "reduce-axis-twice": (f48, "%r = reduce_sum(%x) {axes = [1, 1]} : f32[4]", f4),
        "layer-norm-axis-out-of-range": (f48, "%r = layer_norm(%x) {axis = 5} : f32[4,8]", f48),
        "layer-norm-epsilon-string": (f48, "%r = layer_norm(%x) {epsilon = \"tiny\"} : f32[4,8]", f48),
        "gather-axis-out-of-range": (f48, "%i = iota() {shape = [2]} : i64[2]\n  %r = gather(%x, %i) {axis = 3} : f32[4,2]", "f32[4,2]"),
        "gather-float-indices": (f48, "%r = gather(%x, %x) {axis = 0} : f32[4,8,8]", "f32[4,8,8]"),
        "iota-axis-out-of-range": (f4, "%r = iota() {shape = [4], axis = 5} : i64[4]", "i64[4]"),
        "iota-negative-shape": (f4, "%r = iota() {shape = [-2, -2]} : i64[-2,-2]", "i64[4]"),
        "iota-huge-shape": (f4, "%r = iota() {shape = [1073741824, 1073741824]} : i64[1073741824,1073741824]", "i64[4]"),
        "broadcast-huge": (f4, "%r = broadcast(%x) {shape = [1099511627776, 1099511627776, 4]} : f32[1099511627776,1099511627776,4]", f4),
        "broadcast-incompatible": (f4, "%r = broadcast(%x) {shape = [2, 3]} : f32[2,3]", "f32[2,3]"),
        "conv-zero-strides": ("f32[1,1,4,4]", "%w = iota() {shape = [1, 1, 2, 2], dtype = f32} : f32[1,1,2,2]\n  %r = conv2d(%x, %w) {strides = [0, 0]} : f32[1,1,3,3]", "f32[1,1,3,3]"),
        "conv-rank2-input": (f48, "%r = conv2d(%x, %x) : f32[4,8]", f48),
        "max-pool-no-kernel": ("f32[1,1,4,4]", "%r = max_pool2d(%x) : f32[1,1,4,4]", "f32[1,1,4,4]"),
        "max-pool-zero-kernel": ("f32[1,1,4,4]", "%r = max_pool2d(%x) {kernel = [0, 0]} : f32[1,1,5,5]", "f32[1,1,5,5]"),
        "dense-count-mismatch": (f4, "%c = constant() {value = dense<f32[4], [1.0, 2.0]>} : f32[4]\n  %r = add(%x, %c) : f32[4]", f4),
        "dense-float-in-int": (f4, "%c = constant() {value = dense<i64[4], [1.5, 2, 3, 4]>} : i64[4]\n  %r = cast(%c) {to = f32} : f32[4]", f4),
        "dense-bool-2": (f4, "%c = constant() {value = dense<i1[4], [2, 0, 1, 0]>} : i1[4]\n  %r = where(%c, %x, %x) : f32[4]", f4),
        "dense-f32-overflow": (f4, "%c = constant() {value = dense<f32[4], [1e999, 0, 0, 0]>} : f32[4]\n  %r = add(%x, %c) : f32[4]", f4),
        "dense-type-mismatch": (f4, "%c = constant() {value = dense<f32[2], [1.0, 2.0]>} : f32[4]\n  %r = add(%x, %c) : f32[4]", f4),
        "dense-unclosed": (f4, "%c = constant() {value = dense<f32[4], [1.0, 2.0, 3.0, 4.0]} : f32[4]\n  %r = add(%x, %c) : f32[4]", f4),
        "dense-huge-splat": (f4, "%c = constant() {value = dense<f32[1000000,1000000], 0.0>} : f32[1000000,1000000]\n  %r = add(%x, %x) : f32[4]", f4),
        "constant-no-value": (f4, "%c = constant() : f32[4]\n  %r = add(%x, %c) : f32[4]", f4),
        "string-attr-non-utf8": (f4, "%r = gelu(%x) {approximate = \"\xff\xfe\"} : f32[4]", f4),
    }
    for name, (t, line, rt) in attrs.items():
        text = unary(t, line, rt)
        case(name, text.encode("latin-1") if "non-utf8" in name else text)

    # Wrong operand counts.
    counts = {
        "add-one-operand": "%r = add(%x) : f32[4]",
        "add-three-operands": "%r = add(%x, %x, %x) : f32[4]",
        "neg-no-operand": "%r = neg() : f32[4]",
        "neg-two-operands": "%r = neg(%x, %x) : f32[4]",
        "where-two-operands": "%r = where(%x, %x) : f32[4]",
        "constant-with-operand": "%r = constant(%x) {value = dense<f32[4], 0.0>} : f32[4]",
        "layer-norm-four-operands": "%r = layer_norm(%x, %x, %x, %x) : f32[4]",
        "op-two-result-types-one-result": "%r = neg(%x) : f32[4], f32[4]",
        "op-two-results-one-type": "%r, %s = neg(%x) : f32[4]",
    }
    for name, line in counts.items():
        case(name, unary("f32[4]", line))

    # Duplicate and undefined names.
    dup = {
        "argument-twice": ("param %b: f32[3]", "param %x: f32[3]"),
        "value-redefined": ("%y = add(%m, %b)", "%m = add(%m, %b)"),
        "value-shadows-argument": ("%m = matmul(%x, %w)", "%x = matmul(%x, %w)"),
        "undefined-value": ("add(%m, %b)", "add(%z, %b)"),
        "use-before-definition": ("  %m = matmul(%x, %w) : f32[4,3]\n  %y = add(%m, %b) : f32[4,3]\n",
                                  "  %y = add(%m, %b) : f32[4,3]\n  %m = matmul(%x, %w) : f32[4,3]\n"),
        "result-name-twice": ("-> (y: f32[4,3])", "-> (y: f32[4,3], y: f32[4,3])"),
        "empty-result-name": ("-> (y: f32[4,3])", "-> (\"\": f32[4,3])"),
        "return-count-mismatch": ("return %y", "return %y, %m"),
        "return-undefined": ("return %y", "return %q"),
        "tied-not-argument": ("-> (y: f32[4,3])", "-> (y: f32[4,3] tied %m)"),
        "result-name-non-utf8": ("-> (y: f32[4,3])", "-> (\"\xc0\xaf\": f32[4,3])"),
        "value-name-non-utf8": ("%m", "%\"\xff\""),
    }
    for name, (old, new) in dup.items():
        text = replaced(SMALL, old, new, -1 if name == "value-name-non-utf8" else 1)
        case(name, text.encode("latin-1") if "non-utf8" in name else text)
    case("tied-to-input", replaced(replaced(SMALL, "-> (y: f32[4,3])", "-> (y: f32[4,3], x2: f32[4,8] tied %x)"),
                                   "return %y", "return %y, %x"))
    case("tied-other-type", replaced(replaced(SMALL, "-> (y: f32[4,3])", "-> (y: f32[4,3], w2: f32[4,3] tied %w)"),
                                     "return %y", "return %y, %m"))
    case("tied-twice", replaced(replaced(SMALL, "-> (y: f32[4,3])", "-> (y: f32[4,3], b1: f32[3] tied %b, b2: f32[3] tied %b)"),
                                "return %y", "return %y, %b, %b"))
    case("many-arguments-then-duplicate",
         "func @main(%s, input %%a0: f32[1]) -> (r: f32[1]) {\n  return %%a0\n}\n" %
         ", ".join("input %%a%d: f32[1]" % i for i in range(20000)))

    # Huge and negative shapes.
    shapes = {
        "input-2^64-elements": ("input %x: f32[4,8]", "input %x: f32[4294967296,4294967296]"),
        "input-dim-int64-max": ("input %x: f32[4,8]", "input %x: f32[9223372036854775807]"),
        "input-dim-beyond-int64": ("input %x: f32[4,8]", "input %x: f32[99999999999999999999,8]"),
        "negative-dim": ("input %x: f32[4,8]", "input %x: f32[-1,8]"),
        "negative-dim-result": ("(y: f32[4,3])", "(y: f32[4,-3])"),
        "negative-dims-positive-product": ("input %x: f32[4,8]", "input %x: f32[-4,-8]"),
    }
    for name, (old, new) in shapes.items():
        case(name, replaced(SMALL, old, new))
    # Shapes that parse, but whose memory no machine has: refused before it is allocated
    # (a 256 TiB parameter is initialized, an 8 TiB input planned).
    case("param-256-tib", "func @main(input %x: f32[4], param %w: f32[70368744177664]) -> (y: f32[4]) {\n"
                          "  %y = neg(%x) : f32[4]\n  return %y\n}\n")
    case("input-8-tib", unary("f32[1099511627776,2]", "%r = neg(%x) : f32[1099511627776,2]"))

    # Deep nesting and bytes that are not text.
    deep = 100000
    case("nested-brackets-in-attribute",
         unary("f32[4,8]", "%r = transpose(%x) {perm = " + "[" * deep + "]" * deep + "} : f32[8,4]", "f32[8,4]"))
    case("unclosed-brackets-in-attribute",
         unary("f32[4,8]", "%r = transpose(%x) {perm = " + "[" * deep, "f32[8,4]"))
    case("nested-parens-in-operands",
         unary("f32[4]", "%r = neg(" + "(" * deep + "%x" + ")" * deep + ") : f32[4]"))
    case("nested-braces", "func @main() -> () " + "{" * deep + "}" * deep + "\n")
    case("nested-brackets-in-type", "func @main(input %x: f32" + "[" * deep + "]" * deep + ") -> (r: f32[]) {\n  return %x\n}\n")
    case("nested-dense-literal",
         unary("f32[4]", "%c = constant() {value = dense<f32[4], " + "[" * deep + "]" * deep + ">} : f32[4]\n  %r = add(%x, %c) : f32[4]"))
    case("nul-byte-mid-op", replaced(SMALL, "%m = matmul", "%m = mat\0mul").encode())
    case("nul-bytes-only", b"\0" * 4096)
    case("invalid-utf8-statement", b"\xff\xfe" + small)
    case("lone-continuation-byte", replaced(SMALL, "%y = add", "\x80%y = add").encode("latin-1"))
    case("utf16-encoded", SMALL.encode("utf-16"))
    case("random-bytes", bytes((i * 131 + 17) % 256 for i in range(4096)))
    case("control-chars", replaced(SMALL, "  %m", "\x1b[2J\x07  %m"))

    # Meshes and shardings declared in the IR that do not fit.
    mesh = {
        "ir-mesh-zero": "mesh data=0\n",
        "ir-mesh-negative": "mesh data=-2\n",
        "ir-mesh-axis-twice": "mesh data=2, data=2\n",
        "ir-mesh-huge": "mesh data=1048576, model=1048576\n",
    }
    for name, line in mesh.items():
        case(name, line + SMALL)
    case("ir-sharding-unknown-axis",
         "mesh data=2\n" + replaced(SMALL, "input %x: f32[4,8]", "input %x: f32[4,8] sharding [{model}, {}]"))
    case("ir-sharding-rank-mismatch",
         "mesh data=2\n" + replaced(SMALL, "input %x: f32[4,8]", "input %x: f32[4,8] sharding [{data}]"))
    case("ir-sharding-uneven",
         "mesh data=3\n" + replaced(SMALL, "input %x: f32[4,8]", "input %x: f32[4,8] sharding [{data}, {}]"))
    case("ir-sharding-without-mesh",
         replaced(SMALL, "input %x: f32[4,8]", "input %x: f32[4,8] sharding [{data}, {}]"))


# ---------------------------------------------------------------------------------------
# onnx: bad ONNX models for compile.

F = TensorProto.FLOAT


def vi(name, dims, elem=F):
    return helper.make_tensor_value_info(name, elem, dims)


def model(nodes, inputs, outputs, inits=(), opset=13, ir_version=None, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    kw = {"opset_imports": [helper.make_opsetid("", opset)]} if opset is not None else {}
    m = helper.make_model(g, **kw)
    if opset is None:
        del m.opset_import[:]
    if ir_version is not None:
        m.ir_version = ir_version
    return m


def onnx_invalid(data):
    """Whether ONNX itself refuses these bytes: they do not parse, or the full checker (with
    strict shape inference) rejects the model."""
    m = onnx.ModelProto()
    try:
        m.ParseFromString(data)
    except Exception:
        return True
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception:
        return True
    return False


def onnx_cases(c):
    cls = "onnx"

    def compile_args(path, batch=None):
        args = ["compile", path, "--inference"]
        if batch:
            args += ["-b", str(batch)]
        return args + ["--output-folder", "{out}/o", "--pef-name", "p"]

    def case(name, m, batch=None):
        data = m if isinstance(m, bytes) else m.SerializeToString()
        c.add(cls, name, compile_args(c.write(cls, name + ".onnx", data), batch))

    x, y = vi("x", [2, 3]), vi("y", [2, 3])
    relu = helper.make_node("Relu", ["x"], ["y"])
    good = model([relu], [x], [y])
    onnx.checker.check_model(good, full_check=True)
    c.control(cls, "relu", compile_args(c.write(cls, "control-relu.onnx", good.SerializeToString())))
    c.control(cls, "gpt", compile_args("{case}/fixtures/gpt.onnx", 2))

    special_files(c, cls, ".onnx", compile_args)
    case("text-bytes", b"hello, not a model\n")
    case("ir-text", SMALL.encode())
    case("pef-bytes", open(os.path.join(c.root, "base", "base.pef"), "rb").read())
    case("npy-bytes", open(os.path.join(REPO, "test/import/Inputs/gpt/idx.npy"), "rb").read())
    case("nul-bytes", b"\0" * 1024)
    case("ff-bytes", b"\xff" * 1024)

    # Truncated and garbled protobuf bytes of the GPT model; only variants ONNX itself
    # refuses are kept (a cut between two fields, or a byte of tensor data, may leave a valid
    # model).
    gpt = open(os.path.join(REPO, "test/import/Inputs/gpt/model.onnx"), "rb").read()
    kept = 0
    for k in range(1, 60):
        at = k * len(gpt) // 60
        if kept < 20 and onnx_invalid(gpt[:at]):
            case("gpt-truncated-at-%d" % at, gpt[:at], 2)
            kept += 1
    kept = 0
    for k in range(1, 200):
        at = (k * 7919) % len(gpt)
        b = bytearray(gpt)
        b[at] ^= 0xff
        if kept < 12 and onnx_invalid(bytes(b)):
            case("gpt-garbled-at-%d" % at, bytes(b), 2)
            kept += 1
    b = bytearray(gpt)
    b[0:16] = b"\xff" * 16
    case("gpt-garbled-head", bytes(b), 2)
    case("gpt-doubled-length-prefix", gpt[:1] + b"\xff\xff\xff\xff\x0f" + gpt[1:], 2)

    # Graph structure.
    case("missing-input", model([helper.make_node("Add", ["x", "z"], ["y"])], [x], [y]))
    case("no-outputs", model([relu], [x], []))
    case("output-never-produced", model([relu], [x], [y, vi("w", [2, 3])]))
    case("no-nodes-output-not-input", model([], [x], [y]))
    case("cycle", model([helper.make_node("Add", ["x", "b"], ["a"]),
                         helper.make_node("Relu", ["a"], ["b"]),
                         helper.make_node("Relu", ["a"], ["y"])], [x], [y]))
    case("self-loop", model([helper.make_node("Add", ["x", "y"], ["y"])], [x], [y]))
    case("duplicated-graph-output", model([relu], [x], [y, y]))
    case("node-writes-one-value-twice",
         model([helper.make_node("Split", ["x"], ["y", "y"], axis=1)], [x], [y]))
    case("two-writers", model([relu, helper.make_node("Neg", ["x"], ["y"])], [x], [y]))
    case("input-and-initializer-disagree",
         model([relu], [x], [y], [helper.make_tensor("x", F, [4], [1, 2, 3, 4])]))
    case("duplicated-input", model([relu], [x, x], [y]))
    case("empty-input-name", model([helper.make_node("Relu", [""], ["y"])], [x], [y]))
    case("empty-op-type", model([helper.make_node("", ["x"], ["y"])], [x], [y]))
    case("unknown-op", model([helper.make_node("FooBar", ["x"], ["y"])], [x], [y]))
    case("custom-domain", model([helper.make_node("Relu", ["x"], ["y"], domain="com.example")], [x], [y]))
    case("relu-three-inputs", model([helper.make_node("Relu", ["x", "x", "x"], ["y"])], [x], [y]))
    case("add-one-input", model([helper.make_node("Add", ["x"], ["y"])], [x], [y]))
    case("relu-no-output", model([helper.make_node("Relu", ["x"], [])], [x], [y]))
    case("constant-without-value", model([helper.make_node("Constant", [], ["y"])], [], [y]))
    case("if-branch-broken",
         model([helper.make_node("If", ["c"], ["y"],
                                 then_branch=helper.make_graph([helper.make_node("Relu", ["nope"], ["t"])], "t", [], [vi("t", [2, 3])]),
                                 else_branch=helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "e", [], [vi("e", [2, 3])]))],
               [vi("c", [], TensorProto.BOOL), x], [y]))

    # Attributes of the wrong type or value.
    case("softmax-axis-float", model([helper.make_node("Softmax", ["x"], ["y"], axis=1.5)], [x], [y]))
    case("softmax-axis-string", model([helper.make_node("Softmax", ["x"], ["y"], axis="last")], [x], [y]))
    case("softmax-axis-out-of-range", model([helper.make_node("Softmax", ["x"], ["y"], axis=7)], [x], [y]))
    case("transpose-perm-string", model([helper.make_node("Transpose", ["x"], ["y"], perm="10")], [x], [vi("y", [3, 2])]))
    case("transpose-perm-duplicate", model([helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0])], [x], [y]))
    case("transpose-perm-huge", model([helper.make_node("Transpose", ["x"], ["y"], perm=[1 << 62, 0])], [x], [vi("y", [3, 2])]))
    case("leaky-relu-alpha-ints", model([helper.make_node("LeakyRelu", ["x"], ["y"], alpha=[1, 2])], [x], [y]))
    case("gemm-transa-tensor",
         model([helper.make_node("Gemm", ["x", "w"], ["y"], transA=helper.make_tensor("t", TensorProto.INT64, [], [1]))],
               [x], [vi("y", [2, 2])], [helper.make_tensor("w", F, [3, 2], [0.0] * 6)]))
    case("concat-axis-out-of-range", model([helper.make_node("Concat", ["x", "x"], ["y"], axis=5)], [x], [vi("y", [4, 3])]))
    case("concat-no-axis", model([helper.make_node("Concat", ["x", "x"], ["y"])], [x], [vi("y", [4, 3])]))
    case("gather-axis-out-of-range",
         model([helper.make_node("Gather", ["x", "i"], ["y"], axis=9)], [x], [y],
               [helper.make_tensor("i", TensorProto.INT64, [2], [0, 1])]))
    case("split-sizes-do-not-sum",
         model([helper.make_node("Split", ["x", "s"], ["y", "z"], axis=1)], [x], [vi("y", [2, 1]), vi("z", [2, 1])],
               [helper.make_tensor("s", TensorProto.INT64, [2], [1, 1])]))
    case("reshape-two-minus-ones",
         model([helper.make_node("Reshape", ["x", "s"], ["y"])], [x], [vi("y", [6])],
               [helper.make_tensor("s", TensorProto.INT64, [2], [-1, -1])]))
    case("reshape-count-mismatch",
         model([helper.make_node("Reshape", ["x", "s"], ["y"])], [x], [vi("y", [7])],
               [helper.make_tensor("s", TensorProto.INT64, [1], [7])]))
    case("reshape-allowzero-to-zero-size",
         model([helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)], [x], [vi("y", [0, 3])],
               [helper.make_tensor("s", TensorProto.INT64, [2], [0, 3])], opset=14))
    case("slice-zero-step",
         model([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [x], [y],
               [helper.make_tensor("st", TensorProto.INT64, [1], [0]),
                helper.make_tensor("en", TensorProto.INT64, [1], [2]),
                helper.make_tensor("ax", TensorProto.INT64, [1], [0]),
                helper.make_tensor("sp", TensorProto.INT64, [1], [0])]))
    x4 = vi("x", [1, 1, 4, 4])
    case("maxpool-zero-kernel", model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[0, 0])], [x4], [vi("y", [1, 1, 5, 5])]))
    case("maxpool-no-kernel", model([helper.make_node("MaxPool", ["x"], ["y"])], [x4], [vi("y", [1, 1, 4, 4])]))
    case("conv-zero-size-kernel",
         model([helper.make_node("Conv", ["x", "w"], ["y"])], [x4], [vi("y", [1, 1, 5, 5])],
               [helper.make_tensor("w", F, [1, 1, 0, 0], b"", raw=True)]))
    case("conv-zero-strides",
         model([helper.make_node("Conv", ["x", "w"], ["y"], strides=[0, 0])], [x4], [vi("y", [1, 1, 3, 3])],
               [helper.make_tensor("w", F, [1, 1, 2, 2], [1.0] * 4)]))
    case("conv-channel-mismatch",
         model([helper.make_node("Conv", ["x", "w"], ["y"])], [x4], [vi("y", [1, 1, 3, 3])],
               [helper.make_tensor("w", F, [1, 3, 2, 2], [1.0] * 12)]))
    case("cast-to-string", model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.STRING)], [x], [vi("y", [2, 3], TensorProto.STRING)]))
    case("cast-to-unknown-type", model([helper.make_node("Cast", ["x"], ["y"], to=99)], [x], [y]))
    dup_attr = helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.1)
    dup_attr.attribute.extend([helper.make_attribute("alpha", 0.2)])
    case("attribute-twice", model([dup_attr], [x], [y]))

    # Integer attributes and constant inputs that are zero, negative, huge or NaN where the
    # op needs a positive count: strides, block sizes, range deltas, repeats, depths.
    def out(rank):
        return vi("y", ["d%d" % i for i in range(rank)])

    def i64(name, dims, vals):
        return helper.make_tensor(name, TensorProto.INT64, dims, vals)

    def f32(name, dims, vals):
        return helper.make_tensor(name, F, dims, vals)

    w22 = f32("w", [1, 1, 2, 2], [1.0] * 4)
    node = helper.make_node
    ops = {
        "maxpool-zero-strides": ([node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[0, 0])], x4, 4, []),
        "maxpool-negative-strides": ([node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[-1, -1])], x4, 4, []),
        "avgpool-zero-strides": ([node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[0, 0])], x4, 4, []),
        "avgpool-zero-kernel": ([node("AveragePool", ["x"], ["y"], kernel_shape=[0, 0])], x4, 4, []),
        "avgpool-huge-kernel": ([node("AveragePool", ["x"], ["y"], kernel_shape=[1 << 62, 1 << 62])], x4, 4, []),
        "conv-zero-dilations": ([node("Conv", ["x", "w"], ["y"], dilations=[0, 0])], x4, 4, [w22]),
        "conv-group-zero": ([node("Conv", ["x", "w"], ["y"], group=0)], x4, 4, [w22]),
        "conv-group-negative": ([node("Conv", ["x", "w"], ["y"], group=-1)], x4, 4, [w22]),
        "conv-negative-pads": ([node("Conv", ["x", "w"], ["y"], pads=[-3, -3, -3, -3])], x4, 4, [w22]),
        "convtranspose-zero-strides": ([node("ConvTranspose", ["x", "w"], ["y"], strides=[0, 0])], x4, 4, [w22]),
        "convtranspose-huge-output-padding": ([node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_padding=[1 << 40, 1 << 40])], x4, 4, [w22]),
        "maxunpool-zero-strides": ([node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[0, 0])], x4, 4, [i64("i", [1, 1, 4, 4], [0] * 16)]),
        "depthtospace-zero-blocksize": ([node("DepthToSpace", ["x"], ["y"], blocksize=0)], vi("x", [1, 4, 2, 2]), 4, []),
        "depthtospace-blocksize-not-dividing": ([node("DepthToSpace", ["x"], ["y"], blocksize=3)], vi("x", [1, 4, 2, 2]), 4, []),
        "spacetodepth-zero-blocksize": ([node("SpaceToDepth", ["x"], ["y"], blocksize=0)], x4, 4, []),
        "lrn-zero-size": ([node("LRN", ["x"], ["y"], size=0)], x4, 4, []),
        "range-zero-delta": ([node("Range", ["s", "l", "d"], ["r"]), node("Cast", ["r"], ["y"], to=F)], x, 1, [i64("s", [], [0]), i64("l", [], [10]), i64("d", [], [0])]),
        "range-float-zero-delta": ([node("Range", ["s", "l", "d"], ["y"])], x, 1, [f32("s", [], [0.0]), f32("l", [], [10.0]), f32("d", [], [0.0])]),
        "range-huge": ([node("Range", ["s", "l", "d"], ["r"]), node("Cast", ["r"], ["y"], to=F)], x, 1, [i64("s", [], [0]), i64("l", [], [1 << 62]), i64("d", [], [1])]),
        "range-tiny-delta": ([node("Range", ["s", "l", "d"], ["y"])], x, 1, [f32("s", [], [0.0]), f32("l", [], [1.0]), f32("d", [], [1e-30])]),
        "range-nan-limit": ([node("Range", ["s", "l", "d"], ["y"])], x, 1, [f32("s", [], [0.0]), f32("l", [], [float("nan")]), f32("d", [], [1.0])]),
        "range-inf-limit": ([node("Range", ["s", "l", "d"], ["y"])], x, 1, [f32("s", [], [0.0]), f32("l", [], [float("inf")]), f32("d", [], [1.0])]),
        "range-nan-delta": ([node("Range", ["s", "l", "d"], ["y"])], x, 1, [f32("s", [], [0.0]), f32("l", [], [4.0]), f32("d", [], [float("nan")])]),
        "constantofshape-huge": ([node("ConstantOfShape", ["s"], ["y"])], x, 2, [i64("s", [2], [1 << 40, 1 << 40])]),
        "constantofshape-negative": ([node("ConstantOfShape", ["s"], ["y"])], x, 2, [i64("s", [2], [-2, 3])]),
        "expand-huge": ([node("Expand", ["x", "s"], ["y"])], x, 3, [i64("s", [3], [1 << 40, 1 << 40, 3])]),
        "expand-negative": ([node("Expand", ["x", "s"], ["y"])], x, 2, [i64("s", [2], [-2, 3])]),
        "tile-negative": ([node("Tile", ["x", "r"], ["y"])], x, 2, [i64("r", [2], [-1, 2])]),
        "tile-huge": ([node("Tile", ["x", "r"], ["y"])], x, 2, [i64("r", [2], [1 << 40, 1 << 40])]),
        "reshape-product-overflow": ([node("Reshape", ["x", "s"], ["y"])], x, 2, [i64("s", [2], [1 << 62, 1 << 62])]),
        "onehot-negative-depth": ([node("OneHot", ["i", "d", "v"], ["y"])], x, 2, [i64("i", [2], [0, 1]), i64("d", [], [-3]), f32("v", [2], [0.0, 1.0])]),
        "onehot-huge-depth": ([node("OneHot", ["i", "d", "v"], ["y"])], x, 2, [i64("i", [2], [0, 1]), i64("d", [], [1 << 50]), f32("v", [2], [0.0, 1.0])]),
        "onehot-nan-depth": ([node("OneHot", ["i", "d", "v"], ["y"])], x, 2, [i64("i", [2], [0, 1]), f32("d", [], [float("nan")]), f32("v", [2], [0.0, 1.0])]),
        "pad-negative-beyond": ([node("Pad", ["x", "p"], ["y"])], x, 2, [i64("p", [4], [-5, 0, 0, 0])]),
        "pad-huge": ([node("Pad", ["x", "p"], ["y"])], x, 2, [i64("p", [4], [1 << 60, 0, 0, 0])]),
        "flatten-axis-out-of-range": ([node("Flatten", ["x"], ["y"], axis=9)], x, 2, []),
        "squeeze-dim-not-one": ([node("Squeeze", ["x", "a"], ["y"])], x, 1, [i64("a", [1], [0])]),
        "unsqueeze-axis-twice": ([node("Unsqueeze", ["x", "a"], ["y"])], x, 4, [i64("a", [2], [0, 0])]),
        "cumsum-axis-out-of-range": ([node("CumSum", ["x", "a"], ["y"])], x, 2, [i64("a", [], [7])]),
        "argmax-axis-out-of-range": ([node("ArgMax", ["x"], ["y"], axis=4)], x, 2, []),
        "gathernd-batch-dims-huge": ([node("GatherND", ["x", "i"], ["y"], batch_dims=5)], x, 1, [i64("i", [2, 1], [0, 1])]),
        "einsum-missing-operand": ([node("Einsum", ["x"], ["y"], equation="ij,jk->ik")], x, 2, []),
        "einsum-unknown-output-label": ([node("Einsum", ["x", "x"], ["y"], equation="ij,kj->iz")], x, 2, []),
        "einsum-garbage": ([node("Einsum", ["x"], ["y"], equation="->->,,..")], x, 2, []),
        "einsum-rank-mismatch": ([node("Einsum", ["x"], ["y"], equation="ijk->i")], x, 1, []),
        "lstm-weights-mismatch": ([node("LSTM", ["x", "W", "R"], ["y"], hidden_size=4)], vi("x", [2, 1, 3]), 4,
                                  [f32("W", [1, 16, 5], [0.0] * 80), f32("R", [1, 16, 4], [0.0] * 64)]),
    }
    for name, (nodes, inp, rank, inits) in ops.items():
        case(name, model(nodes, [inp], [out(rank)], inits))
    case("split-num-outputs-zero", model([node("Split", ["x"], ["y"], axis=1, num_outputs=0)], [x], [out(2)], opset=18))
    case("dft-zero-length", model([node("DFT", ["x", "n"], ["y"])], [vi("x", [1, 8, 1])], [out(3)], [i64("n", [], [0])], opset=17))
    case("gridsample-unknown-mode", model([node("GridSample", ["x", "g"], ["y"], mode="cubicspline")], [x4], [out(4)],
                                          [f32("g", [1, 2, 2, 2], [0.0] * 8)], opset=16))

    # Inconsistent shapes.
    case("add-shapes-do-not-broadcast",
         model([helper.make_node("Add", ["x", "z"], ["y"])], [x, vi("z", [4, 5])], [y]))
    case("matmul-inner-mismatch",
         model([helper.make_node("MatMul", ["x", "z"], ["y"])], [x, vi("z", [4, 5])], [vi("y", [2, 5])]))
    case("declared-output-shape-wrong", model([relu], [x], [vi("y", [7, 7])]))
    case("declared-output-rank-wrong", model([relu], [x], [vi("y", [2, 3, 1])]))
    case("declared-output-type-wrong", model([relu], [x], [vi("y", [2, 3], TensorProto.INT64)]))
    short = helper.make_tensor("w", F, [2, 3], b"\0" * 24, raw=True)
    short.raw_data = b"\0" * 10
    case("initializer-raw-data-short",
         model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [short]))
    few = helper.make_tensor("w", F, [2, 3], [1.0] * 6)
    del few.float_data[2:]
    case("initializer-float-data-count",
         model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [few]))
    huge = helper.make_tensor("w", F, [1], b"\0" * 4, raw=True)
    huge.dims[:] = [1 << 40]
    huge.raw_data = b""
    case("initializer-huge-dims-no-data",
         model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [huge]))
    neg = helper.make_tensor("w", F, [6], b"\0" * 24, raw=True)
    neg.dims[:] = [-2, 3]
    case("initializer-negative-dim",
         model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [neg]))
    for name, location in [("external-data-missing", "no-such-file.bin"),
                           ("external-data-escapes", "../fixtures/gpt.onnx"),
                           ("external-data-absolute", "/etc/hostname")]:
        t = TensorProto(name="w", data_type=F, dims=[2, 3])
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value=location)
        case(name, model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [t]))

    # Huge and zero dims, unsupported element types.
    case("input-2^64-elements", model([relu], [vi("x", [4294967296, 4294967296])], [vi("y", [4294967296, 4294967296])]))
    case("input-dim-2^62", model([relu], [vi("x", [1 << 62])], [vi("y", [1 << 62])]))
    case("input-8-tib", model([relu], [vi("x", [1 << 41])], [vi("y", [1 << 41])]))
    case("input-negative-dim", model([relu], [vi("x", [-2, 3])], [vi("y", [-2, 3])]))
    case("input-no-shape", model([relu], [helper.make_tensor_value_info("x", F, None)], [y]))
    case("input-symbolic-inner-dim", model([relu], [vi("x", [2, "n"])], [vi("y", [2, "n"])]), 2)
    for tname, t in [("string", TensorProto.STRING), ("complex64", TensorProto.COMPLEX64),
                     ("uint64", TensorProto.UINT64), ("float8", getattr(TensorProto, "FLOAT8E4M3FN", 17)),
                     ("undefined", TensorProto.UNDEFINED)]:
        case("input-dtype-" + tname, model([relu], [vi("x", [2, 3], t)], [vi("y", [2, 3], t)]))
    bad_type = model([relu], [x], [y])
    bad_type.graph.input[0].type.tensor_type.elem_type = 99
    case("input-dtype-99", bad_type)
    case("initializer-dtype-complex",
         model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y],
               [helper.make_tensor("w", TensorProto.COMPLEX64, [2, 3], [0j] * 6)]))

    # Versions.
    case("opset-99", model([relu], [x], [y], opset=99))
    case("opset-0", model([relu], [x], [y], opset=0))
    case("opset-negative", model([relu], [x], [y], opset=-1))
    case("no-opset-import", model([relu], [x], [y], opset=None))
    case("ir-version-0", model([relu], [x], [y], ir_version=0))
    case("ir-version-huge", model([relu], [x], [y], ir_version=1 << 40))
    empty = onnx.ModelProto()
    empty.ir_version = 8
    empty.opset_import.add(domain="", version=13)
    case("no-graph", empty)


# ---------------------------------------------------------------------------------------
# pef: bad PEF files for run and inspect.

def pef_cases(c):
    cls = "pef"
    proto_dir = os.path.join(c.root, "_proto")
    os.makedirs(proto_dir)
    subprocess.run(["protoc", "--python_out=" + proto_dir, "-I" + os.path.join(REPO, "lib/pef"),
                    os.path.join(REPO, "lib/pef/pef.proto")], check=True)
    sys.path.insert(0, proto_dir)
    import pef_pb2  # noqa: E402  (generated just above)

    base = open(os.path.join(c.root, "base", "base.pef"), "rb").read()
    train = open(os.path.join(c.root, "train", "train.pef"), "rb").read()
    idx = "idx={case}/fixtures/idx.npy"

    def run_args(path):
        return ["run", "--pef", path, "--input", idx, "--output-dir", "{out}/r"]

    c.control(cls, "run", run_args("{case}/base/base.pef"))
    c.control(cls, "inspect", ["inspect", "{case}/base/base.pef"])
    c.control(cls, "inspect-json", ["inspect", "--json", "{case}/base/base.pef"])
    c.control(cls, "inspect-program", ["inspect", "--program", "{case}/base/base.pef"])

    def both(name, data, inspect=True, json_too=False, extra_run=()):
        path = c.write(cls, name + ".pef", data)
        c.add(cls, name + "-run", run_args(path) + list(extra_run))
        if inspect:
            c.add(cls, name + "-inspect", ["inspect", path])
        if json_too:
            c.add(cls, name + "-inspect-json", ["inspect", "--json", path])

    for name, path in SPECIAL:
        if path is None:
            path = c.write(cls, "empty.pef", b"")
        c.add(cls, name + "-run", run_args(path))
        c.add(cls, name + "-inspect", ["inspect", path])

    # Truncations and appended bytes.
    for at in [1, 7, 8, 16, 23, 24, 25, 31, 32, 33, 100, len(base) // 2, len(base) - 9, len(base) - 8,
               len(base) - 1]:
        both("truncated-at-%d" % at, base[:at], inspect=at in (8, 24, len(base) // 2, len(base) - 1))
    both("trailing-byte", base + b"\0")
    both("doubled", base + base, inspect=False)
    # Flipped bytes (the checksum catches them; the trailer itself too).
    for at in [0, 9, 17, 30, len(base) // 3, len(base) - 20, len(base) - 1]:
        b = bytearray(base)
        b[at] ^= 0x40
        both("flipped-at-%d" % at, bytes(b), inspect=at in (0, len(base) // 3, len(base) - 1))
    # Header fields, with the checksum recomputed so only the loader's checks remain.
    body = base[:-TRAILER]
    both("wrong-magic", seal(b"SHARDPEG" + body[8:]))
    both("lowercase-magic", seal(b"shardpef" + body[8:]), inspect=False)
    for v in [0, 1, 2, 4, 0xFFFFFFFF]:
        both("version-%d" % v, seal(body[:8] + struct.pack("<I", v) + body[12:]), inspect=v in (0, 2))
    both("length-too-big", seal(body[:16] + struct.pack("<Q", len(body)) + body[24:]))
    both("length-huge", seal(body[:16] + struct.pack("<Q", 1 << 63) + body[24:]))
    both("length-too-small", seal(body[:16] + struct.pack("<Q", len(body) - 40) + body[24:]), inspect=False)
    payload = body[HEADER:]
    both("payload-garbage", seal(body[:HEADER] + b"\xff" * len(payload)))
    both("payload-not-protobuf-short", pef_file(b"\x0a\xff\xff\xff\x0f", b"", base))
    both("weights-length-too-big", seal(body[:24] + struct.pack("<Q", len(body)) + body[32:]))
    both("weights-length-huge", seal(body[:24] + struct.pack("<Q", 1 << 63) + body[32:]))
    both("weights-length-too-small", seal(body[:24] + struct.pack("<Q", 8) + body[32:]), inspect=False)
    # Other file types.
    for name, src in [("onnx-file", "test/import/Inputs/gpt/model.onnx"),
                      ("npy-file", "test/import/Inputs/gpt/idx.npy"),
                      ("ir-file", "test/run/Inputs/gpt/gpt.ir"),
                      ("yaml-file", "targets/cpu.yaml")]:
        both(name, open(os.path.join(REPO, src), "rb").read(), inspect=name in ("onnx-file", "npy-file"))
    both("npz-file", open(os.path.join(c.root, "fixtures", "good.npz"), "rb").read(), inspect=False)

    # Checksum-valid forgeries of the package.
    def package(src=base):
        p = pef_pb2.Package()
        p.ParseFromString(pef_parts(src)[0])
        return p

    def forge(p, src=base):
        return pef_file(p.SerializeToString(), pef_parts(src)[1], src)

    def edit(fn, src=base):
        p = package(src)
        fn(p)
        return forge(p, src)

    prog = lambda p: p.programs[0]  # noqa: E731

    forgeries = {
        "mode-bogus": lambda p: setattr(p, "mode", "bogus"),
        "mode-empty": lambda p: setattr(p, "mode", ""),
        "mode-training-on-inference-program": lambda p: setattr(p, "mode", "training"),
        "input-spec-other-shape": lambda p: p.inputs[0].shape.__setitem__(0, 4),
        "input-spec-other-dtype": lambda p: setattr(p.inputs[0], "dtype", "f32"),
        "input-spec-unknown-dtype": lambda p: setattr(p.inputs[0], "dtype", "u8"),
        "input-spec-negative-bound": lambda p: setattr(p.inputs[0], "index_bound", -1),
        "input-spec-renamed": lambda p: setattr(p.inputs[0], "name", "zzz"),
        "input-spec-removed": lambda p: p.inputs.__delitem__(0),
        "input-spec-twice": lambda p: p.inputs.append(p.inputs[0]),
        "output-spec-other-shape": lambda p: p.outputs[0].shape.__setitem__(0, 7),
        "output-spec-removed": lambda p: p.outputs.__delitem__(0),
        "output-spec-huge-shape": lambda p: p.outputs[0].shape.extend([1 << 40, 1 << 40]),
        "buffer-unknown-kind": lambda p: setattr(p.buffers[0], "kind", 77),
        "buffer-negative-shape": lambda p: p.buffers[0].spec.shape.__setitem__(0, -2),
        "no-programs": lambda p: p.programs.__delitem__(0),
        "two-programs": lambda p: p.programs.append(p.programs[0]),
        "program-ir-empty": lambda p: setattr(prog(p), "ir", ""),
        "program-ir-garbage": lambda p: setattr(prog(p), "ir", "func @main(\xff"),
        "program-ir-truncated": lambda p: setattr(prog(p), "ir", prog(p).ir[:len(prog(p).ir) // 2]),
        "program-ir-input-reshaped": lambda p: setattr(prog(p), "ir", prog(p).ir.replace("input %idx: i64[2,8]", "input %idx: i64[4,8]", 1)),
        "program-ir-param-dropped": lambda p: setattr(prog(p), "ir", prog(p).ir.replace(", param %ln_f.bias: f32[32]", "", 1)),
        "program-entry-missing": lambda p: setattr(prog(p), "entry", "nope"),
        "program-entry-empty": lambda p: setattr(prog(p), "entry", ""),
        "program-devices-empty": lambda p: prog(p).devices.__delitem__(0),
        "program-devices-bogus": lambda p: prog(p).devices.extend([5, -3]),
        "program-shardings-without-mesh": lambda p: prog(p).arg_shardings.extend(["[{}, {}]"]),
        "mesh-without-shardings": lambda p: p.mesh.axes.add(name="data", size=2),
        "mesh-zero": lambda p: p.mesh.axes.add(name="data", size=0),
        "mesh-negative": lambda p: p.mesh.axes.add(name="data", size=-1),
        "weight-removed": lambda p: p.weights.__delitem__(len(p.weights) - 1),
        "weight-extra": lambda p: p.weights.append(p.weights[0]) or setattr(p.weights[-1], "name", "extra"),
        "weight-twice": lambda p: p.weights.append(p.weights[0]),
        "weight-bytes-in-message": lambda p: setattr(p.weights[0], "data", b"\0" * 4),
        "weight-offset-outside": lambda p: setattr(p.weights[-1], "offset", 1 << 40),
        "weight-offset-unaligned": lambda p: setattr(p.weights[0], "offset", p.weights[0].offset + 4),
        "weight-offset-negative": lambda p: setattr(p.weights[0], "offset", -64),
        "weights-overlap": lambda p: setattr(p.weights[1], "offset", p.weights[0].offset),
        "weight-other-shape": lambda p: p.weights[0].spec.shape.__setitem__(0, 32) or p.weights[0].spec.shape.__setitem__(1, 64),
        "weight-other-dtype": lambda p: setattr(p.weights[0].spec, "dtype", "i32"),
        "weight-unknown-dtype": lambda p: setattr(p.weights[0].spec, "dtype", "f128"),
        "weight-huge-shape": lambda p: (p.weights[0].spec.shape.__delitem__(slice(None)), p.weights[0].spec.shape.extend([1 << 40])),
        "weight-shape-overflow": lambda p: (p.weights[0].spec.shape.__delitem__(slice(None)), p.weights[0].spec.shape.extend([1 << 62, 1 << 62])),
        "weight-name-empty": lambda p: setattr(p.weights[0], "name", ""),
        "plan-values-short": lambda p: prog(p).plan.values.__delitem__(len(prog(p).plan.values) - 1),
        "plan-values-extra": lambda p: prog(p).plan.values.add(),
        "plan-no-steps": lambda p: prog(p).plan.steps.__delitem__(slice(None)),
        "plan-step-empty": lambda p: prog(p).plan.steps.add(kernel="add"),
        "plan-step-op-out-of-range": lambda p: prog(p).plan.steps[0].ops.append(1 << 40),
        "plan-step-op-negative": lambda p: prog(p).plan.steps[0].ops.__setitem__(0, -1),
        "plan-step-ops-reversed": lambda p: prog(p).plan.steps[0].ops.reverse() if len(prog(p).plan.steps[0].ops) > 1 else prog(p).plan.steps[0].ops.append(0),
        "plan-step-duplicated": lambda p: prog(p).plan.steps.append(prog(p).plan.steps[0]),
        "plan-steps-swapped": lambda p: swap_steps(prog(p).plan),
        "plan-step-anchor-without-operands": lambda p: anchor_without_operands(prog(p)),
        "plan-step-kernel-unknown": lambda p: [setattr(s, "kernel", "frobnicate") for s in prog(p).plan.steps],
        "plan-step-kernel-empty": lambda p: [setattr(s, "kernel", "") for s in prog(p).plan.steps],
        "plan-step-reference-flag": lambda p: [setattr(s, "reference", not s.reference) for s in prog(p).plan.steps],
        "plan-arena-negative": lambda p: setattr(prog(p).plan, "arena_bytes", -8),
        "plan-arena-huge": lambda p: setattr(prog(p).plan, "arena_bytes", 1 << 62),
        "plan-arena-zero": lambda p: setattr(prog(p).plan, "arena_bytes", 0),
        "plan-value-home-unknown": lambda p: setattr(prog(p).plan.values[40], "home", 9),
        "plan-value-offset-outside": lambda p: [setattr(v, "offset", 1 << 62) for v in prog(p).plan.values if v.home == 0],
        "plan-value-offset-negative": lambda p: [setattr(v, "offset", -64) for v in prog(p).plan.values if v.home == 0],
        "plan-argument-rehomed": lambda p: setattr(prog(p).plan.values[0], "home", 0),
        "plan-result-base-bogus": lambda p: [setattr(v, "base", 1 << 40) for v in prog(p).plan.values if v.home == 5],
        "plan-view-base-forward": lambda p: [setattr(v, "base", 1 << 40) for v in prog(p).plan.values if v.home == 2],
        "plan-everything-fused": lambda p: [setattr(v, "home", 4) for v in prog(p).plan.values[1:] if v.home in (0, 5)],
        "plan-arena-values-overlap": lambda p: [setattr(v, "offset", 0) for v in prog(p).plan.values if v.home == 0],
        "section-unknown-phase": lambda p: setattr(prog(p).sections[0], "phase", "sideways"),
        "section-first-op-negative": lambda p: setattr(prog(p).sections[0], "first_op", -5),
        "section-num-ops-huge": lambda p: setattr(prog(p).sections[0], "num_ops", 1 << 62),
        "section-num-ops-zero": lambda p: setattr(prog(p).sections[0], "num_ops", 0),
        "section-overlap": lambda p: prog(p).sections.append(prog(p).sections[0]),
        "section-gap": lambda p: prog(p).sections.__delitem__(0),
        "section-value-out-of-range": lambda p: prog(p).sections[0].inputs.append(1 << 40),
        "section-body-bogus": lambda p: setattr(prog(p).sections[0], "body", 1 << 40),
    }

    def anchor_without_operands(program):
        """A reduce_mean step whose last op (its anchor) is a later constant: an op with no
        operands (the base program numbers one value per op, so %N is op N)."""
        consts = [int(n) for n in re.findall(r"^  %(\d+) = constant\(", program.ir, re.M)]
        for st in program.plan.steps:
            later = [j for j in consts if j > st.ops[-1]]
            if st.kernel == "reduce_mean" and later:
                st.ops.append(later[0])
                return
        raise SystemExit("make_corpus.py: the base program has no reduce_mean step before a constant")

    def swap_steps(plan):
        if len(plan.steps) > 1:
            a, b = pef_pb2.PlanStep(), pef_pb2.PlanStep()
            a.CopyFrom(plan.steps[0])
            b.CopyFrom(plan.steps[-1])
            plan.steps[0].CopyFrom(b)
            plan.steps[-1].CopyFrom(a)

    for name, fn in forgeries.items():
        data = edit(fn)
        if data == base:
            raise SystemExit("make_corpus.py: forgery %s changed nothing" % name)
        both("forged-" + name, data, json_too=name.startswith(("mode-", "input-spec", "output-spec")))
    # The cost and search JSON are read by inspect --json and by report (through it).
    for field, prefix in [("cost_json", "cost-json"), ("search_json", "search-json")]:
        for name, text in [("not-json", "{not json"), ("nested", "[" * 200000 + "]" * 200000),
                           ("truncated", "{\"step_seconds\": 1.0, \"memory\": {")]:
            p = package()
            setattr(p, field, text)
            path = c.write(cls, "forged-%s-%s.pef" % (prefix, name), forge(p))
            c.add(cls, "forged-%s-%s-inspect-json" % (prefix, name), ["inspect", "--json", path])
            c.add(cls, "forged-%s-%s-report" % (prefix, name), ["report", path, "-o", "{out}/r.html"])
    c.control(cls, "report", ["report", "{case}/base/base.pef", "-o", "{out}/r.html"])
    # A run's metrics and stats files, as shardc report reads them.
    for name, text in [("nested", "[" * 200000 + "]" * 200000), ("not-json", "{\"step\": 1,"),
                       ("no-step", "{\"loss\": 1.0}"), ("loss-text", "{\"step\": 1, \"loss\": \"low\"}"),
                       ("eval-number", "{\"eval\": 1, \"step\": 1, \"eval_loss\": 2}"),
                       ("empty", "")]:
        path = c.write(cls, "metrics-%s.jsonl" % name, text)
        c.add(cls, "report-metrics-%s" % name,
              ["report", "{case}/base/base.pef", "--metrics", path, "-o", "{out}/r.html"])
    for name, text in [("nested", "{\"a\":" * 100000 + "1" + "}" * 100000), ("not-json", "{"),
                       ("no-median", "{\"steps\": 3}"),
                       ("other-pef", "{\"median_step_seconds\": 1, \"pef_checksum\": \"0\"}"),
                       ("ops-list", "{\"median_step_seconds\": 1, \"seconds_by_op\": [1]}")]:
        path = c.write(cls, "stats-%s.json" % name, text)
        c.add(cls, "report-stats-%s" % name,
              ["report", "{case}/base/base.pef", "--stats", path, "-o", "{out}/r.html"])

    # --measure-sections and --sections forward read the sections and plan steps further.
    for name in ["section-unknown-phase", "section-overlap", "section-gap", "plan-step-empty",
                 "section-num-ops-huge", "plan-steps-swapped"]:
        path = c.ref(cls, "forged-%s.pef" % name)
        c.add(cls, "forged-%s-measure-sections" % name, run_args(path) + ["--measure-sections"])
    # The training PEF: its optimizer state, labels bound and sections.
    targs = ["--input", "x={case}/fixtures/x.npy", "--input", "labels={case}/fixtures/labels.npy",
             "--output-dir", "{out}/r"]
    c.control(cls, "train-run", ["run", "--pef", "{case}/train/train.pef"] + targs)
    c.control(cls, "train-forward", ["run", "--pef", "{case}/train/train.pef", "--sections", "forward"] + targs)
    tforg = {
        "train-mode-inference": lambda p: setattr(p, "mode", "inference"),
        "train-opt-state-removed": lambda p: p.weights.__delitem__(len(p.weights) - 1),
        "train-sections-all-forward": lambda p: [setattr(s, "phase", "forward") for s in prog(p).sections],
        "train-sections-none-forward": lambda p: [setattr(s, "phase", "optimizer") for s in prog(p).sections],
    }
    # Without the labels' bound in the PEF, a label outside the model's 10 classes must still
    # be refused (the loss would silently leave it out).
    np.save(os.path.join(c.root, "fixtures", "labels-10.npy"), np.array([0, 3, 10, 1], np.int64))
    bad_labels = [a.replace("labels.npy", "labels-10.npy") for a in targs]
    for name, bound in [("train-labels-bound-removed", 0), ("train-labels-bound-huge", 1 << 62)]:
        p = package(train)
        for i in p.inputs:
            if i.name == "labels":
                i.index_bound = bound
        path = c.write(cls, "forged-%s.pef" % name, forge(p, train))
        c.add(cls, "forged-%s-run-label-10" % name, ["run", "--pef", path] + bad_labels)
        c.add(cls, "forged-%s-reference-label-10" % name, ["run", "--pef", path, "--reference"] + bad_labels)
    # A PEF without sections (from a shardc before them) runs, but cannot run --sections forward.
    path = c.write(cls, "forged-train-sections-removed.pef", edit(lambda p: prog(p).sections.__delitem__(slice(None)), train))
    c.add(cls, "forged-train-sections-removed-forward", ["run", "--pef", path, "--sections", "forward"] + targs)
    c.add(cls, "forged-train-sections-removed-measure-sections", ["run", "--pef", path, "--measure-sections"] + targs)
    for name, fn in tforg.items():
        data = edit(fn, train)
        if data == train:
            raise SystemExit("make_corpus.py: forgery %s changed nothing" % name)
        path = c.write(cls, "forged-%s.pef" % name, data)
        c.add(cls, "forged-%s-run" % name, ["run", "--pef", path] + targs)
        c.add(cls, "forged-%s-forward" % name, ["run", "--pef", path, "--sections", "forward"] + targs)
        c.add(cls, "forged-%s-inspect" % name, ["inspect", "--sections", path])


    # The partitioned PEF: its mesh, device list and shardings.
    dp = open(os.path.join(c.root, "dp", "dp.pef"), "rb").read()
    dargs = ["--input", "x={case}/fixtures/x.npy", "--output-dir", "{out}/r"]
    c.control(cls, "dp-run", ["run", "--pef", "{case}/dp/dp.pef"] + dargs)
    c.control(cls, "dp-inspect", ["inspect", "{case}/dp/dp.pef"])

    def mesh(*axes):
        def fn(p):
            del p.mesh.axes[:]
            for name, size in axes:
                p.mesh.axes.add(name=name, size=size)
        return fn

    def shard(i, text, results=False):
        def fn(p):
            (prog(p).result_shardings if results else prog(p).arg_shardings)[i] = text
        return fn

    dforg = {
        "dp-mesh-zero": mesh(("data", 0)),
        "dp-mesh-negative": mesh(("data", -2)),
        "dp-mesh-four": mesh(("data", 4)),
        "dp-mesh-huge": mesh(("data", 1 << 20)),
        "dp-mesh-int64-max": mesh(("data", (1 << 63) - 1)),
        "dp-mesh-product-overflow": mesh(("data", 1 << 32), ("model", 1 << 32)),
        "dp-mesh-axis-renamed": mesh(("batch", 2)),
        "dp-mesh-axis-twice": mesh(("data", 2), ("data", 1)),
        "dp-mesh-axis-empty-name": mesh(("", 2)),
        "dp-arg-sharding-garbage": shard(0, "[{data"),
        "dp-arg-sharding-unknown-axis": shard(0, "[{model}, {}]"),
        "dp-arg-sharding-rank": shard(0, "[{data}]"),
        "dp-arg-sharding-chunks-huge": shard(0, "[{data}:9223372036854775807, {}]"),
        "dp-arg-sharding-partial": shard(0, "[{}, {}] partial{data}"),
        "dp-arg-sharding-removed": lambda p: prog(p).arg_shardings.__delitem__(0),
        "dp-weight-sharding-changed": shard(1, "[{data}, {}]"),
        "dp-result-sharding-partial": shard(0, "[{data}, {}] partial{data}", True),
        "dp-result-sharding-rank": shard(0, "[{data}]", True),
        "dp-result-sharding-replicated": shard(0, "[{}, {}]", True),
        "dp-result-sharding-chunks-huge": shard(0, "[{data}:9223372036854775807, {}]", True),
        "dp-devices-one": lambda p: prog(p).devices.__delitem__(1),
        "dp-devices-repeated": lambda p: prog(p).devices.__setitem__(1, 0),
        "dp-devices-outside-mesh": lambda p: prog(p).devices.__setitem__(1, 7),
        "dp-input-spec-whole-shape": lambda p: p.inputs[0].shape.__setitem__(0, 2),
    }
    for name, fn in dforg.items():
        data = edit(fn, dp)
        if data == dp:
            raise SystemExit("make_corpus.py: forgery %s changed nothing" % name)
        path = c.write(cls, "forged-%s.pef" % name, data)
        c.add(cls, "forged-%s-run" % name, ["run", "--pef", path] + dargs)
        c.add(cls, "forged-%s-inspect" % name, ["inspect", path])


# ---------------------------------------------------------------------------------------
# npy: bad --input NAME=FILE.npy for run of the valid PEF.

def npy_bytes(header, data=b"", version=(1, 0), pad=True):
    """A .npy file with this header dict text, padded as numpy pads it."""
    h = header.encode("latin-1") if isinstance(header, str) else header
    start = 10 if version[0] == 1 else 12
    if pad:
        h += b" " * ((64 - (start + len(h) + 1) % 64) % 64) + b"\n"
    size = struct.pack("<H", len(h)) if version[0] == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes(version) + size + h + data


def npy_cases(c):
    cls = "npy"
    pef = "{case}/base/base.pef"
    good = np.load(os.path.join(c.root, "fixtures", "idx.npy"))

    def run_args(path, name="idx"):
        return ["run", "--pef", pef, "--input", "%s=%s" % (name, path), "--output-dir", "{out}/r"]

    def save(name, arr):
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=True)
        return c.write(cls, name + ".npy", buf.getvalue())

    def case(name, data):
        path = save(name, data) if isinstance(data, np.ndarray) else c.write(cls, name + ".npy", data)
        c.add(cls, name, run_args(path))

    c.control(cls, "idx", run_args("{case}/fixtures/idx.npy"))
    c.control(cls, "idx-v2-header", run_args(c.write(cls, "control-v2.npy", npy_bytes(
        "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 8), }", good.tobytes(), (2, 0)))))

    special_files(c, cls, ".npy", run_args)
    # Wrong dtypes and shapes.
    for dt in ["float32", "float64", "int32", "bool", "uint8", "int16", "float16", "complex64", "uint64"]:
        case("dtype-" + dt, good.astype(dt))
    case("dtype-big-endian-i8", good.astype(">i8"))
    case("dtype-object", np.array([[1] * 8] * 2, dtype=object))
    case("dtype-structured", np.zeros((2, 8), dtype=[("a", "<i8")]))
    case("dtype-unicode", np.array([["a"] * 8] * 2))
    for shape in [(3, 8), (2, 9), (16,), (2, 8, 1), (1, 2, 8), (), (0, 8), (8, 2)]:
        case("shape-" + ("x".join(map(str, shape)) or "scalar"),
             np.zeros(shape, np.int64) if shape != (8, 2) else good.reshape(8, 2))
    # Token ids outside the vocabulary (64 rows; negative ids count from the end down to -64).
    for v in [64, -65, 1 << 62, -(1 << 63)]:
        b = good.copy()
        b[1, 7] = v
        case("token-out-of-range-%d" % v, b)
    # Bytes.
    raw = open(os.path.join(c.root, "fixtures", "idx.npy"), "rb").read()
    hlen = struct.unpack("<H", raw[8:10])[0]
    for at in [1, 6, 8, 9, 10, 40, 10 + hlen - 1, 10 + hlen, 10 + hlen + 64, len(raw) - 1]:
        case("truncated-at-%d" % at, raw[:at])
    case("trailing-bytes", raw + b"\0" * 8)
    case("bad-magic", b"\x93NUMPZ" + raw[6:])
    case("magic-only", b"\x93NUMPY")
    case("version-4", raw[:6] + b"\x04\x00" + raw[8:])
    case("version-0", raw[:6] + b"\x00\x00" + raw[8:])
    case("header-length-past-end", raw[:8] + struct.pack("<H", 65535) + raw[10:])
    case("header-length-v2-huge", npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 8), }", good.tobytes(), (2, 0))[:8]
         + struct.pack("<I", 0xFFFFFFFF) + raw[10:])
    d = good.tobytes()
    hdr = {
        "header-not-a-dict": "['<i8', False, (2, 8)]",
        "header-empty": "",
        "header-no-descr": "{'fortran_order': False, 'shape': (2, 8), }",
        "header-no-shape": "{'descr': '<i8', 'fortran_order': False, }",
        "header-no-fortran-order": "{'descr': '<i8', 'shape': (2, 8), }",
        "fortran-order": "{'descr': '<i8', 'fortran_order': True, 'shape': (2, 8), }",
        "fortran-order-not-bool": "{'descr': '<i8', 'fortran_order': 0, 'shape': (2, 8), }",
        "shape-not-a-tuple": "{'descr': '<i8', 'fortran_order': False, 'shape': [2, 8], }",
        "shape-without-comma": "{'descr': '<i8', 'fortran_order': False, 'shape': (2 8), }",
        "shape-double-comma": "{'descr': '<i8', 'fortran_order': False, 'shape': (2,, 8), }",
        "shape-text": "{'descr': '<i8', 'fortran_order': False, 'shape': (two, eight), }",
        "shape-negative": "{'descr': '<i8', 'fortran_order': False, 'shape': (-2, -8), }",
        "shape-float": "{'descr': '<i8', 'fortran_order': False, 'shape': (2.0, 8.0), }",
        "shape-hex": "{'descr': '<i8', 'fortran_order': False, 'shape': (0x2, 8), }",
        "shape-unclosed": "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 8, }",
        "shape-huge": "{'descr': '<i8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
        "shape-beyond-int64": "{'descr': '<i8', 'fortran_order': False, 'shape': (99999999999999999999, 8), }",
        "shape-lies-bigger": "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 16), }",
        "shape-lies-2^45": "{'descr': '<i8', 'fortran_order': False, 'shape': (35184372088832,), }",
        "descr-unquoted": "{'descr': <i8, 'fortran_order': False, 'shape': (2, 8), }",
        "descr-unknown": "{'descr': '<q9', 'fortran_order': False, 'shape': (2, 8), }",
        "descr-object": "{'descr': '|O', 'fortran_order': False, 'shape': (2, 8), }",
        "descr-list": "{'descr': [('a', '<i8')], 'fortran_order': False, 'shape': (2, 8), }",
        "descr-twice": "{'descr': '<f4', 'descr': '<i8', 'fortran_order': False, 'shape': (2, 8), }",
        "keys-unquoted": "{descr: '<i8', fortran_order: False, shape: (2, 8), }",
        "header-unclosed-dict": "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 8), ",
        "header-extra-key": "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 8), 'evil': __import__('os'), }",
        "header-non-ascii": "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 8), '\xff\xfe': 1, }",
        "header-nul": "{'descr': '<i8',\0 'fortran_order': False, 'shape': (2, 8), }",
    }
    for name, h in hdr.items():
        case(name, npy_bytes(h, d))
    case("data-short-by-one", npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 8), }", d[:-1]))
    case("data-i4-sized", npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 8), }", d[:len(d) // 2]))

    # Labels of the training PEF outside its classes [0, 10).
    tpef = "{case}/train/train.pef"
    for v in [10, -1, -100, 1 << 40]:
        path = save("labels-%d" % v, np.array([0, 3, v, 1], np.int64))
        c.add(cls, "labels-out-of-range-%d" % v,
              ["run", "--pef", tpef, "--input", "x={case}/fixtures/x.npy", "--input", "labels=" + path,
               "--output-dir", "{out}/r"])
    path = save("labels-f32", np.array([0, 3, 9, 1], np.float32))
    c.add(cls, "labels-float", ["run", "--pef", tpef, "--input", "x={case}/fixtures/x.npy",
                                "--input", "labels=" + path, "--output-dir", "{out}/r"])


# ---------------------------------------------------------------------------------------
# npz: bad --weights W.npz for run.

def zip_bytes(members, compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compress) as z:
        for name, data in members:
            z.writestr(name, data)
    return buf.getvalue()


def npy_of(arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def central_entries(b):
    """(position, name, local header offset) of each central-directory entry of zip `b`."""
    e = b.rindex(b"PK\x05\x06")
    count = struct.unpack("<H", b[e + 10:e + 12])[0]
    at = struct.unpack("<I", b[e + 16:e + 20])[0]
    out = []
    for _ in range(count):
        n, x, k = struct.unpack("<HHH", b[at + 28:at + 34])
        out.append((at, b[at + 46:at + 46 + n], struct.unpack("<I", b[at + 42:at + 46])[0]))
        at += 46 + n + x + k
    return out


def zip64_patch(b, index, size=None, offset=None, local_lengths=None):
    """Zip `b` with a zip64 extra field giving central-directory entry `index` this 64-bit
    size and/or local-header offset (their 32-bit fields set to 0xffffffff), and optionally
    the name and extra lengths of its local header replaced."""
    b = bytearray(b)
    at, _, local = central_entries(bytes(b))[index]
    if local_lengths is not None:
        b[local + 26:local + 30] = struct.pack("<HH", *local_lengths)
    extra = b""
    if size is not None:
        b[at + 20:at + 28] = struct.pack("<II", 0xFFFFFFFF, 0xFFFFFFFF)
        extra += struct.pack("<QQ", size, size)
    if offset is not None:
        b[at + 42:at + 46] = struct.pack("<I", 0xFFFFFFFF)
        extra += struct.pack("<Q", offset)
    if extra:
        field = struct.pack("<HH", 1, len(extra)) + extra
        n, x = struct.unpack("<HH", b[at + 28:at + 32])
        b[at + 30:at + 32] = struct.pack("<H", x + len(field))
        b[at + 46 + n + x:at + 46 + n + x] = field
        e = bytes(b).rindex(b"PK\x05\x06")
        b[e + 12:e + 16] = struct.pack("<I", struct.unpack("<I", b[e + 12:e + 16])[0] + len(field))
    return bytes(b)


def npz_cases(c):
    cls = "npz"
    good_path = os.path.join(c.root, "fixtures", "good.npz")
    good = dict(np.load(good_path))
    names = list(good)

    def run_args(path):
        return ["run", "--pef", "{case}/base/base.pef", "--input", "idx={case}/fixtures/idx.npy",
                "--weights", path, "--output-dir", "{out}/r"]

    def case(name, data):
        c.add(cls, name, run_args(c.write(cls, name + ".npz", data)))

    def members(d):
        return [(k + ".npy", npy_of(v)) for k, v in d.items()]

    c.control(cls, "good", run_args("{case}/fixtures/good.npz"))
    c.control(cls, "numpy-savez", run_args(c.write(cls, "control-savez.npz", zip_bytes(members(good)))))

    special_files(c, cls, ".npz", run_args)
    case("missing-parameter", zip_bytes(members({k: v for k, v in good.items() if k != names[-1]})))
    case("missing-all-but-one", zip_bytes(members({names[0]: good[names[0]]})))
    case("no-members", zip_bytes([]))
    case("extra-name", zip_bytes(members(dict(good, bogus=np.zeros(3, np.float32)))))
    case("input-as-weight", zip_bytes(members(dict(good, idx=np.zeros((2, 8), np.int64)))))
    case("wrong-shape", zip_bytes(members(dict(good, **{names[0]: good[names[0]].T.copy()}))))
    case("wrong-shape-flat", zip_bytes(members(dict(good, **{names[0]: good[names[0]].ravel()}))))
    case("wrong-dtype-f64", zip_bytes(members(dict(good, **{names[0]: good[names[0]].astype(np.float64)}))))
    case("wrong-dtype-f16", zip_bytes(members(dict(good, **{names[0]: good[names[0]].astype(np.float16)}))))
    case("wrong-dtype-i32", zip_bytes(members(dict(good, **{names[0]: good[names[0]].astype(np.int32)}))))
    case("scalar-for-matrix", zip_bytes(members(dict(good, **{names[0]: np.float32(1)}))))
    case("not-a-zip", b"this is not a zip archive at all, just some text\n" * 4)
    case("npy-not-npz", open(os.path.join(c.root, "fixtures", "idx.npy"), "rb").read())
    case("pef-not-npz", open(os.path.join(c.root, "base", "base.pef"), "rb").read())
    raw = open(good_path, "rb").read()
    for at in [4, 30, 1000, len(raw) // 2, len(raw) - 100, len(raw) - 22, len(raw) - 1]:
        case("truncated-at-%d" % at, raw[:at])
    m = members(good)
    case("non-npy-member", zip_bytes(m + [("readme.txt", b"hello\n")]))
    case("non-npy-member-only-name", zip_bytes(m[:-1] + [(m[-1][0], b"hello\n")]))
    case("nested-path-member", zip_bytes(m[1:] + [("sub/" + m[0][0], m[0][1])]))
    case("dotdot-path-member", zip_bytes(m[1:] + [("../" + m[0][0], m[0][1])]))
    case("absolute-path-member", zip_bytes(m[1:] + [("/" + m[0][0], m[0][1])]))
    marked = m[0][0][:3] + "#" + m[0][0][4:]
    nul = zip_bytes(m[1:] + [(marked, m[0][1])]).replace(marked.encode(), (m[0][0][:3] + "\0" + m[0][0][4:]).encode())
    case("member-name-nul", nul)
    case("compressed", zip_bytes(m, zipfile.ZIP_DEFLATED))
    bad_member = npy_of(good[names[0]])
    case("member-bad-npy-header", zip_bytes(m[1:] + [(m[0][0], b"\x93NUMPY\x01\x00\x04\x00{}\n\n" + bad_member[128:])]))
    case("member-truncated-npy", zip_bytes(m[1:] + [(m[0][0], bad_member[:len(bad_member) // 2])]))
    case("member-fortran-order", zip_bytes(m[1:] + [(m[0][0], npy_of(np.asfortranarray(good[names[0]])))]))

    # Structural damage to the archive itself (offsets per the zip format).
    def eocd_at(b):
        return b.rindex(b"PK\x05\x06")

    b = bytearray(raw)
    e = eocd_at(b)
    b[e + 10:e + 12] = struct.pack("<H", 0xFFFF)
    case("directory-count-too-big", bytes(b))
    b = bytearray(raw)
    b[e + 16:e + 20] = struct.pack("<I", 0xFFFFFFF0)
    case("directory-offset-past-end", bytes(b))
    b = bytearray(raw)
    b[e + 16:e + 20] = struct.pack("<I", 0)
    case("directory-offset-at-local-header", bytes(b))
    b = bytearray(raw)
    cd = struct.unpack("<I", raw[e + 16:e + 20])[0]
    b[cd + 28:cd + 30] = struct.pack("<H", 0xFFFF)
    case("member-name-length-past-end", bytes(b))
    b = bytearray(raw)
    b[cd + 42:cd + 46] = struct.pack("<I", 0xFFFFFFF0)
    case("member-offset-past-end", bytes(b))
    b = bytearray(raw)
    b[cd + 20:cd + 24] = struct.pack("<I", 0x7FFFFFFF)
    case("member-size-huge", bytes(b))
    b = bytearray(raw)
    b[cd + 16] ^= 0xFF
    case("member-crc-wrong", bytes(b))
    b = bytearray(raw)
    b[cd + 10:cd + 12] = struct.pack("<H", 99)
    case("member-unknown-method", bytes(b))
    # zip64 extra fields whose 64-bit offset or size wrap around when added to the
    # positions the reader computes from them.
    plain = zip_bytes(m)
    last = len(m) - 1
    case("zip64-offset-wraps", zip64_patch(plain, 0, offset=(1 << 64) - 27))
    case("zip64-offset-huge", zip64_patch(plain, 0, offset=1 << 63))
    case("zip64-size-huge", zip64_patch(plain, 0, size=1 << 62))
    local_at = central_entries(plain)[last][2]
    data_at = local_at + 30 + 0xFFFF + 0xFFFF
    case("zip64-size-wraps-past-end",
         zip64_patch(plain, last, size=(1 << 64) - data_at, local_lengths=(0xFFFF, 0xFFFF)))
    case("local-name-length-past-end", zip64_patch(plain, last, local_lengths=(0xFFFF, 0xFFFF)))
    case("eocd-only", b"PK\x05\x06" + b"\0" * 18)
    case("eocd-claims-members", b"PK\x05\x06" + b"\0" * 4 + struct.pack("<HHII", 5, 5, 46 * 5, 0) + b"\0\0")


# ---------------------------------------------------------------------------------------
# target: bad --arch-file T.yaml for compile.

def with_block(text, key, line):
    """`text` (a target file) with the top-level field `key` and its nested lines replaced by
    `line`, or removed when `line` is None."""
    out, skipping, found = [], False, False
    for ln in text.split("\n"):
        if ln.startswith(key + ":"):
            skipping = found = True
            if line is not None:
                out.append(line)
            continue
        if skipping and ln.startswith(" "):
            continue
        skipping = False
        out.append(ln)
    if not found:
        raise SystemExit("make_corpus.py: no field %r in the base target" % key)
    return "\n".join(out)


def target_cases(c):
    cls = "target"
    cpu = open(os.path.join(REPO, "targets", "cpu.yaml")).read()

    def compile_args(path):
        return ["compile", "{case}/fixtures/mlp.onnx", "--inference", "-b", "4", "--arch-file", path,
                "--output-folder", "{out}/o", "--pef-name", "p"]

    def case(name, text):
        c.add(cls, name, compile_args(c.write(cls, name + ".yaml", text)))

    c.control(cls, "cpu", compile_args("{case}/fixtures/cpu.yaml"))
    special_files(c, cls, ".yaml", compile_args)
    # The search prices plans with the target's figures too.
    for name, old, new in [("search-peak-flops-denormal", "  f32: 134.4e9", "  f32: 5e-324"),
                           ("search-memory-bandwidth-denormal", "memory_bandwidth: 20e9",
                            "memory_bandwidth: 5e-324")]:
        c.add(cls, name, compile_args(c.write(cls, name + ".yaml", replaced(cpu, old, new))) +
              ["--auto-partition", "--mesh", "data=2,model=2"])
    # Missing keys.
    for key in ["name", "peak_flops", "memory_bandwidth", "memory_capacity", "devices_per_node",
                "intra_node", "inter_node"]:
        case("missing-" + key.replace("_", "-"), with_block(cpu, key, None))
    # Maps given as one value, and the reverse.
    case("peak-flops-scalar", with_block(cpu, "peak_flops", "peak_flops: 1e12"))
    case("peak-flops-list", with_block(cpu, "peak_flops", "peak_flops: [1e12, 2e12]"))
    case("intra-node-scalar", with_block(cpu, "intra_node", "intra_node: 10e9"))
    case("inter-node-list", with_block(cpu, "inter_node", "inter_node: [1.25e9, 50e-6]"))
    case("section-scalar", with_block(cpu, "section", "section: kernel"))
    case("info-cycle-alias", with_block(cpu, "info", "info: &a [*a]"))
    case("memory-capacity-map", replaced(cpu, "memory_capacity: 25.2e9", "memory_capacity:\n  value: 25.2e9\n"))
    edits = {
        "missing-peak-flops-f32": ("  f32: 134.4e9\n", ""),
        "missing-intra-node-bandwidth": ("  bandwidth: 10e9 ", "  #bandwidth: 10e9 "),
        "missing-inter-node-latency": ("  latency: 50e-6 ", "  #latency: 50e-6 "),
        "missing-section-model": ("  model: kernel", "  #model: kernel"),
        "missing-section-memory": ("  memory: 2097152 ", "  #memory: 2097152 "),
        # Wrong types.
        "name-list": ("name: cpu", "name: [cpu, gpu]"),
        "name-empty": ("name: cpu", "name: ''"),
        "name-null": ("name: cpu", "name:"),
        "peak-flops-unknown-dtype": ("  f32: 134.4e9", "  f32: 134.4e9\n  f8: 1e12"),
        "memory-bandwidth-text": ("memory_bandwidth: 20e9", "memory_bandwidth: fast"),
        "memory-bandwidth-units": ("memory_bandwidth: 20e9", "memory_bandwidth: 20 GB/s"),
        "memory-bandwidth-map": ("memory_bandwidth: 20e9", "memory_bandwidth: {value: 20e9}"),
        "devices-per-node-float": ("devices_per_node: 2 ", "devices_per_node: 1.5 "),
        "devices-per-node-text": ("devices_per_node: 2 ", "devices_per_node: two "),
        "devices-per-node-beyond-int64": ("devices_per_node: 2 ", "devices_per_node: 99999999999999999999 "),
        "weights-on-chip-text": ("  switch_overhead: 1e-6", "  switch_overhead: 1e-6\n  weights_on_chip: maybe"),
        "section-model-unknown": ("  model: kernel", "  model: systolic"),
        # Negative, zero, NaN and infinite figures.
        "memory-bandwidth-zero": ("memory_bandwidth: 20e9", "memory_bandwidth: 0"),
        "memory-bandwidth-negative": ("memory_bandwidth: 20e9", "memory_bandwidth: -20e9"),
        "memory-bandwidth-nan": ("memory_bandwidth: 20e9", "memory_bandwidth: .nan"),
        "memory-bandwidth-inf": ("memory_bandwidth: 20e9", "memory_bandwidth: .inf"),
        "memory-bandwidth-overflow": ("memory_bandwidth: 20e9", "memory_bandwidth: 1e999"),
        "memory-bandwidth-nan-word": ("memory_bandwidth: 20e9", "memory_bandwidth: nan"),
        "memory-capacity-zero": ("memory_capacity: 25.2e9", "memory_capacity: 0"),
        "memory-capacity-tiny": ("memory_capacity: 25.2e9", "memory_capacity: 1e-300"),
        "peak-flops-zero": ("  f32: 134.4e9", "  f32: 0"),
        "peak-flops-negative-bf16": ("  bf16: 268.8e9", "  bf16: -268.8e9"),
        "compute-efficiency-above-one": ("compute_efficiency: 0.55", "compute_efficiency: 1.5"),
        "compute-efficiency-zero": ("compute_efficiency: 0.55", "compute_efficiency: 0"),
        "memory-efficiency-nan": ("memory_efficiency: 1.0", "memory_efficiency: .NaN"),
        "op-overhead-negative": ("op_overhead: 1e-6", "op_overhead: -1e-6"),
        "devices-per-node-zero": ("devices_per_node: 2 ", "devices_per_node: 0 "),
        "devices-per-node-negative": ("devices_per_node: 2 ", "devices_per_node: -2 "),
        "compute-units-negative": ("compute_units: 2  ", "compute_units: -1  "),
        "device-compute-units-above-compute-units": ("compute_units: 2  ", "compute_units: 2\ndevice_compute_units: 3  "),
        "intra-node-bandwidth-zero": ("  bandwidth: 10e9 ", "  bandwidth: 0 "),
        "inter-node-latency-negative": ("  latency: 50e-6 ", "  latency: -50e-6 "),
        "section-compute-units-zero": ("  compute_units: 64 ", "  compute_units: 0 "),
        "section-memory-negative": ("  memory: 2097152 ", "  memory: -2097152 "),
        "section-tile-above-memory": ("  tile_bytes: 49152 ", "  tile_bytes: 4194304 "),
        "section-switch-overhead-inf": ("  switch_overhead: 1e-6", "  switch_overhead: .inf"),
        # Finite but outside what hardware can be: a typo such as 1e-9 for 1e9.
        "peak-flops-denormal": ("  f32: 134.4e9", "  f32: 5e-324"),
        "peak-flops-typo": ("  f32: 134.4e9", "  f32: 134.4e-9"),
        "peak-flops-beyond-any-chip": ("  f32: 134.4e9", "  f32: 1e300"),
        "memory-bandwidth-denormal": ("memory_bandwidth: 20e9", "memory_bandwidth: 5e-324"),
        "memory-bandwidth-typo": ("memory_bandwidth: 20e9", "memory_bandwidth: 20e-9"),
        "memory-capacity-beyond-any-chip": ("memory_capacity: 25.2e9", "memory_capacity: 1e300"),
        "section-switch-overhead-huge": ("  switch_overhead: 1e-6", "  switch_overhead: 1e308"),
        "op-overhead-hours": ("op_overhead: 1e-6", "op_overhead: 3600"),
        "intra-node-bandwidth-denormal": ("  bandwidth: 10e9 ", "  bandwidth: 5e-324 "),
        "inter-node-latency-huge": ("  latency: 50e-6 ", "  latency: 1e308 "),
        "section-memory-denormal": ("  memory: 2097152 ", "  memory: 5e-324 "),
        "section-compute-units-huge": ("  compute_units: 64 ", "  compute_units: 999999999999 "),
        # Duplicate and unknown keys.
        "duplicate-name": ("name: cpu", "name: cpu\nname: gpu"),
        "duplicate-memory-bandwidth": ("memory_bandwidth: 20e9", "memory_bandwidth: 20e9\nmemory_bandwidth: 1"),
        "duplicate-peak-f32": ("  f32: 134.4e9", "  f32: 134.4e9\n  f32: 1"),
        "unknown-field": ("name: cpu", "name: cpu\npeak_flop: 1e12"),
        "unknown-section-field": ("  model: kernel", "  model: kernel\n  modle: kernel"),
        "unknown-link-field": ("  bandwidth: 10e9 ", "  bandwith: 10e9\n  bandwidth: 10e9 "),
        # YAML syntax errors.
        "unclosed-flow-map": ("name: cpu", "name: {cpu"),
        "unclosed-quote": ("name: cpu", "name: 'cpu"),
        "bad-indentation": ("  f32: 134.4e9\n", "  f32: 134.4e9\n     bf16x: 1\n"),
        "tab-indentation": ("  f32: 134.4e9", "\tf32: 134.4e9"),
        "undefined-alias": ("memory_bandwidth: 20e9", "memory_bandwidth: *nothing"),
        "colon-colon": ("name: cpu", "name: : cpu"),
    }
    for name, (old, new) in edits.items():
        case(name, replaced(cpu, old, new))
    case("not-a-map-list", "- name: cpu\n- peak_flops: 1\n")
    case("not-a-map-scalar", "just a sentence\n")
    case("only-comments", "# nothing here\n")
    case("null-document", "~\n")
    case("binary-bytes", bytes(range(256)) * 4)
    case("nul-in-name", replaced(cpu, "name: cpu", "name: \"c\\0pu\"").encode() + b"\0\0")
    case("nested-brackets", "name: x\ninfo: " + "[" * 100000 + "]" * 100000 + "\n")
    case("nested-maps", "name: x\ninfo: " + "{a: " * 50000 + "1" + "}" * 50000 + "\n")
    case("nested-indentation", "name: x\ninfo:\n" + "".join("  " * (i + 1) + "k:\n" for i in range(3000)))
    case("unclosed-nesting", "name: x\ninfo: " + "[" * 100000 + "\n")
    case("many-unknown-keys", cpu + "".join("junk_%d: %d\n" % (i, i) for i in range(100000)))
    case("huge-line", "name: " + "x" * (8 << 20) + "\npeak_flops: nope\n")
    case("two-documents", cpu + "---\n" + cpu)
    # A ',' starting a token outside [ ] and { } hung yaml-cpp 0.7 (found by fuzz-Target).
    case("lone-comma", " ,\n")
    case("comma-after-flow-list", cpu + "x: [1],\n")
    case("nul-comma", b"\0,\x1daSC")


# ---------------------------------------------------------------------------------------
# strategy: bad --strategy FILE for compile with a mesh.

def strategy_cases(c):
    cls = "strategy"
    good = ("# a strategy for the MLP on a 2 x 2 mesh\n"
            "mesh data=2, model=2\n"
            "x: [{data}, {}]\n"
            "fc1.weight: [{model}, {}]\n"
            "fc1.bias: [{model}]\n"
            "fc2.weight: [{}, {model}]\n"
            "fc2.bias: [{}]\n"
            "fc3.weight: [{}, {}]\n"
            "fc3.bias: [{}]\n")

    def compile_args(path, mesh="data=2,model=2"):
        return ["compile", "{case}/fixtures/mlp.onnx", "--inference", "-b", "4", "--mesh", mesh,
                "--strategy", path, "--output-folder", "{out}/o", "--pef-name", "p"]

    def case(name, text, mesh="data=2,model=2"):
        c.add(cls, name, compile_args(c.write(cls, name + ".strategy", text), mesh))

    c.control(cls, "good", compile_args(c.write(cls, "control-good.strategy", good)))
    c.control(cls, "good-quoted", compile_args(c.write(cls, "control-quoted.strategy",
                                                       good.replace("fc1.weight:", "\"fc1.weight\":"))))
    # (An empty strategy file is valid: it fixes no argument.)
    for name, path in SPECIAL[1:]:
        c.add(cls, name, compile_args(path))
    edits = {
        "unknown-argument": ("fc3.bias: [{}]", "fc4.bias: [{}]"),
        "argument-case": ("fc3.bias: [{}]", "FC3.bias: [{}]"),
        "rank-too-small": ("x: [{data}, {}]", "x: [{data}]"),
        "rank-too-big": ("x: [{data}, {}]", "x: [{data}, {}, {}]"),
        "rank-zero": ("fc3.bias: [{}]", "fc3.bias: []"),
        "unknown-axis": ("x: [{data}, {}]", "x: [{batch}, {}]"),
        "axis-empty-name": ("x: [{data}, {}]", "x: [{,}, {}]"),
        "axis-twice-in-dim": ("fc1.weight: [{model}, {}]", "fc1.weight: [{model, model}, {}]"),
        "axis-twice-across-dims": ("fc1.weight: [{model}, {}]", "fc1.weight: [{model}, {model}]"),
        "does-not-divide": ("fc3.bias: [{}]", "fc3.bias: [{data, model}]"),
        "chunks-do-not-divide": ("fc1.bias: [{model}]", "fc1.bias: [{model}:3]"),
        "chunks-zero": ("fc1.bias: [{model}]", "fc1.bias: [{model}:0]"),
        "chunks-negative": ("fc1.bias: [{model}]", "fc1.bias: [{model}:-2]"),
        "chunks-huge": ("fc1.bias: [{model}]", "fc1.bias: [{model}:99999999999999999999]"),
        "chunks-int64-max": ("fc1.bias: [{model}]", "fc1.bias: [{model}:9223372036854775807]"),
        "chunks-text": ("fc1.bias: [{model}]", "fc1.bias: [{model}:many]"),
        "argument-twice": ("fc3.bias: [{}]", "fc3.bias: [{}]\nfc3.bias: [{model}]"),
        "argument-twice-quoted": ("fc3.bias: [{}]", "fc3.bias: [{}]\n\"fc3.bias\": [{}]"),
        "no-colon": ("x: [{data}, {}]", "x [{data}, {}]"),
        "no-closing-bracket": ("x: [{data}, {}]", "x: [{data}, {}"),
        "no-closing-brace": ("x: [{data}, {}]", "x: [{data, {}]"),
        "no-brackets": ("x: [{data}, {}]", "x: {data}, {}"),
        "trailing-text": ("x: [{data}, {}]", "x: [{data}, {}] and more"),
        "two-on-a-line": ("x: [{data}, {}]", "x: [{data}, {}] fc3.bias: [{}]"),
        "unterminated-quote": ("fc1.weight:", "\"fc1.weight:"),
        "empty-name": ("x: [{data}, {}]", ": [{data}, {}]"),
        "partial-unknown-axis": ("x: [{data}, {}]", "x: [{data}, {}] partial {seq}"),
        "mesh-zero": ("mesh data=2, model=2", "mesh data=0, model=2"),
        "mesh-negative": ("mesh data=2, model=2", "mesh data=-2, model=2"),
        "mesh-text-size": ("mesh data=2, model=2", "mesh data=two, model=2"),
        "mesh-huge": ("mesh data=2, model=2", "mesh data=99999999999999999999, model=2"),
        "mesh-axis-twice": ("mesh data=2, model=2", "mesh data=2, data=2"),
        "mesh-twice": ("mesh data=2, model=2", "mesh data=2, model=2\nmesh data=2, model=2"),
        "mesh-differs-from-flag": ("mesh data=2, model=2", "mesh data=4"),
        "mesh-no-size": ("mesh data=2, model=2", "mesh data, model"),
        "mesh-empty": ("mesh data=2, model=2", "mesh"),
        "mesh-after-arguments": ("mesh data=2, model=2\n", "") ,
    }
    for name, (old, new) in edits.items():
        text = replaced(good, old, new)
        if name == "mesh-after-arguments":
            text = text + "mesh data=4, model=1\n"
        case(name, text)
    case("mesh-flag-missing-axis", good, "data=2")
    case("nul-byte", good.replace("fc2.bias", "fc2\0bias"))
    case("non-utf8-name", good.encode() + b"\xff\xfe: [{}]\n")
    case("binary-bytes", bytes(range(256)) * 8)
    case("nested-brackets", good + "fc3.bias: " + "[" * 100000 + "]" * 100000 + "\n")
    case("nested-braces", good + "fc3.bias: [" + "{" * 100000 + "}" * 100000 + "]\n")
    case("huge-line", good + "fc3.bias: [{" + "model, " * 500000 + "model}]\n")
    case("many-unknown-arguments", good + "".join("arg%d: [{}]\n" % i for i in range(50000)))


# ---------------------------------------------------------------------------------------
# rules: bad -o1 --optimization-rules R.yaml.

def rules_cases(c):
    cls = "rules"

    def compile_args(path):
        return ["compile", "{case}/fixtures/gpt.ir", "--inference", "-o1", "--optimization-rules", path,
                "--output-folder", "{out}/o", "--pef-name", "p"]

    def case(name, text):
        c.add(cls, name, compile_args(c.write(cls, name + ".yaml", text)))

    c.control(cls, "default", compile_args("{case}/fixtures/rules.yaml"))
    c.control(cls, "one-rule", compile_args(c.write(cls, "control-one.yaml",
                                                    "r:\n  priority: 1\n  pattern:\n    a: {op_type: matmul, child: b}\n    b: {op_type: add}\n")))
    special_files(c, cls, ".yaml", compile_args)

    def rule(pattern, extra="  priority: 1\n"):
        return "r:\n" + extra + "  pattern:\n" + pattern

    case("name-invalid-utf8", b"r\xff\xfe:\n  priority: 1\n  pattern:\n    a: {op_type: matmul}\n")
    case("name-utf8-surrogate", b"r\xed\xa0\x80:\n  priority: 1\n  pattern:\n    a: {op_type: matmul}\n")
    case("name-overlong-utf8", b"r\xc0\xaf:\n  priority: 1\n  pattern:\n    a: {op_type: matmul}\n")
    cases = {
        "priority-float": rule("    a: {op_type: matmul}\n", "  priority: 1.5\n"),
        "priority-beyond-int64": rule("    a: {op_type: matmul}\n", "  priority: 99999999999999999999\n"),
        "priority-list": rule("    a: {op_type: matmul}\n", "  priority: [1]\n"),
        "priority-null": rule("    a: {op_type: matmul}\n", "  priority:\n"),
        "priority-nan": rule("    a: {op_type: matmul}\n", "  priority: .nan\n"),
        "pattern-list": "r:\n  priority: 1\n  pattern: [a, b]\n",
        "pattern-empty-map": "r:\n  priority: 1\n  pattern: {}\n",
        "pattern-scalar": "r:\n  priority: 1\n  pattern: matmul\n",
        "pattern-null": "r:\n  priority: 1\n  pattern:\n",
        "node-scalar": rule("    a: matmul\n"),
        "node-list": rule("    a: [matmul]\n"),
        "op-type-empty-list": rule("    a: {op_type: []}\n"),
        "op-type-number": rule("    a: {op_type: 5}\n"),
        "op-type-null": rule("    a: {op_type: }\n"),
        "op-type-map": rule("    a: {op_type: {matmul: 1}}\n"),
        "op-type-empty-string": rule("    a: {op_type: ''}\n"),
        "op-type-capitalized": rule("    a: {op_type: MatMul}\n"),
        "op-type-nested-list": rule("    a: {op_type: [[matmul]]}\n"),
        "child-number": rule("    a: {op_type: matmul, child: 7}\n    b: {op_type: add}\n"),
        "children-empty": rule("    a: {op_type: matmul, children: []}\n    b: {op_type: add}\n"),
        "children-duplicate": rule("    a: {op_type: matmul, children: [b, b]}\n    b: {op_type: add}\n"),
        "children-unknown": rule("    a: {op_type: matmul, children: [b, z]}\n    b: {op_type: add}\n"),
        "two-node-cycle": rule("    a: {op_type: matmul, child: b}\n    b: {op_type: add, child: a}\n"),
        "three-node-cycle": rule("    a: {op_type: matmul, child: b}\n    b: {op_type: add, child: c}\n    c: {op_type: relu, child: a}\n"),
        "required-number": rule("    a: {op_type: matmul, child: b}\n    b: {op_type: add, required: 2}\n"),
        "required-list": rule("    a: {op_type: matmul, child: b}\n    b: {op_type: add, required: [false]}\n"),
        "included-text": rule("    a: {op_type: matmul, child: b}\n    b: {op_type: add, included: maybe}\n"),
        "all-optional": rule("    a: {op_type: matmul, required: false, child: b}\n    b: {op_type: add, required: false}\n"),
        "heuristic-limit-negative": rule("    a: {op_type: matmul}\n", "  priority: 1\n  heuristic: {name: max_elements, limit: -5}\n"),
        "heuristic-limit-text": rule("    a: {op_type: matmul}\n", "  priority: 1\n  heuristic: {name: max_elements, limit: big}\n"),
        "heuristic-limit-beyond-int64": rule("    a: {op_type: matmul}\n", "  priority: 1\n  heuristic: {name: max_elements, limit: 99999999999999999999}\n"),
        "heuristic-list": rule("    a: {op_type: matmul}\n", "  priority: 1\n  heuristic: [single_consumer]\n"),
        "heuristic-empty-map": rule("    a: {op_type: matmul}\n", "  priority: 1\n  heuristic: {}\n"),
        "heuristic-unknown-field": rule("    a: {op_type: matmul}\n", "  priority: 1\n  heuristic: {name: max_elements, limit: 5, slack: 1}\n"),
        "rule-scalar": "r: 5\n",
        "rule-list": "r: [1, 2]\n",
        "rule-null": "r:\n",
        "undefined-alias": rule("    a: *nothing\n"),
        "unclosed-quote": rule("    a: {op_type: 'matmul}\n"),
        "tab-indentation": "r:\n\tpriority: 1\n\tpattern:\n\t\ta: {op_type: matmul}\n",
        "bad-indentation": "r:\n  priority: 1\n    pattern:\n  a: {op_type: matmul}\n",
        "duplicate-priority": rule("    a: {op_type: matmul}\n", "  priority: 1\n  priority: 2\n"),
        "duplicate-op-type": rule("    a: {op_type: matmul, op_type: add}\n"),
        "null-document": "~\n",
        "scalar-document": "fuse everything\n",
        "binary-bytes": bytes(range(256)) * 4,
        "nested-brackets": rule("    a: {op_type: " + "[" * 100000 + "]" * 100000 + "}\n"),
        "nested-maps": "r: " + "{a: " * 50000 + "1" + "}" * 50000 + "\n",
        "unclosed-nesting": "r: " + "[" * 100000 + "\n",
        "many-rules-last-bad": "".join("r%d:\n  priority: 1\n  pattern:\n    a: {op_type: matmul}\n" % i for i in range(5000))
                               + "bad:\n  priority: 1\n  pattern:\n    a: {op_type: nope}\n",
        "huge-node-name": rule("    " + "n" * (4 << 20) + ": {op_type: nope}\n"),
        "two-documents": rule("    a: {op_type: matmul}\n") + "---\n" + rule("    a: {op_type: add}\n"),
        # A ',' starting a token outside [ ] and { } hung yaml-cpp 0.7 (found by fuzz-Rules).
        "lone-comma": ",\n",
        "comma-after-flow-map": rule("    a: {op_type: matmul}\n") + "{a: 1},\n",
    }
    for name, text in cases.items():
        case(name, text)


# ---------------------------------------------------------------------------------------
# flags: bad command-line values for compile, run and inspect.

def flag_cases(c):
    cls = "flags"
    mlp = "{case}/fixtures/mlp.onnx"
    base = ["compile", mlp, "-b", "4", "--inference", "--output-folder", "{out}/o", "--pef-name", "p"]
    train = ["compile", mlp, "-b", "4", "--loss", "cross-entropy", "--output-folder", "{out}/o", "--pef-name", "p"]
    pef = "{case}/base/base.pef"
    run = ["run", "--pef", pef, "--input", "idx={case}/fixtures/idx.npy", "--output-dir", "{out}/r"]
    c.control(cls, "compile", base)
    c.control(cls, "compile-train", train)
    c.control(cls, "run", run)

    def case(name, args):
        c.add(cls, name, args)

    # compile: numbers out of range, NaN, infinities, empty strings.
    for v in ["0", "-1", "99999999999999999999", "1e3", "nan", "", "2.5", "0x4"]:
        case("batch-size-%s" % (v or "empty"), ["compile", mlp, "-b", v, "--inference", "--output-folder", "{out}/o", "--pef-name", "p"])
    for flag, values in [("--learning-rate", ["nan", "inf", "-inf", "-1", "0", "", "1e400", "-0"]),
                         ("--momentum", ["2", "-0.5", "nan"]),
                         ("--weight-decay", ["-1", "inf"])]:
        for v in values:
            case("%s-%s" % (flag[2:], v or "empty"), train + [flag, v])
    for v in [["--beta1", "1"], ["--beta2", "nan"], ["--eps", "-1e-8"], ["--eps", "inf"]]:
        case("adam-%s-%s" % (v[0][2:], v[1]), train + ["--optimizer", "adam"] + v)
    case("optimizer-unknown", train + ["--optimizer", "rmsprop"])
    case("optimizer-empty", train + ["--optimizer", ""])
    case("loss-unknown", ["compile", mlp, "-b", "4", "--loss", "hinge", "--output-folder", "{out}/o", "--pef-name", "p"])
    case("labels-empty", train + ["--labels", ""])
    case("labels-clash-with-input", train + ["--labels", "x"])
    case("freeze-matches-nothing", train + ["--freeze", "nothing*"])
    for fs in [["0", "0", "0"], ["nan", "nan", "nan"], ["inf", "1", "1"], ["-1", "1", "1"], ["1", "1", "1", "1.0001"],
               ["1", "1"], ["a", "b", "c"]]:
        case("scaling-factors-%s" % "-".join(fs), base + ["--resources-scaling-factors"] + fs)
    case("world-size-zero", base + ["--data-parallel", "-ws", "0"])
    case("world-size-negative", base + ["--data-parallel", "-ws", "-2"])
    case("batch-split-does-not-divide", base + ["--tensor-parallel", "batch", "--n-chips", "3"])
    case("world-size-huge", base + ["--data-parallel", "-ws", "1048576"])
    case("world-size-without-data-parallel", base + ["-ws", "2"])
    case("data-parallel-without-world-size", base + ["--data-parallel"])
    case("n-chips-zero", base + ["--tensor-parallel", "weight", "--n-chips", "0"])
    case("tensor-parallel-unknown", base + ["--tensor-parallel", "pipeline", "--n-chips", "2"])
    case("tensor-parallel-without-n-chips", base + ["--tensor-parallel", "weight"])
    for m in ["", "data", "data=", "=2", "data=0", "data=-2", "data=2,data=2", "data=99999999999999999999",
              "data=2;model=2", "data=2,,model=2", "data=1.5", "data=2,model=65536,x=65536"]:
        case("mesh-%s" % (m.replace("=", "_").replace(",", "+").replace(";", "+") or "empty"),
             base + ["--mesh", m, "--auto-partition", "--search-budget", "1"])
    case("mesh-without-strategy", base + ["--mesh", "data=2"])
    case("strategy-without-mesh-missing-file", base + ["--strategy", "{case}/fixtures/no-such.strategy"])
    for b in ["-1", "0", "10x", "nan", "inf s", "99999999999999999999"]:
        case("search-budget-%s" % b.replace(" ", "_"), base + ["--mesh", "data=2", "--auto-partition", "--search-budget", b])
    case("search-mode-unknown", base + ["--mesh", "data=2", "--auto-partition", "--search-mode", "random"])
    case("search-seed-negative", base + ["--mesh", "data=2", "--auto-partition", "--search-seed", "-1"])
    case("auto-partition-without-mesh", base + ["--auto-partition"])
    case("seed-negative", base + ["--seed", "-1"])
    case("seed-beyond-uint64", base + ["--seed", "99999999999999999999999"])
    case("arch-unknown", base + ["--arch", "tpu"])
    case("arch-empty", base + ["--arch", ""])
    case("arch-path-not-yaml", base + ["--arch", "{case}/fixtures/mlp.onnx"])
    case("arch-and-arch-file", base + ["--arch", "h100", "--arch-file", "{case}/fixtures/cpu.yaml"])
    case("arch-file-empty-string", base + ["--arch-file", ""])
    case("two-levels", base + ["-o0", "-o3"])
    case("rules-without-o1", base + ["--optimization-rules", "{case}/fixtures/rules.yaml"])
    case("inference-with-optimizer", base + ["--optimizer", "adam"])
    case("inference-with-loss", base + ["--loss", "mse"])
    case("nesterov-without-momentum", train + ["--nesterov"])
    case("momentum-with-adam", train + ["--optimizer", "adam", "--momentum", "0.9"])
    case("unknown-option", base + ["--frobnicate"])
    case("unknown-short-option", base + ["-Z"])
    case("no-model", ["compile", "--inference", "--output-folder", "{out}/o"])
    case("two-models", ["compile", mlp, mlp, "--inference", "-b", "4", "--output-folder", "{out}/o"])
    case("model-directory", ["compile", "{case}/fixtures", "--inference", "--output-folder", "{out}/o"])
    case("model-empty-string", ["compile", "", "--inference", "--output-folder", "{out}/o"])
    # Names and output paths.
    for name, pname in [("slash", "a/b"), ("dotdot", ".."), ("dot", "."), ("empty", ""), ("newline", "a\nb"),
                        ("space", "a b"), ("non-ascii", "caf\u00e9"), ("escape", "\x1b[2J"),
                        ("too-long", "a" * 300)]:
        case("pef-name-" + name, base[:-1] + [pname])
    # Names the folder takes but not every file made in it (NAME.pef fits in 255 bytes,
    # NAME.strategy and NAME.sharded.ir do not): refused before anything is written, or
    # written not at all.
    case("pef-name-too-long-for-strategy",
         ["compile", mlp, "-b", "4", "--inference", "--data-parallel", "-ws", "2",
          "--output-folder", "{out}/o", "--pef-name", "s" * 248])
    case("pef-name-too-long-for-pef", base[:-1] + ["p" * 252])
    case("output-folder-is-a-file", base[:5] + ["--output-folder", "{case}/fixtures/afile", "--pef-name", "p"])
    case("output-folder-under-a-file", base[:5] + ["--output-folder", "{case}/fixtures/afile/sub", "--pef-name", "p"])
    case("output-folder-empty", base[:5] + ["--output-folder", "", "--pef-name", "p"])
    case("output-folder-dev-null", base[:5] + ["--output-folder", "/dev/null", "--pef-name", "p"])
    case("log-dir-is-a-file", base + ["--log-dir", "{case}/fixtures/afile"])
    case("log-dir-under-a-file", base + ["--log-dir", "{case}/fixtures/afile/logs"])
    case("output-folder-is-proc", base[:5] + ["--output-folder", "/proc/self", "--pef-name", "p"])
    # run.
    for v in ["0", "-1", "abc", "", "1.5"]:
        case("steps-%s" % (v or "empty"), run + ["--steps", v])
    for v in ["0", "4097", "-1", "nan", ""]:
        case("threads-%s" % (v or "empty"), run + ["--threads", v])
    for v in ["0", "nan", "inf", "-1", "1e7"]:
        case("collective-timeout-%s" % v, run + ["--collective-timeout", v])
    case("run-seed-text", run + ["--seed", "abc"])
    case("sections-backward", run + ["--sections", "backward"])
    case("sections-forward-on-inference", run + ["--sections", "forward"])
    case("sections-empty", run + ["--sections", ""])
    case("measure-sections-with-reference", run + ["--measure-sections", "--reference"])
    case("input-no-equals", ["run", "--pef", pef, "--input", "idx", "--output-dir", "{out}/r"])
    case("input-no-name", ["run", "--pef", pef, "--input", "={case}/fixtures/idx.npy", "--output-dir", "{out}/r"])
    case("input-no-file", ["run", "--pef", pef, "--input", "idx=", "--output-dir", "{out}/r"])
    case("input-empty", ["run", "--pef", pef, "--input", "", "--output-dir", "{out}/r"])
    case("input-twice", run + ["--input", "idx={case}/fixtures/idx.npy"])
    case("input-unknown-name", run + ["--input", "tokens={case}/fixtures/idx.npy"])
    case("input-missing", ["run", "--pef", pef, "--output-dir", "{out}/r"])
    case("output-dir-is-a-file", ["run", "--pef", pef, "--input", "idx={case}/fixtures/idx.npy", "--output-dir", "{case}/fixtures/afile"])
    case("output-dir-under-a-file", ["run", "--pef", pef, "--input", "idx={case}/fixtures/idx.npy", "--output-dir", "{case}/fixtures/afile/r"])
    case("save-weights-is-a-folder", run + ["--save-weights", "{case}/fixtures/adir"])
    case("save-weights-under-a-file", run + ["--save-weights", "{case}/fixtures/afile/w.npz"])
    case("save-state-is-a-folder", run + ["--save-state", "{case}/fixtures/adir"])
    case("save-weights-empty", run + ["--save-weights", ""])
    case("weights-missing-file", run + ["--weights", "{case}/fixtures/no-such.npz"])
    case("pef-empty-string", ["run", "--pef", "", "--output-dir", "{out}/r"])
    case("pef-missing-value", ["run", "--pef"])
    case("run-no-pef", ["run", "--output-dir", "{out}/r"])
    case("run-positional", run + ["extra.pef"])
    case("run-unknown-option", run + ["--fast"])
    # inspect and the command itself.
    case("inspect-no-file", ["inspect"])
    case("inspect-two-files", ["inspect", pef, pef])
    case("inspect-json-and-program", ["inspect", "--json", "--program", pef])
    case("inspect-unknown-option", ["inspect", "--all", pef])
    case("unknown-command", ["frobnicate"])
    case("no-command", [])
    case("empty-command", [""])


def checkpoint_cases(c):
    """Checkpoints whose files read well but whose fields no run over the data could have
    written, for `run --resume`."""
    cls = "checkpoint"
    base = os.path.join(c.root, "fixtures", "ck", "step-00000007")
    progress = open(os.path.join(base, "progress.json")).read()

    def run_args(path):
        return ["run", "--pef", "{case}/train/train.pef", "--data", "x={case}/fixtures/xs.npy",
                "--data", "labels={case}/fixtures/ys.npy", "--steps", "12", "--resume", path,
                "--output-dir", "{out}/r"]

    def case(name, text, control=False):
        folder = c.file(cls, name)
        shutil.copytree(base, os.path.join(folder, "step-00000007"))
        with open(os.path.join(folder, "step-00000007", "progress.json"), "w") as f:
            f.write(text)
        (c.control if control else c.add)(cls, name, run_args(c.ref(cls, name)))

    case("unchanged", progress, control=True)
    fields = {
        "position-2^64-1": ('"position": 8', '"position": 18446744073709551615'),
        "position-2^63-1": ('"position": 8', '"position": 9223372036854775807'),
        "position-beyond-data": ('"position": 8', '"position": 24'),
        "position-negative": ('"position": 8', '"position": -4'),
        "step-2^64-1": ('"step": 7', '"step": 18446744073709551615'),
        "epoch-beyond-steps": ('"epoch": 1', '"epoch": 9'),
        "epoch-2^63": ('"epoch": 1', '"epoch": 9223372036854775808'),
        "batch-zero-position": ('"batch": 4', '"batch": 0'),
        "batch-2^63": ('"batch": 4', '"batch": 9223372036854775808'),
        "shuffle-word": ('"shuffle": false', '"shuffle": maybe'),
        "checksum-not-hex": ('"pef_checksum": "', '"pef_checksum": "zz'),
        "data-seed-float": ('"data_seed": 0', '"data_seed": 0.5'),
    }
    for name, (old, new) in fields.items():
        case(name, replaced(progress, old, new))
    case("missing-position", "\n".join(ln for ln in progress.split("\n") if "position" not in ln))
    case("empty", "")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = os.path.abspath(sys.argv[1])
    shardc = os.environ.get("SHARDC")
    if not shardc:
        sys.exit("make_corpus.py: set SHARDC to the shardc binary")
    if os.path.exists(out):
        if os.listdir(out) and not os.path.exists(os.path.join(out, "manifest.json")):
            sys.exit("make_corpus.py: %s exists, is not empty and holds no manifest.json" % out)
        shutil.rmtree(out)
    os.makedirs(out)
    c = Corpus(out)
    fixtures(c, shardc)
    text_ir(c)
    onnx_cases(c)
    pef_cases(c)
    npy_cases(c)
    npz_cases(c)
    target_cases(c)
    strategy_cases(c)
    rules_cases(c)
    checkpoint_cases(c)
    flag_cases(c)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(c.cases, f, indent=1)
    with open(os.path.join(out, "controls.json"), "w") as f:
        json.dump(c.controls, f, indent=1)
    counts = {}
    for case in c.cases:
        counts[case["class"]] = counts.get(case["class"], 0) + 1
    print("wrote %d cases (%s) and %d controls to %s" % (
        len(c.cases), ", ".join("%s %d" % kv for kv in counts.items()), len(c.controls), out))


if __name__ == "__main__":
    main()
