#!/usr/bin/python3
"""Writes OUT/models/NAME.onnx: the mlp_external fixture's model with one initializer's
external data rewritten as an attacker would (a location outside the model's folder: "..",
an absolute path, a symbolic link leading out; offsets and lengths that are not integers or
lie beyond the file), beside a copy of its data file; and OUT/secret.bin outside the folder.

Usage: make.py MLP_EXTERNAL_DIR OUT
"""
import os
import shutil
import sys

import onnx

src, out = sys.argv[1], sys.argv[2]
models = os.path.join(out, "models")
os.makedirs(models, exist_ok=True)
shutil.copy(os.path.join(src, "model.onnx.data"), models)
secret = os.path.join(out, "secret.bin")
with open(secret, "wb") as f:
    f.write(b"\0" * 4096)
os.symlink(secret, os.path.join(models, "link.bin"))
cases = {
    "dotdot": {"location": "../secret.bin"},
    "absolute": {"location": secret},
    "symlink": {"location": "link.bin"},
    "offset_suffix": {"offset": "12abc"},
    "offset_huge": {"offset": str(2 ** 63 - 1)},
    "offset_too_big": {"offset": str(2 ** 64)},
    "length_negative": {"length": "-4"},
    "length_beyond": {"length": "1000000"},
}
for name, edits in cases.items():
    m = onnx.load(os.path.join(src, "model.onnx"), load_external_data=False)
    t = m.graph.initializer[0]
    for kv in t.external_data:
        if kv.key in edits:
            kv.value = edits.pop(kv.key)
    for k, v in edits.items():
        e = t.external_data.add()
        e.key, e.value = k, v
    onnx.save(m, os.path.join(models, name + ".onnx"))
