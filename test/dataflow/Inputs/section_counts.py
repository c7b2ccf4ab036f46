"""Checks that each PEF has fewer sections than the one before it (-o0, -o1, -o3 of one model)
and that every section of each covers the program once, as `shardc inspect --json` lists them.

usage: section_counts.py SHARDC PEF...
"""
import argparse
import json
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("shardc")
ap.add_argument("pefs", nargs="+")
a = ap.parse_args()
counts = []
for pef in a.pefs:
    j = json.loads(subprocess.run([a.shardc, "inspect", pef, "--json"], check=True,
                                  capture_output=True, text=True).stdout)
    s = j["sections"]
    covered = sum(x["num_ops"] for x in s)
    if covered != j["op_count"]:
        sys.exit(f"{pef}: sections cover {covered} of {j['op_count']} ops")
    counts.append(len(s))
print("sections:", counts)
for before, after in zip(counts, counts[1:]):
    if not after < before:
        sys.exit(f"section counts {counts} do not decrease")
