#!/usr/bin/python3
"""Runs every case of a hostile-input corpus (make_corpus.py) through shardc and classifies
what happened:

  crash     killed by a signal, an exit code >= 128, or a crash report on stderr
            (a sanitizer's, "runtime error:", "terminate called", "Segmentation", "Aborted")
  hang      no exit within the timeout (20 s); the process group is killed
  silent    exit 0: the bad input was accepted
  leftover  refused, but the case's output folder is not empty afterwards (or holds a
            *.tmp* file), or a file of the corpus outside it appeared or changed
  internal  refused with "internal error": an exception no check turned into a message
  other     another exit code, or exit 1 with nothing on stderr
  ok        exit 1 and an error message on stderr

Each case runs with a fresh empty output folder as its working directory (substituted for
"{out}" in its arguments; "{case}" is OUT_DIR) and stdin from /dev/null. The control cases
of OUT_DIR/controls.json, valid inputs made of the same files, run first and must exit 0.

Prints one row per class with the counts, the non-ok cases with a command that reproduces
each, the first stderr lines of each, and a summary line. Exits 0 only if every control was
accepted and every case was ok.

Usage: run_corpus.py SHARDC OUT_DIR [--timeout S] [--class NAME ...]
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys

CRASH_MARKERS = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
                 "MemorySanitizer", "ThreadSanitizer", "runtime error:", "terminate called",
                 "Segmentation", "Aborted", "stack smashing", "double free")
KINDS = ["ok", "crash", "hang", "silent", "leftover", "internal", "other"]
CLASSES = ["text-ir", "onnx", "pef", "npy", "npz", "target", "strategy", "rules", "flags"]


def printable(s, limit=300):
    """`s` with control characters and non-ASCII escaped, cut to `limit` characters."""
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif " " <= ch <= "~":
            out.append(ch)
        elif ch == "\t":
            out.append("\\t")
        else:
            out.append("\\x%02x" % ord(ch) if ord(ch) < 256 else "\\u%04x" % ord(ch))
    text = "".join(out)
    return text if len(text) <= limit else text[:limit] + "... (%d characters)" % len(text)


def quote(arg):
    """A shell word for `arg`: shlex's quoting, or bash's $'...' when it holds bytes a
    terminal would act on."""
    if all(" " <= ch <= "~" for ch in arg):
        return shlex.quote(arg)
    body = "".join(ch if " " <= ch <= "~" and ch not in "'\\" else
                   "\\x%02x" % b for ch in arg for b in ch.encode("utf-8", "surrogateescape"))
    return "$'" + body + "'"


def snapshot(root, skip):
    """The modification time of every folder under `root` outside `skip` (an entry made,
    removed or renamed changes it), and the size and time of each file of the shared
    fixtures and base PEFs, which cases name as output paths."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) != skip]
        watch = os.path.relpath(dirpath, root).split(os.sep)[0] in ("fixtures", "base", "train", "dp")
        for name in [""] + (filenames if watch else []):
            path = os.path.join(dirpath, name) if name else dirpath
            try:
                st = os.lstat(path)
                seen[path] = (st.st_size if name else 0, st.st_mtime_ns)
            except OSError:
                pass
    return seen


