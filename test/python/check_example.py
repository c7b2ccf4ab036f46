"""Runs an example script in a scratch folder and checks that the losses it prints fall."""
import re
import subprocess
import sys
import tempfile

with tempfile.TemporaryDirectory() as tmp:
    r = subprocess.run([sys.executable, sys.argv[1]], cwd=tmp, capture_output=True, text=True)
print(r.stdout, end="")
if r.returncode != 0:
    sys.exit(f"{sys.argv[1]} failed:\n{r.stderr}")
losses = [float(x) for x in re.findall(r"loss (\d+\.\d+)", r.stdout)]
if len(losses) < 2 or not losses[-1] < 0.8 * losses[0]:
    sys.exit(f"the losses do not fall: {losses}")
