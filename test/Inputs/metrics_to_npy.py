"""Writes one field of a `shardc run --metrics` file's step records (not its evaluation
records; with --eval, only those) as a float32 .npy, in file order.

usage: metrics_to_npy.py METRICS.jsonl OUT.npy [--field loss] [--eval]
"""
import argparse
import json

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("metrics")
ap.add_argument("out")
ap.add_argument("--field", default="loss")
ap.add_argument("--eval", action="store_true")
a = ap.parse_args()
values = []
with open(a.metrics) as f:
    for line in f:
        record = json.loads(line)
        if bool(record.get("eval", False)) == a.eval:
            values.append(record[a.field])
np.save(a.out, np.array(values, dtype=np.float32))
