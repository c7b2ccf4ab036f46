#!/usr/bin/env python3
"""Runs shardc-opt on every file of the malformed-input corpus and checks that each is
rejected cleanly: exit code exactly 1, nothing on stdout, exactly one line on stderr of the
form PATH:LINE:COL: error: MESSAGE, with MESSAGE naming the intended problem, and no crash,
hang or sanitizer report.

usage: check_corpus.py SHARDC_OPT CORPUS_DIR
"""
import os
import re
import subprocess
import sys

# File name -> a substring its error message must contain. Every file in the corpus must be
# listed here (and vice versa), so that each one fails for the reason it was written for.
EXPECTED = {
    "bad-element-type.ir": "unknown element type 'float32'",
    "binary-garbage.ir": "unexpected character '\\x7f'",
    "declared-type-mismatch.ir": "'matmul' op result 0 is declared f32[4,2], but the shape rule gives f32[2,4]",
    "dim-overflow.ir": "tensor type f32[99999999999,99999999999] has too many elements",
    "duplicated-function.ir": "function '@f' is defined twice",
    "empty-result-name.ir": "a result of @f has no name",
    "huge-integer.ir": "integer 123456789012345678901234567890 is out of range",
    "huge-splat.ir": "splat literal of f32[1000000,1000000] is too large",
    "invalid-utf8.ir": "unexpected character '\\xff'",
    "missing-attribute.ir": "'transpose' op requires attribute 'perm'",
    "missing-closing-brace.ir": "expected '}', got end of file",
    "missing-opening-brace.ir": "expected '{', got 'return'",
    "negative-dim.ir": "dimension -1 is negative",
    "no-results.ir": "@f must return at least one value",
    "nul-byte.ir": "unexpected character '\\x00'",
    "redefined-value.ir": "value '%y' is defined twice",
    "return-count.ir": "return has 2 values, but @f declares 1 result",
    "return-type.ir": "returned value has type f32[2], but result 'r' is declared f64[2]",
    "shape-mismatch.ir": "'add' op shapes [2] and [3] do not broadcast",
    "statement-outside-function.ir": "expected 'func'",
    "truncated-after-ops.ir": "unexpected end of file in @f: missing 'return'",
    "truncated-mid-dense.ir": "expected a number, got end of file",
    "truncated-mid-op.ir": "expected a value like %x, got end of file",
    "truncated-mid-signature.ir": "expected a tensor type like f32[2,3], got end of file",
    "truncated-mid-string.ir": "unterminated string",
    "truncated-mid-type.ir": "expected an integer, got end of file",
    "undefined-value.ir": "use of undefined value '%w'",
    "unknown-attribute.ir": "'neg' op has no attribute 'inplace'",
    "unknown-op.ir": "unknown op 'conv3d'",
    "unterminated-string.ir": "unterminated string",
    "utf8-bom.ir": "unexpected character '\\xef'",
    "wrong-arity.ir": "'add' op expects 2 operands, got 1",
    "wrong-attribute-kind.ir": "'softmax' op attribute 'axis' must be integer, got string",
}

CRASH_MARKERS = ("Sanitizer", "runtime error:", "internal error", "terminate called", "Assertion")


def check(tool, path, name):
    try:
        p = subprocess.run([tool, path], capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        return ["hangs (no exit within 30 s)"]
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    problems = []
    if p.returncode != 1:
        problems.append("exit code %d, expected 1" % p.returncode)
    if out:
        problems.append("stdout is not empty: %r" % out[:200])
    for marker in CRASH_MARKERS:
        if marker in err:
            problems.append("stderr reports a crash (%s)" % marker)
    lines = err.split("\n")
    if len(lines) != 2 or lines[1] != "":
        problems.append("stderr is not exactly one line: %r" % err[:400])
    elif not re.fullmatch(re.escape(path) + r":\d+:\d+: error: .+", lines[0]):
        problems.append("stderr is not PATH:LINE:COL: error: MESSAGE: %r" % lines[0])
    elif EXPECTED[name] not in lines[0]:
        problems.append("message %r does not contain %r" % (lines[0], EXPECTED[name]))
    return problems


def main():
    tool, corpus = sys.argv[1], sys.argv[2]
    names = sorted(os.listdir(corpus))
    failures = []
    for name in sorted(set(EXPECTED) - set(names)):
        failures.append("%s: listed in check_corpus.py but missing from %s" % (name, corpus))
    for name in names:
        if name not in EXPECTED:
            failures.append("%s: not listed in check_corpus.py; add what its error must say" % name)
            continue
        for problem in check(tool, os.path.join(corpus, name), name):
            failures.append("%s: %s" % (name, problem))
    for f in failures:
        print("FAIL: " + f)
    print("checked %d files, %d problems" % (len(names), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
