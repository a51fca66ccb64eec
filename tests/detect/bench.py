#!/usr/bin/env python3
"""Detection / false-positive / throughput benchmark for @detectSQLi and @detectXSS.

Attack corpus, built at run time (nothing from CRS is stored in this repo):
  * the CRS regression tests of rule 942100 (SQLi) and 941100 (XSS) that
    expect the rule to match, from ../shared/crs (v4.28.0 and the 3.3.4 tests
    converted to the go-ftw v2 schema). Each test's request is taken apart
    the way the rule sees it: query-string and url-encoded body arguments
    (names and values), XML text and attribute values, cookies (names and
    values), User-Agent and (for 942100) Referer; each value goes through the
    rule's transformation chain. A test counts as detected when any of its
    values matches, which is how the rule fires.
  * tests/detect/sqli-variants.txt and xss-variants.txt: one ARGS value per
    line, transformed by the rule's chain.
  * --crs-all adds, for information only, the payloads of every other
    942xxx / 941xxx test that expects its own rule to match (those rules are
    regexes for narrower patterns; there is no target for them).
Benign corpus: every line of tests/detect/benign/*.txt, transformed by each
rule's chain, must not match; the false-positive rate is reported per file.
Throughput: a 1 KB value made of benign prose, run many times in batch mode.

The operator runs in a separate program (--runner, default "bulwark op"):
  single mode:  RUNNER @detectSQLi       value on stdin; exit 0 = match, 1 = no match
  batch mode:   RUNNER --batch @detectSQLi
                stdin: one value per line, "\\\\" = backslash and "\\xHH" = byte
                HH (used for every byte < 0x20, 0x7f and the backslash);
                stdout: one line per value, "1" = match, "0" = no match.
  timing:       RUNNER --repeat N @detectSQLi
                value on stdin; runs the operator N times and prints the
                elapsed seconds (a float) on stdout; exit status as above.
Use --batch when the runner supports it (much faster). Throughput uses
--repeat when the runner has it, else a batch-mode lower bound.
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.parse
import xml.etree.ElementTree as ET

try:
    import yaml
except ImportError:  # pragma: no cover
    sys.exit("bench.py needs PyYAML (apt-get install python3-yaml)")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CRS_DEFAULT = os.path.join(os.path.dirname(REPO), "shared", "crs")

# ---------------------------------------------------------------------------
# ModSecurity transformations, as far as the two rules need them.


def t_utf8_to_unicode(b):
    """Multi-byte UTF-8 sequences become %uHHHH; invalid bytes stay."""
    out = bytearray()
    i = 0
    while i < len(b):
        c = b[i]
        n = 0
        if 0xC2 <= c <= 0xDF:
            n = 1
        elif 0xE0 <= c <= 0xEF:
            n = 2
        elif 0xF0 <= c <= 0xF4:
            n = 3
        if n and i + n < len(b) + 0 and all(0x80 <= x <= 0xBF for x in b[i + 1:i + 1 + n]) \
                and len(b[i + 1:i + 1 + n]) == n:
            cp = b[i:i + 1 + n].decode("utf-8", "replace")
            if len(cp) == 1 and cp != "\ufffd":
                out += b"%%u%04x" % (ord(cp) & 0xFFFF)
                i += 1 + n
                continue
        out.append(c)
        i += 1
    return bytes(out)


def _unicode_byte(cp):
    """Best fit of a code point to one byte: full-width ASCII folds to
    ASCII, others keep their low byte (ModSecurity without a mapping)."""
    if 0xFF01 <= cp <= 0xFF5E:
        return cp - 0xFEE0
    return cp & 0xFF


HEX = b"0123456789abcdefABCDEF"


def t_url_decode_uni(b):
    out = bytearray()
    i = 0
    n = len(b)
    while i < n:
        c = b[i]
        if c == 0x25 and i + 5 < n + 0 and b[i + 1] in b"uU" and all(x in HEX for x in b[i + 2:i + 6]) \
                and len(b[i + 2:i + 6]) == 4:
            out.append(_unicode_byte(int(b[i + 2:i + 6], 16)))
            i += 6
        elif c == 0x25 and i + 2 < n and b[i + 1] in HEX and b[i + 2] in HEX:
            out.append(int(b[i + 1:i + 3], 16))
            i += 3
        elif c == 0x2B:
            out.append(0x20)
            i += 1
        else:
            out.append(c)
            i += 1
    return bytes(out)


ENTITIES = {b"quot": 0x22, b"amp": 0x26, b"lt": 0x3C, b"gt": 0x3E, b"nbsp": 0xA0}


def t_html_entity_decode(b):
    def num(m):
        txt = m.group(1)
        v = int(txt[1:], 16) if txt[:1] in (b"x", b"X") else int(txt)
        return bytes([v & 0xFF])

    b = re.sub(rb"&#((?:[xX][0-9a-fA-F]+)|[0-9]+);?", num, b)
    return re.sub(rb"&(quot|amp|lt|gt|nbsp);?", lambda m: bytes([ENTITIES[m.group(1)]]), b)


def t_js_decode(b):
    esc = {ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("v"): 11}
    out = bytearray()
    i, n = 0, len(b)
    while i < n:
        c = b[i]
        if c != 0x5C or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = b[i + 1]
        if d in b"uU" and i + 5 < n and all(x in HEX for x in b[i + 2:i + 6]):
            out.append(_unicode_byte(int(b[i + 2:i + 6], 16)))
            i += 6
        elif d in b"xX" and i + 3 < n and b[i + 2] in HEX and b[i + 3] in HEX:
            out.append(int(b[i + 2:i + 4], 16))
            i += 4
        elif 0x30 <= d <= 0x37:
            j = i + 1
            while j < n and j < i + 4 and 0x30 <= b[j] <= 0x37:
                j += 1
            out.append(int(b[i + 1:j], 8) & 0xFF)
            i = j
        else:
            out.append(esc.get(d, d))
            i += 2
    return bytes(out)


def t_css_decode(b):
    out = bytearray()
    i, n = 0, len(b)
    while i < n:
        c = b[i]
        if c != 0x5C or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        j = i + 1
        while j < n and j < i + 7 and b[j] in HEX:
            j += 1
        if j > i + 1:
            out.append(_unicode_byte(int(b[i + 1:j], 16)))
            if j < n and b[j] in b" \t\n\r\f":
                j += 1
            i = j
        elif b[i + 1] == 0x0A:
            i += 2
        else:
            out.append(b[i + 1])
            i += 2
    return bytes(out)


def t_remove_nulls(b):
    return b.replace(b"\x00", b"")


CHAINS = {
    "sqli": [t_utf8_to_unicode, t_url_decode_uni, t_remove_nulls],
    "xss": [t_utf8_to_unicode, t_url_decode_uni, t_html_entity_decode, t_js_decode,
            t_css_decode, t_remove_nulls],
}
OPS = {"sqli": "@detectSQLi", "xss": "@detectXSS"}
RULES = {"sqli": "942100", "xss": "941100"}
RULE_DIRS = {"sqli": "REQUEST-942-APPLICATION-ATTACK-SQLI", "xss": "REQUEST-941-APPLICATION-ATTACK-XSS"}


def transform(kind, b):
    for f in CHAINS[kind]:
        b = f(b)
    return b

# ---------------------------------------------------------------------------
# CRS tests -> the values the rule inspects.


def url_decode_arg(s):
    """ModSecurity's argument decoding: %XX and '+'; bad escapes stay."""
    return urllib.parse.unquote_to_bytes(s.replace(b"+", b" ")) if isinstance(s, bytes) \
        else urllib.parse.unquote_to_bytes(s.replace("+", " "))