def leftovers(out):
    """What is under the output folder `out` (which must be empty)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(out):
        for name in dirnames + filenames:
            path = os.path.relpath(os.path.join(dirpath, name), out)
            found.append(path + (" (a temporary file)" if ".tmp" in name else ""))
    return sorted(found)


def run_one(shardc, root, runs, case, timeout, index):
    out = os.path.join(runs, "%04d" % index)
    if os.path.lexists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    args = [a.replace("{out}", out).replace("{case}", root) for a in case["args"]]
    before = snapshot(root, runs)
    p = subprocess.Popen([shardc] + args, cwd=out, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    hung = False
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        hung = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        stdout, stderr = p.communicate()
    after = snapshot(root, runs)
    err = stderr.decode("utf-8", "replace")
    rc = p.returncode
    left = leftovers(out)
    changed = sorted(os.path.relpath(k, root) for k in set(before) | set(after)
                     if before.get(k) != after.get(k))
    problems = []
    if hung:
        kind = "hang"
        problems.append("no exit within %g s" % timeout)
    elif rc < 0 or rc >= 128 or any(m in err for m in CRASH_MARKERS):
        kind = "crash"
        problems.append("killed by signal %d" % -rc if rc < 0 else "exit code %d" % rc)
        problems += ["stderr reports '%s'" % m for m in CRASH_MARKERS if m in err]
    elif rc == 0:
        kind = "silent"
        problems.append("exit code 0: the bad input was accepted")
    else:
        kind = None
    if left:
        problems.append("left in its output folder: " + ", ".join(left[:6]) +
                        (" and %d more" % (len(left) - 6) if len(left) > 6 else ""))
    if changed:
        problems.append("changed the corpus outside its output folder: " + ", ".join(changed[:6]))
    # CLI11's usage errors say what is wrong without an "error:" prefix: any message counts.
    has_error_line = any(line.strip() for line in err.splitlines())
    if kind is None:
        if left or changed:
            kind = "leftover"
        elif "internal error" in err:
            kind = "internal"
            problems.append("an internal error")
        elif rc != 1 or not has_error_line:
            kind = "other"
            problems.append("exit code %d" % rc if rc != 1 else "nothing on stderr")
        else:
            kind = "ok"
    command = "rm -rf %s && mkdir -p %s && cd %s && %s" % (
        quote(out), quote(out), quote(out), " ".join(quote(a) for a in [shardc] + args))
    return {"kind": kind, "rc": rc, "stderr": err, "stdout": stdout.decode("utf-8", "replace"),
            "problems": problems, "command": command}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shardc")
    ap.add_argument("out_dir")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per case (default 20)")
    ap.add_argument("--class", dest="classes", action="append", help="run only this class")
    ap.add_argument("--keep", action="store_true", help="keep every case's output folder")
    ap.add_argument("--known", help="file of open findings (class/name, then why): reported, "
                    "not failed; one that is now ok fails, so the list stays true")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="also print every case's kind and first stderr line")
    o = ap.parse_args()
    shardc = os.path.abspath(o.shardc) if os.sep in o.shardc else shutil.which(o.shardc) or o.shardc
    root = os.path.abspath(o.out_dir)
    cases = json.load(open(os.path.join(root, "manifest.json")))
    controls_path = os.path.join(root, "controls.json")
    controls = json.load(open(controls_path)) if os.path.exists(controls_path) else []
    if o.classes:
        cases = [c for c in cases if c["class"] in o.classes]
        controls = [c for c in controls if c["class"] in o.classes]
    runs = os.path.join(root, "runs")
    if os.path.lexists(runs):
        shutil.rmtree(runs)
    os.makedirs(runs)

    failed_controls = []
    for i, c in enumerate(controls):
        r = run_one(shardc, root, runs, c, o.timeout, 9000 + i)
        if r["rc"] != 0 or r["kind"] in ("crash", "hang"):
            failed_controls.append((c, r))
        shutil.rmtree(os.path.join(runs, "%04d" % (9000 + i)), ignore_errors=True)

    results = []
    for i, c in enumerate(cases):
        r = run_one(shardc, root, runs, c, o.timeout, i)
        results.append((c, r))
        if o.verbose:
            first = next((l for l in r["stderr"].splitlines() if l.strip()), "")
            print("%-8s %s/%s: %s" % (r["kind"], c["class"], c["name"], printable(first, 200)))
        if r["kind"] == "ok" and not o.keep:
            shutil.rmtree(os.path.join(runs, "%04d" % i), ignore_errors=True)

    classes = [k for k in CLASSES if any(c["class"] == k for c, _ in results)]
    classes += sorted({c["class"] for c, _ in results} - set(classes))
    print("%-10s %6s %s" % ("class", "cases", " ".join("%8s" % k for k in KINDS)))
    totals = {k: 0 for k in KINDS}
    for cls in classes:
        rows = [r for c, r in results if c["class"] == cls]
        counts = {k: sum(1 for r in rows if r["kind"] == k) for k in KINDS}
        for k in KINDS:
            totals[k] += counts[k]
        print("%-10s %6d %s" % (cls, len(rows), " ".join("%8d" % counts[k] for k in KINDS)))
    print("%-10s %6d %s" % ("total", len(results), " ".join("%8d" % totals[k] for k in KINDS)))

    known = {}
    if o.known:
        for line in open(o.known):
            line = line.split("#")[0].strip()
            if line:
                name, _, why = line.partition(" ")
                known[name] = why.strip()
    key = lambda c: "%s/%s" % (c["class"], c["name"])
    open_known = [(c, r) for c, r in results if r["kind"] != "ok" and key(c) in known]
    fixed = [key(c) for c, r in results if r["kind"] == "ok" and key(c) in known]
    bad = [(c, r) for c, r in results if r["kind"] != "ok" and key(c) not in known]
    if open_known:
        print("\nknown open findings (%s):" % o.known)
        for c, r in open_known:
            print("%s %s: %s" % (r["kind"], key(c), known[key(c)]))
    for name in fixed:
        print("\n%s is listed as open but is now ok: remove it from %s" % (name, o.known))
    if bad:
        print("\nnot ok (kind class/name: command to reproduce):")
        for c, r in bad:
            print("%s %s/%s: %s" % (r["kind"], c["class"], c["name"], r["command"]))
        print("\ndetails:")
        for c, r in bad:
            print("%s %s/%s: %s" % (r["kind"], c["class"], c["name"], "; ".join(r["problems"])))
            lines = [l for l in r["stderr"].splitlines() if l.strip()]
            for line in lines[:4]:
                print("    stderr: " + printable(line))
            if len(lines) > 4:
                print("    stderr: ... (%d lines in all)" % len(lines))
            if not lines:
                print("    stderr: (empty)")
    for c, r in failed_controls:
        print("\ncontrol %s/%s was not accepted (exit %s): %s" % (c["class"], c["name"], r["rc"], r["command"]))
        for line in r["stderr"].splitlines()[:4]:
            print("    stderr: " + printable(line))
    print()
    if failed_controls:
        print("controls: %d of %d not accepted" % (len(failed_controls), len(controls)))
    else:
        print("controls: all %d accepted" % len(controls))
    if bad:
        print("summary: %d of %d cases not ok" % (len(bad), len(results)))
    elif open_known:
        print("summary: all %d cases ok but the %d known open" % (len(results), len(open_known)))
    else:
        print("summary: all %d cases ok" % len(results))
    return 1 if bad or failed_controls or fixed else 0


if __name__ == "__main__":
    sys.exit(main())
