#!/usr/bin/env python3
"""Count unit tests after `make check` in a build directory.

Check prints one line per suite runner, e.g. `100%: Checks: 57, Failures: 0,
Errors: 0`, into each test's .log (Automake's parallel harness keeps a .log and
a .trs per test program). Those lines give test-case counts; a test program
whose log has no such line counts as one test, by its .trs result.

Prints `unit: N passed, M failed` and the failing programs; exit 0.
"""

import os
import re
import sys

CHECK_LINE = re.compile(r"(\d+)%: Checks: (\d+), Failures: (\d+), Errors: (\d+)")


def count(build_dir):
    passed = failed = 0
    failing = []
    for root, dirs, files in os.walk(build_dir):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in sorted(files):
            if not name.endswith(".trs"):
                continue
            trs = os.path.join(root, name)
            log = trs[:-4] + ".log"
            with open(trs, errors="replace") as f:
                results = re.findall(r"^:test-result:\s*(\S+)", f.read(), re.M)
            text = ""
            if os.path.exists(log):
                with open(log, errors="replace") as f:
                    text = f.read()
            lines = CHECK_LINE.findall(text)
            prog = os.path.relpath(trs, build_dir)[:-4]
            if lines:
                for _, checks, fails, errs in lines:
                    bad = int(fails) + int(errs)
                    passed += int(checks) - bad
                    failed += bad
                bad_prog = any(int(f) + int(e) for _, _, f, e in lines)
            else:
                ok = all(r in ("PASS", "SKIP", "XFAIL") for r in results) and results
                passed += 1 if ok else 0
                failed += 0 if ok else 1
                bad_prog = not ok
            # A crash after the summary (sanitizer abort) still fails the program.
            if not bad_prog and any(r in ("FAIL", "ERROR", "XPASS") for r in results):
                failed += 1
                bad_prog = True
            if bad_prog:
                failing.append(prog)
    return passed, failed, failing


def main():
    build_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    passed, failed, failing = count(build_dir)
    if failing:
        print("unit failing: %s" % " ".join(failing))
    print("unit: %d passed, %d failed" % (passed, failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
