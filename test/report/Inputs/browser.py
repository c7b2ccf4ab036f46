"""Headless Chromium for the report's checks: find it, dump a page's DOM after its script ran,
take a screenshot."""
import os
import shutil
import subprocess
import time

SKIP = 77  # ctest's SKIP_RETURN_CODE for the report's browser test


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _args(chromium, profile):
    # As root Chromium refuses its sandbox; the page is our own file, read offline.
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--user-data-dir=" + profile]


def dump_dom(chromium, page, profile):
    """(DOM text after the page's script ran, seconds the browser took)."""
    t0 = time.monotonic()
    out = subprocess.run(_args(chromium, profile) + ["--dump-dom", "file://" + os.path.abspath(page)],
                         capture_output=True, text=True, timeout=120)
    seconds = time.monotonic() - t0
    if out.returncode != 0 or "<body" not in out.stdout:
        raise SystemExit(f"chromium --dump-dom {page} failed ({out.returncode}): {out.stderr[-2000:]}")
    return out.stdout, seconds


def screenshot(chromium, page, png, profile, size="1100,2600"):
    out = subprocess.run(_args(chromium, profile) + ["--screenshot=" + os.path.abspath(png),
                                                     "--window-size=" + size, "--hide-scrollbars",
                                                     "file://" + os.path.abspath(page)],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or not os.path.exists(png):
        raise SystemExit(f"chromium --screenshot failed ({out.returncode}): {out.stderr[-2000:]}")