def split_args(qs):
    vals = []
    for part in qs.split(b"&"):
        if not part:
            continue
        name, eq, value = part.partition(b"=")
        vals.append(url_decode_arg(name))
        if eq:
            vals.append(url_decode_arg(value))
    return vals


def xml_values(data):
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return []
    vals = []
    for el in root.iter():
        if el.text:
            vals.append(el.text.encode("utf-8"))
        for v in el.attrib.values():
            vals.append(v.encode("utf-8"))
    return vals


def header_map(inp):
    hdrs = {}
    for k, v in (inp.get("headers") or {}).items():
        hdrs[str(k).lower()] = str(v)
    for h in inp.get("ordered_headers") or []:
        hdrs[str(h.get("name", "")).lower()] = str(h.get("value", ""))
    return hdrs


def stage_values(kind, inp):
    """Values of one request that the rule looks at (before its t: chain)."""
    hdrs = header_map(inp)
    vals = []
    uri = str(inp.get("uri", "/")).encode("utf-8", "surrogateescape")
    if b"?" in uri:
        vals += split_args(uri.split(b"?", 1)[1])
    data = inp.get("data")
    if data is not None:
        data = (data if isinstance(data, str) else str(data)).encode("utf-8", "surrogateescape")
        ctype = hdrs.get("content-type", "application/x-www-form-urlencoded").lower()
        if "xml" in ctype:
            vals += xml_values(data)
        elif "json" not in ctype and "multipart" not in ctype:
            vals += split_args(data)
    for c in hdrs.get("cookie", "").split(";"):
        name, _, value = c.strip().partition("=")
        if name:
            vals += [name.encode(), value.encode()]
    if "user-agent" in hdrs:
        vals.append(hdrs["user-agent"].encode("utf-8", "surrogateescape"))
    if kind == "sqli" and "referer" in hdrs:
        vals.append(hdrs["referer"].encode("utf-8", "surrogateescape"))
    return vals


