"""Compiles MODEL at -o1 with every rules file of CORPUS_DIR and checks that each is refused
cleanly: exit code 1, one error line naming the file and line its first comment gives
("# line N: MESSAGE"; line 0: the file as a whole) with MESSAGE in it, and no output left.

usage: check_rules.py SHARDC MODEL CORPUS_DIR OUT_DIR
"""
import os
import re
import subprocess
import sys

shardc, model, corpus, out = sys.argv[1:5]
failures = []
files = sorted(f for f in os.listdir(corpus) if f.endswith(".yaml"))
for name in files:
    path = os.path.join(corpus, name)
    with open(path) as f:
        m = re.match(r"# line (\d+): (.*)", f.readline())
    if not m:
        failures.append(f"{name}: first line must be '# line N: MESSAGE'")
        continue
    line, message = int(m.group(1)), m.group(2)
    folder = os.path.join(out, name)
    p = subprocess.run([shardc, "compile", model, "--inference", "-o1", "--optimization-rules",
                        path, "--output-folder", folder], capture_output=True, text=True,
                       timeout=60)
    where = f"{path}:{line}: " if line else f"{path}: "
    lines = p.stderr.splitlines()
    if p.returncode != 1:
        failures.append(f"{name}: exit code {p.returncode}, want 1; stderr: {p.stderr!r}")
    elif len(lines) != 1 or not lines[0].startswith("shardc: error: " + where) \
            or message not in lines[0]:
        failures.append(f"{name}: stderr {p.stderr!r}, want one line 'shardc: error: {where}"
                        f"...{message}...'")
    elif os.path.exists(folder):
        failures.append(f"{name}: left {folder} behind")
for f in failures:
    print(f)
print(f"{len(files) - len(failures)} of {len(files)} bad rules files refused as expected")
sys.exit(1 if failures else 0)
