"""Flips one bit in each of up to 400 evenly spaced bytes of a PEF and checks that
`shardc inspect` refuses every variant with exit code 1 and a one-line error."""
import subprocess
import sys

shardc, pef, tmp = sys.argv[1:4]
data = open(pef, "rb").read()
step = max(1, len(data) // 400)
for i in range(0, len(data), step):
    b = bytearray(data)
    b[i] ^= 0x10
    open(tmp, "wb").write(b)
    r = subprocess.run([shardc, "inspect", tmp], capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    if r.returncode != 1 or len(lines) != 1 or "error" not in lines[0]:
        sys.exit(f"byte {i}: exit {r.returncode}, stderr {r.stderr!r}")
print(f"refused all {len(range(0, len(data), step))} variants")
