#!/usr/bin/env python3
"""Detection / false-positive / throughput benchmark for @detectSQLi and @detectXSS.

Everything the operators see goes through the engine itself: the `bulwark`
CLI applies each rule's transformation chain (`bulwark tfn NAME`) and runs
the operator (`bulwark op --batch '@NAME'`). The chains and the variables a
rule inspects are read at run time from the CRS rule files (nothing from
CRS is stored in this repository).

Classes and their targets (a class below its target is a "failure"):
  attacks, detection >= 99%
    CRS <rule> tests   the CRS regression tests of rules 942100 / 942101
                       (SQLi) and 941100 / 941101 (XSS) that expect the rule
                       to fire, CRS v4 tests against the same v4 rules and,
                       where they are found, 3.3.4 tests (go-ftw v2 schema)
                       against Debian's 3.3.4 rules (tools/crs/crsdata.py).
                       A test's request is taken apart into the rule's
                       variables (ARGS, ARGS_NAMES, cookies, the headers it
                       names, XML:/* and XML://@*, REQUEST_FILENAME,
                       REQUEST_BASENAME); it counts as detected when any of
                       its values matches, which is how the rule fires.
    <kind>-variants.txt  attack variants written for Bulwark, one ARGS value
                       per line ("# " lines are comments), rule 942100's /
                       941100's chain (CRS v4 rules).
  CRS no-match tests, the tests that expect the rule NOT to fire: 100% pass.
  benign inputs, false positives <= 0.1%: every line of benign/*.txt, as an
    ARGS value with the same chain; the rate per file is printed for
    information, the target applies to the whole corpus.
Throughput (information): MB/s of the operator alone on 1 KB benign values
(`bulwark op --repeat N`).
Closing line: `detect: N passed, M failed` (then the failing classes); exit
status 1 when a class failed, 2 when the run broke.

The bulwark binary: --bulwark PATH, else `bulwark` on PATH, else
build/out/bulwark in the repository. `bulwark tfn` reads one value; to keep
spawns few, values are joined with a separator of control bytes that no
transformation here reads or writes, and split again. A value is sent alone
when it holds the separator or ends in what may be an unfinished escape
(\\ % &) or UTF-8 sequence, which a transformation could read on into the
separator, and the whole batch is
redone value by value if the pieces do not come back one for one.
--verify-tfn checks that claim: it also runs every value alone and
reports any difference. If the CLI gains `bulwark tfn --batch NAME` (the
line protocol of `op --batch` in, the same escaping out), it is used.
--runner CMD runs another operator program with the protocol of
`bulwark op` (single value on stdin, exit 0 = match; --batch as above;
--repeat N prints seconds).
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import urllib.parse
import xml.etree.ElementTree as ET

try:
    import yaml
except ImportError:  # pragma: no cover
    sys.exit("bench.py needs PyYAML (apt-get install python3-yaml)")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(REPO, "tools", "crs"))
import crsdata  # noqa: E402

KINDS = {
    "sqli": dict(title="SQLi", op="@detectSQLi", args_rule="942100", rules=["942100", "942101"],
                 dir="REQUEST-942-APPLICATION-ATTACK-SQLI"),
    "xss": dict(title="XSS", op="@detectXSS", args_rule="941100", rules=["941100", "941101"],
                dir="REQUEST-941-APPLICATION-ATTACK-XSS"),
}
DETECT_TARGET = 99.0        # % of attacks detected, per class
FP_TARGET = 0.1             # % of benign inputs matched, whole corpus


class Broken(Exception):
    """The run cannot go on (exit 2)."""

# ---------------------------------------------------------------------------
# Rules: the variables and the transformation chain of one rule id.


def read_rule(rules_dir, rule_id):
    """(targets, chain) of the SecRule with id rule_id in rules_dir/*.conf."""
    idre = re.compile(r"[\"',]id:%s[,\"']" % rule_id)
    for path in sorted(glob.glob(os.path.join(rules_dir, "*.conf"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = re.sub(r"\\\n", " ", f.read())
        for line in text.split("\n"):
            line = line.strip()
            if not line.startswith("SecRule ") or not idre.search(line):
                continue
            parts = shlex.split(line, posix=True)
            chain = []
            for name in re.findall(r"\bt:([A-Za-z0-9]+)", parts[3] if len(parts) > 3 else ""):
                chain = [] if name.lower() == "none" else chain + [name]
            return parts[1].split("|"), chain
    raise Broken("rule %s not found in %s" % (rule_id, rules_dir))

# ---------------------------------------------------------------------------
# CRS tests -> the values the rule inspects.


def url_decode(s):
    """ModSecurity's argument decoding: %XX and '+'; bad escapes stay."""
    return urllib.parse.unquote_to_bytes(s.replace(b"+", b" "))


def split_args(qs):
    pairs = []
    for part in qs.split(b"&"):
        if part:
            name, _, value = part.partition(b"=")
            pairs.append((url_decode(name), url_decode(value)))
    return pairs


def json_args(data):
    """JSON body as ARGS, the way the JSON body processor flattens it."""
    try:
        doc = json.loads(data)
    except ValueError:
        return []
    pairs = []

    def walk(prefix, v):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(prefix + "." + k, x)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk("%s.array_%d" % (prefix, i), x)
        else:
            text = "" if v is None else (json.dumps(v) if isinstance(v, bool) else str(v))
            pairs.append((prefix.encode(), text.encode("utf-8", "surrogateescape")))
    walk("json", doc)
    return pairs


def xml_values(data, target):
    """XML:/* is the text content of the root element, XML://@* every
    attribute value."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return []
    if target == "XML://@*":
        return [v.encode("utf-8") for el in root.iter() for v in el.attrib.values()]
    return ["".join(root.itertext()).encode("utf-8")]


def request(inp):
    """The parts of one go-ftw request input that rules read."""
    hdrs = {}
    for k, v in (inp.get("headers") or {}).items():
        hdrs[str(k).lower()] = str(v)
    for h in inp.get("ordered_headers") or []:
        hdrs[str(h.get("name", "")).lower()] = str(h.get("value", ""))
    uri = str(inp.get("uri", "/")).encode("utf-8", "surrogateescape")
    path, _, query = uri.partition(b"?")
    req = dict(headers=hdrs, args=split_args(query), xml=None, cookies=[])
    data = inp.get("data")
    if data is not None:
        data = (data if isinstance(data, str) else str(data)).encode("utf-8", "surrogateescape")
        ctype = hdrs.get("content-type", "application/x-www-form-urlencoded").lower()
        if "xml" in ctype:
            req["xml"] = data
        elif "json" in ctype:
            req["args"] += json_args(data)
        elif "multipart" not in ctype:
            req["args"] += split_args(data)
    for c in hdrs.get("cookie", "").split(";"):
        name, _, value = c.strip().partition("=")
        if name:
            req["cookies"].append((name.encode(), value.encode()))
    req["filename"] = urllib.parse.unquote_to_bytes(path)
    req["basename"] = req["filename"].rsplit(b"/", 1)[-1]
    return req


def target_values(targets, req):
    """Values of the variables a rule names ("!REQUEST_COOKIES:/re/" drops
    the cookies whose name matches)."""
    skip = [re.compile(t.split(":", 1)[1].strip("/").encode()) for t in targets
            if t.startswith("!REQUEST_COOKIES:/")]
    cookies = [(n, v) for n, v in req["cookies"] if not any(r.search(n) for r in skip)]
    vals = []
    for t in targets:
        if t.startswith("!"):
            continue
        name, _, sel = t.partition(":")
        if t == "ARGS":
            vals += [v for _, v in req["args"]]
        elif t == "ARGS_NAMES":
            vals += [n for n, _ in req["args"]]
        elif t == "REQUEST_COOKIES":
            vals += [v for _, v in cookies]
        elif t == "REQUEST_COOKIES_NAMES":
            vals += [n for n, _ in cookies]
        elif name == "REQUEST_HEADERS" and sel.lower() in req["headers"]:
            vals.append(req["headers"][sel.lower()].encode("utf-8", "surrogateescape"))
        elif name == "XML" and req["xml"] is not None:
            vals += xml_values(req["xml"], t)
        elif t == "REQUEST_FILENAME":
            vals.append(req["filename"])
        elif t == "REQUEST_BASENAME":
            vals.append(req["basename"])
    return vals


def log_ids(out, key, regex_key, rule):
    log = (out or {}).get("log") or {}
    return rule in [str(i) for i in (log.get(key) or [])] \
        or ('id "%s"' % rule) in str(log.get(regex_key, ""))


def crs_tests(crs, kind, rules, others=False):
    """[(label, rule_id, chain, [values], expect_match)] from the CRS test
    files of the given rules (others: of every other rule, for --crs-all):
    the v4 tests against the v4 rules, and 3.3.4's tests against Debian's
    3.3.4 rules when both are there (crsdata.CrsData)."""
    suites = [("v" + crs.v4_version, crs.v4_tests, crs.v4_rules)]
    if crs.v3_tests:
        suites.append(("v" + crsdata.V3, crs.v3_tests,
                       crs.v3_rules if os.path.isdir(crs.v3_rules) else crs.v4_rules))
    tests = []
    for ver, root, rules_dir in suites:
        d = os.path.join(root, KINDS[kind]["dir"])
        files = [f for f in sorted(glob.glob(os.path.join(d, "*.yaml")))
                 if os.path.basename(f)[:6] not in rules] if others \
            else [os.path.join(d, r + ".yaml") for r in rules]
        for path in files:
            if not os.path.exists(path):
                continue
            doc = yaml.safe_load(open(path, encoding="utf-8"))
            rule = str(doc.get("rule_id") or os.path.basename(path)[:6])
            try:
                targets, chain = read_rule(rules_dir, rule)
            except (Broken, ValueError):
                continue            # a rule this version lacks, or one shlex cannot split
            for t in doc.get("tests", []):
                if t.get("enabled") is False:
                    continue
                for st in t.get("stages", []):
                    st = st.get("stage", st)
                    out = st.get("output")
                    want = True if log_ids(out, "expect_ids", "match_regex", rule) else \
                        False if log_ids(out, "no_expect_ids", "no_match_regex", rule) else None
                    if want is None:
                        continue
                    vals = target_values(targets, request(st.get("input") or {}))
                    tests.append(("%s %s-%s" % (ver, rule, t.get("test_id")), rule, tuple(chain),
                                  vals, want))
    return tests

# ---------------------------------------------------------------------------
# The engine: transformations and operators through the bulwark CLI.

SEP = b"\x01\x02\x03\x02\x01"       # no letters, digits, blanks or escapes
# A value that ends in what may be an unfinished escape (backslash, %, &)
# or UTF-8 sequence: a transformation could read on into the separator.
RISKY_END = re.compile(rb"(\\[0-9A-Za-z]{0,7}\s?|[%&][#0-9A-Za-z;]{0,12}|[\x80-\xff])$")


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


def unescape_line(line):
    return re.sub(rb"\\(\\|x[0-9a-fA-F]{2})",
                  lambda m: b"\\" if m.group(1) == b"\\" else bytes([int(m.group(1)[1:], 16)]), line)


class Engine:
    def __init__(self, exe, runner, batch, verify):
        self.exe = exe
        self.runner = shlex.split(runner) if runner else [exe, "op"]
        self.batch = batch or not runner
        self.verify = verify
        self.cache = {}
        self.spawns = 0
        self.mismatches = []
        self.tfn_batch = self._probe_tfn_batch()

    def _run(self, cmd, data, ok=(0,)):
        self.spawns += 1
        p = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode not in ok:
            raise Broken("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                               p.stderr.decode(errors="replace").strip()[:200]))
        return p

    def _probe_tfn_batch(self):
        p = subprocess.run([self.exe, "tfn", "--batch", "urlDecodeUni"], input=b"a%41\n%5c\n",
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return p.returncode == 0 and p.stdout == b"aA\n\\\\\n"

    def _alone(self, name, values):
        return [self._run([self.exe, "tfn", name], v).stdout for v in values]

    def _joined(self, name, values):
        if self.tfn_batch:
            out = self._run([self.exe, "tfn", "--batch", name],
                            b"".join(map(escape_line, values))).stdout.split(b"\n")[:-1]
            if len(out) != len(values):
                raise Broken("tfn --batch %s: %d answers for %d values" % (name, len(out), len(values)))
            return [unescape_line(x) for x in out]
        res = [None] * len(values)
        idx = [i for i, v in enumerate(values) if SEP not in v and not RISKY_END.search(v[-16:])]
        if idx:
            parts = self._run([self.exe, "tfn", name], SEP.join(values[i] for i in idx)).stdout.split(SEP)
            if len(parts) == len(idx):
                for i, r in zip(idx, parts):
                    res[i] = r
        rest = [i for i, r in enumerate(res) if r is None]
        for i, r in zip(rest, self._alone(name, [values[i] for i in rest])):
            res[i] = r
        return res

    def transform(self, chain, values):
        """Each value through the chain (a tuple of t: names), cached."""
        todo = list(dict.fromkeys(v for v in values if (chain, v) not in self.cache))
        cur = todo
        for name in chain:
            if not cur:
                break
            nxt = self._joined(name, cur)
            if self.verify:
                for v, a, b in zip(cur, nxt, self._alone(name, cur)):
                    if a != b:
                        self.mismatches.append((name, v))
            cur = nxt
        for v, r in zip(todo, cur):
            self.cache[(chain, v)] = r
        return [self.cache[(chain, v)] for v in values]

    def match(self, op, values):
        if not values:
            return []
        if self.batch:
            res = self._run(self.runner + ["--batch", op], b"".join(map(escape_line, values))).stdout.split()
            if len(res) != len(values):
                raise Broken("runner returned %d answers for %d values" % (len(res), len(values)))
            return [r == b"1" for r in res]
        return [self._run(self.runner + [op], v, ok=(0, 1)).returncode == 0 for v in values]

    def seconds(self, op, value, count):
        p = self._run(self.runner + ["--repeat", str(count), op], value, ok=(0, 1))
        try:
            return float(p.stdout.split()[0])
        except (ValueError, IndexError):
            return None

# ---------------------------------------------------------------------------
# The benchmark.


class Tally:
    def __init__(self):
        self.passed, self.failed = 0, []

    def check(self, name, ok):
        if ok:
            self.passed += 1
        else:
            self.failed.append(name)
        return "" if ok else "   << below target"


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def read_lines(path, comments):
    with open(path, "rb") as f:
        lines = [line.rstrip(b"\r\n") for line in f]
    return [x for x in lines if x and not (comments and x.startswith(b"# "))]


def show(title, items, limit):
    if items and limit:
        print("    %s (%d):" % (title, len(items)))
        for it in items[:limit]:
            print("      " + it.decode("utf-8", "backslashreplace")[:150])


def run_tests(eng, kind, tests):
    """Verdict per test: did any of its values match?"""
    flat = [(t[2], v) for t in tests for v in t[3]]
    chains = {c for c, _ in flat}
    done = {}
    for c in chains:
        vals = [v for cc, v in flat if cc == c]
        for v, r in zip(vals, eng.transform(c, vals)):
            done[(c, v)] = r
    res = iter(eng.match(KINDS[kind]["op"], [done[(c, v)] for c, v in flat]))
    return [any([next(res) for _ in t[3]]) for t in tests]


def bench_attacks(eng, kind, args, tally):
    k = KINDS[kind]
    print("%s detection (%s)" % (k["title"], k["op"]))
    tests = crs_tests(args.crs, kind, k["rules"])
    verdicts = run_tests(eng, kind, tests)
    for rule in k["rules"]:
        pos = [(t, r) for t, r in zip(tests, verdicts) if t[1] == rule and t[4]]
        hits = sum(r for _, r in pos)
        print("  %-30s %5d / %-5d %6.1f%%%s" % ("CRS %s tests" % rule, hits, len(pos), pct(hits, len(pos)),
                                                 tally.check("%s CRS %s" % (kind, rule),
                                                             pct(hits, len(pos)) >= DETECT_TARGET)))
        show("missed", [t[0].encode() + b": " + b" | ".join(t[3])[:140] for t, r in pos if not r],
             args.verbose)
    neg = [(t, r) for t, r in zip(tests, verdicts) if not t[4]]
    ok = sum(not r for _, r in neg)
    print("  %-30s %5d / %-5d %6.1f%%%s" % ("CRS no-match tests (pass)", ok, len(neg), pct(ok, len(neg)),
                                             tally.check("%s CRS no-match" % kind, ok == len(neg))))
    show("matched although CRS expects no match", [t[0].encode() for t, r in neg if r], args.verbose)
    targets, chain = read_rule(args.crs.v4_rules, k["args_rule"])
    vals = read_lines(os.path.join(HERE, kind + "-variants.txt"), True)
    res = eng.match(k["op"], eng.transform(tuple(chain), vals))
    hits = sum(res)
    print("  %-30s %5d / %-5d %6.1f%%%s" % (kind + "-variants.txt", hits, len(vals), pct(hits, len(vals)),
                                             tally.check("%s variants" % kind,
                                                         pct(hits, len(vals)) >= DETECT_TARGET)))
    show("missed", [v for v, r in zip(vals, res) if not r], args.verbose)
    if args.crs_all:
        other = [t for t in crs_tests(args.crs, kind, k["rules"], others=True) if t[4]]
        hits = sum(run_tests(eng, kind, other))
        print("  %-30s %5d / %-5d %6.1f%%   (information)" % ("CRS other 94%s tests" % k["rules"][0][2],
                                                                hits, len(other), pct(hits, len(other))))
    return tuple(chain)


def bench_benign(eng, kind, chain, args, tally):
    k = KINDS[kind]
    print("%s false positives over tests/detect/benign" % k["title"])
    fp_all = n_all = 0
    for path in sorted(glob.glob(os.path.join(HERE, "benign", "*.txt"))):
        vals = read_lines(path, False)
        res = eng.match(k["op"], eng.transform(chain, vals))
        fp = [v for v, r in zip(vals, res) if r]
        print("  %-30s %5d / %-5d %6.2f%%" % (os.path.basename(path), len(fp), len(vals),
                                               pct(len(fp), len(vals))))
        show("false positives", fp, args.verbose)
        fp_all += len(fp)
        n_all += len(vals)
    print("  %-30s %5d / %-5d %6.2f%%%s" % ("all benign", fp_all, n_all, pct(fp_all, n_all),
                                             tally.check("%s false positives" % kind,
                                                         pct(fp_all, n_all) <= FP_TARGET)))


SPEED_VALUES = [("prose", ["prose_en.txt", "prose_intl.txt"]),
                ("markup and code", ["markdown.txt", "code.txt"])]


def bench_speed(eng, kind, chain, count):
    for label, names in SPEED_VALUES:
        lines = []
        for name in names:
            lines += read_lines(os.path.join(HERE, "benign", name), False)
        value = eng.transform(chain, [b" ".join(lines)[:1024]])[0]
        secs = eng.seconds(KINDS[kind]["op"], value, count)
        if secs:
            print("  throughput, 1 KB of benign %-16s %7.0f MB/s (operator only, %d runs)"
                  % (label + ":", len(value) * count / secs / 1e6, count))
        else:
            print("  throughput: the runner has no --repeat")


def find_bulwark(arg):
    for cand in [arg] if arg else [shutil.which("bulwark"), os.path.join(REPO, "build", "out", "bulwark")]:
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    raise Broken("--bulwark %s: not an executable" % arg if arg else
                 "no bulwark binary: give --bulwark PATH, put it on PATH or build build/out/bulwark")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bulwark", help="the bulwark CLI (default: PATH, then build/out/bulwark)")
    ap.add_argument("--runner", help="another operator program (protocol of `bulwark op`)")
    ap.add_argument("--batch", action="store_true", help="--runner supports --batch")
    ap.add_argument("--crs", help="CRS data root laid out like ../shared/crs "
                    "(default: what tools/crs/crsdata.py finds)")
    ap.add_argument("--crs-all", action="store_true", help="also report the other 941/942 tests (information)")
    ap.add_argument("--only", choices=sorted(KINDS), help="one operator only")
    ap.add_argument("--verify-tfn", action="store_true", help="also transform every value alone and compare")
    ap.add_argument("-v", "--verbose", type=int, nargs="?", const=50, default=0,
                    help="list up to N misses and false positives")
    ap.add_argument("--speed-count", type=int, default=200000, help="runs of the 1 KB value")
    args = ap.parse_args()
    tally = Tally()
    try:
        if args.crs:
            os.environ[crsdata.ENV_DIR] = args.crs
            for k in [k for k in os.environ if k.startswith("BW_CRS_") and k != "BW_CRS_RULES"]:
                del os.environ[k]
        try:
            args.crs = crsdata.locate()
        except crsdata.NotFound as e:
            raise Broken(str(e))
        print("CRS v%s from %s%s" % (args.crs.v4_version, args.crs.source,
                                     "" if args.crs.v3_tests else "; no CRS 3.3.4 tests: "
                                     + args.crs.v3_missing))
        eng = Engine(find_bulwark(args.bulwark), args.runner, args.batch, args.verify_tfn)
        for kind in ([args.only] if args.only else sorted(KINDS)):
            chain = bench_attacks(eng, kind, args, tally)
            bench_benign(eng, kind, chain, args, tally)
            bench_speed(eng, kind, chain, args.speed_count)
            print()
    except (Broken, OSError, subprocess.SubprocessError) as e:
        print("detect: broken run: %s" % e)
        return 2
    if args.verify_tfn:
        print("transformations: %d values differ between joined and alone runs" % len(eng.mismatches))
        for name, v in eng.mismatches[:10]:
            print("  %s: %r" % (name, v[:80]))
    print("(%d bulwark processes%s)" % (eng.spawns, ", tfn --batch" if eng.tfn_batch else ""))
    print("detect: %d passed, %d failed" % (tally.passed, len(tally.failed)))
    for name in tally.failed:
        print("  failed: %s" % name)
    return 1 if tally.failed or (args.verify_tfn and eng.mismatches) else 0


if __name__ == "__main__":
    sys.exit(main())
