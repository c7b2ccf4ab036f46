"""Starts a long `shardc run` with ENV added to the environment, reads the OpenMP settings of
the running process from /proc/PID/environ, stops it and prints them, one per line."""
import os
import subprocess
import sys
import time

shardc, pef, x = sys.argv[1:4]
extra = dict(kv.split("=", 1) for kv in sys.argv[4:])
env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
env.update(extra)
p = subprocess.Popen([shardc, "run", "--pef", pef, "--input", "x=" + x, "--steps", "100000000",
                      "--output-dir", os.path.dirname(pef)], env=env,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    seen = None
    deadline = time.time() + 20
    while time.time() < deadline and p.poll() is None:
        time.sleep(0.2)
        try:
            with open(f"/proc/{p.pid}/environ", "rb") as f:
                items = f.read().split(b"\0")
            seen = sorted(i.decode() for i in items if i.split(b"=")[0] in
                          (b"OMP_WAIT_POLICY", b"GOMP_SPINCOUNT"))
        except OSError:
            continue
        if seen:
            break
    print("\n".join(seen) if seen else "none")
finally:
    p.kill()
    p.wait()