def expects(out, rule):
    log = (out or {}).get("log") or {}
    ids = [str(i) for i in (log.get("expect_ids") or [])]
    return rule in ids or ('id "%s"' % rule) in str(log.get("match_regex", ""))


def crs_tests(kind, crs_root, only_rule=True):
    """(label, [values]) per positive test."""
    roots = [("v4.28.0", os.path.join(crs_root, "v4.28.0", "tests", "regression", "tests")),
             ("v3.3.4", os.path.join(crs_root, "v3.3.4", "tests-v2"))]
    tests = []
    for ver, root in roots:
        pattern = os.path.join(root, RULE_DIRS[kind], RULES[kind] + ".yaml") if only_rule \
            else os.path.join(root, RULE_DIRS[kind], "*.yaml")
        for path in sorted(glob.glob(pattern)):
            doc = yaml.safe_load(open(path, encoding="utf-8"))
            rule = str(doc.get("rule_id") or os.path.basename(path)[:6])
            if not only_rule and rule == RULES[kind]:
                continue
            for t in doc.get("tests", []):
                if t.get("enabled") is False:
                    continue
                vals = []
                hit = False
                for st in t.get("stages", []):
                    st = st.get("stage", st)
                    if expects(st.get("output"), rule):
                        hit = True
                        vals += stage_values(kind, st.get("input") or {})
                if hit and vals:
                    tests.append(("%s %s-%s" % (ver, rule, t.get("test_id")),
                                  [transform(kind, v) for v in vals]))
    return tests

# ---------------------------------------------------------------------------
# Running the operator.


def escape_line(b):
    out = bytearray()
    for c in b:
        if c == 0x5C:
            out += b"\\\\"
        elif c < 0x20 or c == 0x7F:
            out += b"\\x%02x" % c
        else:
            out.append(c)
    return bytes(out) + b"\n"


class Runner:
    def __init__(self, cmd, batch):
        self.cmd = shlex.split(cmd)
        self.batch = batch

    def run(self, kind, values):
        op = OPS[kind]
        if not values:
            return []
        if self.batch:
            p = subprocess.run(self.cmd + ["--batch", op], input=b"".join(map(escape_line, values)),
                               stdout=subprocess.PIPE, check=True)
            res = p.stdout.split()
            if len(res) != len(values):
                sys.exit("runner returned %d answers for %d values" % (len(res), len(values)))
            return [r == b"1" for r in res]
        out = []
        for v in values:
            p = subprocess.run(self.cmd + [op], input=v, stdout=subprocess.DEVNULL)
            if p.returncode not in (0, 1):
                sys.exit("runner failed (exit %d) on %r" % (p.returncode, v[:80]))
            out.append(p.returncode == 0)
        return out


def read_lines(path, comments):
    vals = []
    with open(path, "rb") as f:
        for line in f:
            line = line.rstrip(b"\r\n")
            if not line or (comments and line.startswith(b"# ")):
                continue
            vals.append(line)
    return vals


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def show_misses(title, items, limit):
    if items and limit:
        print("    %s (%d):" % (title, len(items)))
        for it in items[:limit]:
            print("      " + it.decode("utf-8", "backslashreplace")[:150])


