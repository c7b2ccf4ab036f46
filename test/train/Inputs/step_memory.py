"""Reads the memory lines of three compile reports (a batch of 8, of 2, and of 4 micro-batches
of 2) and checks what the micro-batched step holds:
- the activations kept for the backward pass: about one micro-batch's (within 25% of the
  batch of 2, under a third of the batch of 8);
- the activations and temporaries: the batch of 2's, plus one running sum of the gradients
  and the transposed weights the micro-batches share, so less than 2.5 times the parameters
  more (each micro-batch's gradients left to pile up before their sum make it 3x), and the
  batch of 2 less than 1.5 times the parameters (updated weights and state written into
  their own buffers; kept beside them, 3x).

  step_memory.py B8.txt B2.txt MB4.txt
"""
import re
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def figure(path, label):
    m = re.search(label + r" ([0-9.]+) (\w+)", open(path).read())
    if not m:
        sys.exit(f"{path}: no '{label}' figure")
    return float(m.group(1)) * UNITS[m.group(2)]


b8, b2, mb4 = (figure(p, "kept for the backward pass:") for p in sys.argv[1:4])
print(f"kept: batch 8 {b8:.0f} B, batch 2 {b2:.0f} B, 4 micro-batches of 2 {mb4:.0f} B")
if not (mb4 <= 1.25 * b2 and 3 * mb4 < b8):
    sys.exit("the micro-batched step does not keep about one micro-batch's activations")
params = figure(sys.argv[2], "parameters")
t2, t4 = (figure(p, "activations and temporaries") for p in sys.argv[2:4])
print(f"temporaries: batch 2 {t2:.0f} B, 4 micro-batches of 2 {t4:.0f} B, parameters {params:.0f} B")
if t2 >= 1.5 * params:
    sys.exit("the step's temporaries hold the updated parameters beside the old ones")
if t4 - t2 >= 2.5 * params:
    sys.exit("the micro-batches' gradients pile up before they are summed")
