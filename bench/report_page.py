#!/usr/bin/env python3
"""shardc report's page for a large plan: a 96-layer GPT (text IR from scripts/gen_gpt.py,
d 64, 8 heads, vocab 128, sequence 16, batch 64) compiled for Adam training, auto-partitioned
on an 8x8 mesh (data=8,model=8) for --arch h100, twice: -o1 with hypersections, and -o0
without (every op its own section: the most sections a plan has). Prints each page's size (in
all and per part) and how long headless Chromium takes to open it: the browser's
wall time for --dump-dom against that of an empty page, and the time from navigation to the
end of the page's script (performance.now()), medians of --repeats.
  bench/report_page.py [--build build] [--repeats 5] [--layers 96] [--mesh data=8,model=8]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

from benchutil import ROOT, add_common_args

sys.path.insert(0, os.path.join(ROOT, "test", "report", "Inputs"))
import browser  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(ap)
    ap.add_argument("--layers", type=int, default=96)
    ap.add_argument("--mesh", default="data=8,model=8")
    a = ap.parse_args()
    shardc = os.path.join(a.build, "bin", "shardc")
    chromium = browser.find_chromium()
    if not chromium:
        sys.exit("bench/report_page.py: Chromium is missing (scripts/setup.sh installs it)")
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_gpt.py"), work,
                        "--vocab", "128", "--dim", "64", "--heads", "8", "--seq", "16",
                        "--batch", "64", "--layers", str(a.layers)],
                       check=True, stdout=subprocess.DEVNULL)
        blank = os.path.join(work, "blank.html")
        with open(blank, "w") as f:
            f.write("<!DOCTYPE html><html><body><script>document.body.dataset.readyMs = "
                    "String(Math.round(performance.now()));</script></body></html>")
        for name, flags in (("o1", ["-o1", "--enable-hypersection"]), ("o0", ["-o0"])):
            measure(a, shardc, chromium, work, name, flags, blank)


def measure(a, shardc, chromium, work, name, flags, blank):
    subprocess.run([shardc, "compile", os.path.join(work, "gpt.ir"), "--loss", "cross-entropy",
                    "--labels", "targets", "--optimizer", "adam", "--mesh", a.mesh,
                    "--auto-partition", "--search-budget", "40", "--arch", "h100", *flags,
                    "--output-folder", work, "--pef-name", name], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page = os.path.join(work, name + ".html")
    subprocess.run([shardc, "report", os.path.join(work, name, name + ".pef"), "-o", page],
                   check=True, stdout=subprocess.DEVNULL)
    html = open(page, encoding="utf-8").read()
    print(f"{a.layers}-layer GPT, mesh {a.mesh}, Adam, auto-partitioned, {' '.join(flags)}")
    groups, spans = html.count('class="arg-group"'), html.count('class="span ')
    size = len(html.encode())
    sections = re.search(r"(\d+) sections \(-o", html).group(1)
    print(f"  page: {size / 1e6:.3f} MB ({size} bytes), {groups} argument groups, "
          f"{sections} sections drawn as {spans} spans")
    for part in re.findall(r'<section id="(\w+)"', html):
        start = html.index(f'<section id="{part}"')
        print(f"    {part:12s} {html.index('</section>', start) - start:8d} bytes")
    walls, ready, blank_walls, blank_ready = [], [], [], []
    for _ in range(a.repeats):
        with tempfile.TemporaryDirectory() as profile:
            for path, w, r in ((page, walls, ready), (blank, blank_walls, blank_ready)):
                dom, seconds = browser.dump_dom(chromium, path, profile)
                w.append(seconds)
                r.append(int(re.search(r'data-ready-ms="(\d+)"', dom).group(1)))
    med = statistics.median
    print(f"  chromium --dump-dom: page {med(walls):.2f} s, empty page {med(blank_walls):.2f} s "
          f"(difference {med(walls) - med(blank_walls):.2f} s)")
    print(f"  navigation to the end of the page's script: page {med(ready)} ms, "
          f"empty page {med(blank_ready)} ms")

if __name__ == "__main__":
    main()
