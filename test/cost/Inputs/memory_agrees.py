"""Checks that the estimate's activations and temporaries (the memory model, from the program)
lie within TOLERANCE of the compiled plan's (its arena, folded constants and outputs, as the
memory stage of a compile that writes a PEF counts them).

usage: memory_agrees.py ESTIMATE.txt COMPILED.txt TOLERANCE
"""
import re
import sys

UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def activations(path):
    m = re.search(r"activations and temporaries ([0-9.]+) (\w+)", open(path).read())
    if not m:
        sys.exit(f"{path}: no 'activations and temporaries' figure")
    return float(m.group(1)) * UNITS[m.group(2)]


model, plan, tolerance = activations(sys.argv[1]), activations(sys.argv[2]), float(sys.argv[3])
print(f"model {model:.0f} B, plan {plan:.0f} B, ratio {model / plan:.3f}")
sys.exit(0 if abs(model / plan - 1) <= tolerance else 1)
