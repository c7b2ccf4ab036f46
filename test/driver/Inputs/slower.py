"""slower.py A B: exits 0 when the step time estimated in A's output exceeds B's."""
import re
import sys

UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def step(path):
    m = re.search(r"step ([0-9.]+) (s|ms|us|ns) ", open(path).read())
    if not m:
        sys.exit(f"slower.py: no step time in {path}")
    return float(m.group(1)) * UNITS[m.group(2)]


a, b = step(sys.argv[1]), step(sys.argv[2])
print(f"{sys.argv[1]}: {a:.3g} s, {sys.argv[2]}: {b:.3g} s")
sys.exit(0 if a > b else 1)
