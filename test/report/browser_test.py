"""The report's browser test (ctest `report_browser`): compiles an auto-partitioned training
PEF on a 2x2 mesh with -o1 sections and hypersections, trains it 6 steps with --metrics and
--stats-json, writes its report, and checks the page headless Chromium renders
(Inputs/check_page.py); leaves a screenshot in WORK/report.png. Exits 77 (skipped, with the
reason) where Chromium is missing.
  browser_test.py SHARDC WORK
"""
import os
import shutil
import subprocess
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "Inputs"))
import browser  # noqa: E402
import check_page  # noqa: E402


def shardc(*args):
    out = subprocess.run([SHARDC, *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL: shardc {' '.join(args)}: {out.stderr[-3000:]}")


if len(sys.argv) != 3:
    sys.exit(__doc__)
SHARDC, work = sys.argv[1], sys.argv[2]
if not browser.find_chromium():
    check_page.main([os.devnull, "--devices", "1"])  # says why, exits 77
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
gpt = os.path.join(here, "..", "import", "Inputs", "gpt_loss")
for name in ("idx", "targets"):
    np.save(os.path.join(work, name + ".npy"), np.tile(np.load(os.path.join(gpt, name + ".npy")), (4, 1)))
w = lambda f: os.path.join(work, f)  # noqa: E731
shardc("compile", os.path.join(gpt, "model.onnx"), "-b", "8", "--optimizer", "adam",
       "--auto-partition", "--mesh", "data=2,model=2", "--arch", "cpu", "--search-budget", "30",
       "-o1", "--enable-hypersection", "--grad-bucket-mib", "0", "--output-folder", work,
       "--pef-name", "ap")
shardc("run", "--pef", w("ap/ap.pef"), "--input", "idx=" + w("idx.npy"), "--input",
       "targets=" + w("targets.npy"), "--steps", "6", "--metrics", w("m.jsonl"), "--stats",
       "--stats-json", w("stats.json"), "--output-dir", w("out"))
shardc("report", w("ap/ap.pef"), "--metrics", w("m.jsonl"), "--stats", w("stats.json"), "-o",
       w("report.html"))
check_page.main([w("report.html"), "--devices", "4", "--sections", "--search", "--stats",
                 "--metrics", "--screenshot", w("report.png")])
