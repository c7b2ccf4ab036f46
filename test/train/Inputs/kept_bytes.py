"""Reads the activations kept for the backward pass from three compile reports (a batch of
8, of 2, and of 4 micro-batches of 2) and checks that the micro-batched step keeps about one
micro-batch's: within 25% of the batch of 2, under a third of the batch of 8.

  kept_bytes.py B8.txt B2.txt MB4.txt
"""
import re
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def kept(path):
    m = re.search(r"kept for the backward pass: ([0-9.]+) (\w+)\)", open(path).read())
    if not m:
        sys.exit(f"{path}: no 'kept for the backward pass' figure")
    return float(m.group(1)) * UNITS[m.group(2)]


b8, b2, mb4 = (kept(p) for p in sys.argv[1:4])
print(f"kept: batch 8 {b8:.0f} B, batch 2 {b2:.0f} B, 4 micro-batches of 2 {mb4:.0f} B")
if not (mb4 <= 1.25 * b2 and 3 * mb4 < b8):
    sys.exit("the micro-batched step does not keep about one micro-batch's activations")