def bench_attacks(runner, kind, args):
    print("%s detection (%s)" % ("SQLi" if kind == "sqli" else "XSS", OPS[kind]))
    total_hit = total = 0
    classes = [("CRS %s tests" % RULES[kind], crs_tests(kind, args.crs), True)]
    if args.crs_all:
        classes.append(("CRS other 94%s tests (info)" % RULES[kind][2],
                        crs_tests(kind, args.crs, only_rule=False), False))
    for label, tests, counted in classes:
        flat = [v for _, vals in tests for v in vals]
        res = iter(runner.run(kind, flat))
        hits, missed = 0, []
        for name, vals in tests:
            r = [next(res) for _ in vals]
            if any(r):
                hits += 1
            else:
                missed.append(name.encode() + b": " + b" | ".join(vals)[:140])
        print("  %-34s %5d / %-5d %6.1f%%" % (label, hits, len(tests), pct(hits, len(tests))))
        show_misses("missed", missed, args.verbose)
        if counted:
            total_hit += hits
            total += len(tests)
    vals = read_lines(os.path.join(HERE, kind + "-variants.txt"), True)
    tv = [transform(kind, v) for v in vals]
    res = runner.run(kind, tv)
    hits = sum(res)
    print("  %-34s %5d / %-5d %6.1f%%" % (kind + "-variants.txt", hits, len(vals), pct(hits, len(vals))))
    show_misses("missed", [v for v, r in zip(vals, res) if not r], args.verbose)
    total_hit += hits
    total += len(vals)
    print("  %-34s %5d / %-5d %6.1f%%   (target >= 99%%)" % ("all", total_hit, total, pct(total_hit, total)))
    return pct(total_hit, total)


def bench_benign(runner, kind, args):
    print("%s false positives over tests/detect/benign" % ("SQLi" if kind == "sqli" else "XSS"))
    fp_all = n_all = 0
    for path in sorted(glob.glob(os.path.join(HERE, "benign", "*.txt"))):
        vals = read_lines(path, False)
        res = runner.run(kind, [transform(kind, v) for v in vals])
        fp = [v for v, r in zip(vals, res) if r]
        print("  %-34s %5d / %-5d %6.2f%%" % (os.path.basename(path), len(fp), len(vals), pct(len(fp), len(vals))))
        show_misses("false positives", fp, args.verbose)
        fp_all += len(fp)
        n_all += len(vals)
    print("  %-34s %5d / %-5d %6.2f%%   (target <= 0.1%%)" % ("all", fp_all, n_all, pct(fp_all, n_all)))
    return n_all


def kilobyte_value(patterns):
    lines = []
    for pat in patterns:
        for path in sorted(glob.glob(os.path.join(HERE, "benign", pat))):
            lines += read_lines(path, False)
    return b" ".join(lines)[:1024]


SPEED_VALUES = [("prose", ["prose_en.txt", "prose_intl.txt"]),
                ("markup and code", ["markdown.txt", "code.txt"])]


def bench_speed(runner, kind, count):
    """MB/s on 1 KB benign values: the runner's --repeat mode times the
    operator alone; without it, batch mode gives a lower bound (line I/O
    and escape parsing included, a batch of 1-byte values subtracted)."""
    for label, pats in SPEED_VALUES:
        value = kilobyte_value(pats)
        cmd = runner.cmd + ["--repeat", str(count * 10), OPS[kind]]
        p = subprocess.run(cmd, input=value, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            secs = float(p.stdout.split()[0]) if p.returncode in (0, 1) else None
        except (ValueError, IndexError):
            secs = None
        if secs:
            print("  throughput, 1 KB of benign %-16s %7.0f MB/s (operator only, %d runs)"
                  % (label + ":", len(value) * count * 10 / secs / 1e6, count * 10))
            continue
        if not runner.batch:
            print("  throughput: the runner has neither --repeat nor --batch")
            return
        best = None
        for _ in range(3):
            t0 = time.perf_counter()
            runner.run(kind, [value] * count)
            t1 = time.perf_counter()
            runner.run(kind, [b"x"] * count)
            t2 = time.perf_counter()
            op_time = (t1 - t0) - (t2 - t1)
            best = op_time if best is None or op_time < best else best
        print("  throughput, 1 KB of benign %-16s >= %5.0f MB/s (batch mode, I/O included)"
              % (label + ":", len(value) * count / max(best, 1e-9) / 1e6))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runner", default="bulwark op", help='command; the operator name is appended (default: "bulwark op")')
    ap.add_argument("--batch", action="store_true", help="the runner supports --batch")
    ap.add_argument("--crs", default=CRS_DEFAULT, help="CRS data root (default: ../shared/crs)")
    ap.add_argument("--crs-all", action="store_true", help="also report the other 941/942 tests (information)")
    ap.add_argument("--only", choices=["sqli", "xss"], help="one operator only")
    ap.add_argument("-v", "--verbose", type=int, nargs="?", const=50, default=0,
                    help="list up to N misses and false positives")
    ap.add_argument("--speed-count", type=int, default=20000)
    args = ap.parse_args()
    runner = Runner(args.runner, args.batch)
    for kind in (["sqli", "xss"] if not args.only else [args.only]):
        bench_attacks(runner, kind, args)
        bench_benign(runner, kind, args)
        bench_speed(runner, kind, args.speed_count)
        print()


if __name__ == "__main__":
    main()
