#!/usr/bin/python3
"""What mod_http2 changes for the WAF, case by case, over h2 (TLS) or h2c.

Apache (the harness: reverse proxy to tests/backend/echo_digest.py) with
tests/fronts/cases.conf and mod_http2, on a TLS front (h2 by ALPN) or a
plain one (h2c by prior knowledge; curl's `--http2` Upgrade too). Each case
checks statuses, what reached the backend (SHA-256 and seen-counts of the
echo backend) and what the engine logged (rule 150001: REQUEST_PROTOCOL and
REQUEST_LINE; 150002: REQUEST_HEADERS; 150003: ARGS_POST), and writes what
the engine showed into an observations file (JSON), so that tests/fronts/run
can put Bulwark's beside mod_security2's.

    cases.py --engine bulwark|modsec2 --front tls|plain [--module SO]
             [--sanitize] [--observations FILE] [-v]

Closing line `fronts-cases: N passed, M failed`; exit 1 on a failure, 2 when
the run could not be done.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import bwharness as hz  # noqa: E402
import h2client  # noqa: E402

LIMIT = 65536                      # SecRequestBodyLimit in cases.conf
FORM = ("content-type", "application/x-www-form-urlencoded")
UID_HEADER = "X-Bw-Unique-Id"
# The response names the request's UNIQUE_ID, so that log lines and audit
# records are found by request, whatever the order they were written in.
EXTRA_CONF = 'Header always set %s "%%{UNIQUE_ID}e"\n' % UID_HEADER


class Run:
    """One Apache + echo backend; the cases share it."""

    def __init__(self, a, work):
        self.a = a
        self.work = work
        self.passed, self.failed = [], []
        self.obs = {}

    def check(self, name, ok, detail=""):
        (self.passed if ok else self.failed).append(name)
        print("  %s  %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail and (not ok or self.a.verbose) else ""),
              flush=True)
        return ok

    def h2(self):
        return h2client.H2Conn(self.ap.port, tls=self.ap.client_tls())

    def seen(self, path):
        """How often the backend got `path` (the echo backend counts)."""
        st, body = h2client.raw_h1(self.be_port, b"GET /__seen%s HTTP/1.1\r\nHost: localhost\r\n"
                                   b"Connection: close\r\n\r\n" % path.encode())
        m = re.search(rb"seen (\d+) times", body)
        return int(m.group(1)) if m else -1

    def log_for(self, uid):
        """Messages the engine logged for one request: [(id, msg)]."""
        out = []
        with open(self.ap.error_log, errors="replace") as f:
            for line in f:
                if '[unique_id "%s"]' % uid not in line:
                    continue
                rid = re.search(r'\[id "(\d+)"\]', line)
                msg = re.search(r'\[msg "((?:[^"\\]|\\.)*)"\]', line)
                out.append((int(rid.group(1)) if rid else 0, msg.group(1) if msg else ""))
        return out

    def audit_parts(self, uid):
        """{part letter: text} of the audit record of one request."""
        path = os.path.join(self.run_dir, "modsec", "audit.log")
        with open(path, errors="replace") as f:
            text = f.read()
        for rec in re.split(r"(?m)^--([0-9a-f]+)-A--\n", text)[2::2]:
            if uid not in rec.split("\n", 1)[0]:
                continue
            parts = {}
            for m in re.finditer(r"(?ms)^--[0-9a-f]+-([A-Z])--\n(.*?)(?=^--[0-9a-f]+-[A-Z]--\n|\Z)", rec):
                parts[m.group(1)] = m.group(2)
            return parts
        return {}


def sha(b):
    return hashlib.sha256(b).hexdigest()


def body_ok(resp, sent):
    """The echo backend answered with the digest of exactly what we sent."""
    return resp.status == 200 and resp.header("x-body-sha256") == sha(sent)


# ---------------------------------------------------------------- the cases
def case_protocol(run):
    """REQUEST_PROTOCOL, REQUEST_LINE, REQUEST_HEADERS and the audit log of an h2 request."""
    c = run.h2()
    try:
        sid = c.request("GET", "/look/proto?q=1", headers=[("user-agent", "bulwark-fronts"),
                                                           ("x-demo", "Mixed Case Value"),
                                                           ("accept", "*/*")])
        r = c.wait([sid])[sid]
    finally:
        c.close()
    run.check("protocol: GET answered 200", r.status == 200, "status %s %s" % (r.status, r.error))
    uid = r.header(UID_HEADER) or ""
    time.sleep(0.3)   # the audit record is written after the response
    msgs = run.log_for(uid)
    proto = [m for i, m in msgs if i == 150001]
    headers = sorted(m for i, m in msgs if i == 150002)
    run.check("protocol: REQUEST_PROTOCOL is HTTP/2.0, REQUEST_LINE ends so",
              proto == ["protocol=HTTP/2.0 line=GET /look/proto?q=1 HTTP/2.0 method=GET uri=/look/proto?q=1"],
              repr(proto))
    run.check("protocol: REQUEST_HEADERS has Host (from :authority) and the headers sent, "
              "no pseudo-header", any(h.startswith("header REQUEST_HEADERS:Host=localhost") for h in headers)
              and any(h.lower() == "header request_headers:x-demo=mixed case value" for h in headers)
              and not any(":" in h.split("=")[0][len("header REQUEST_HEADERS:"):] for h in headers),
              repr(headers))
    parts = run.audit_parts(uid)
    b = parts.get("B", "")
    run.check("protocol: audit part B starts with the h2 request line",
              b.startswith("GET /look/proto?q=1 HTTP/2.0\n"), repr(b[:200]))
    run.obs["protocol"] = {"REQUEST_PROTOCOL/LINE": proto, "REQUEST_HEADERS": headers,
                           "RESPONSE_PROTOCOL": [m for i, m in msgs if i == 150006],
                           "audit B": b, "audit F first line": parts.get("F", "").split("\n")[0]}
    # The same over HTTP/1.1 and HTTP/1.0 on this front, for the comparison.
    for version in ("1.1", "1.0"):
        st, got = h2client.raw_h1(run.ap.port, b"GET /look/proto?q=1 HTTP/%s\r\nHost: localhost\r\n"
                                  b"User-Agent: bulwark-fronts\r\nX-Demo: Mixed Case Value\r\n"
                                  b"Accept: */*\r\nConnection: close\r\n\r\n" % version.encode(),
                                  tls=run.ap.client_tls())
        m = re.search(rb"(?im)^%s: (\S+)" % UID_HEADER.encode(), got)
        uid = m.group(1).decode() if m else ""
        time.sleep(0.2)
        msgs = run.log_for(uid)
        parts = run.audit_parts(uid)
        run.obs["HTTP/%s" % version] = {
            "status": st, "REQUEST_PROTOCOL/LINE": [m for i, m in msgs if i == 150001],
            "RESPONSE_PROTOCOL": [m for i, m in msgs if i == 150006],
            "audit B first line": parts.get("B", "").split("\n")[0],
            "audit F first line": parts.get("F", "").split("\n")[0]}


def case_body_no_length(run):
    """A body in DATA frames with no content-length: parsed, inspected, replayed."""
    benign = b"name=alice&note=" + b"x" * 20000
    attack = b"name=bob&attack=1"
    c = run.h2()
    try:
        s1 = c.request("POST", "/nolen/benign", headers=[FORM], body=benign, content_length=False)
        s2 = c.request("POST", "/nolen/attack", headers=[FORM], body=attack, content_length=False)
        s3 = c.request("PUT", "/nolen/raw", headers=[("content-type", "application/octet-stream")],
                       body=b"evil-payload here", content_length=False)
        rs = c.wait()
    finally:
        c.close()
    run.check("no content-length: benign form reaches the backend byte for byte",
              body_ok(rs[s1], benign), "status %s" % rs[s1].status)
    msgs = run.log_for(rs[s1].header(UID_HEADER) or "")
    run.check("no content-length: the form body was parsed (ARGS_POST:name)",
              any(m == "post ARGS_POST:name=alice" for i, m in msgs if i == 150003), repr(msgs[:4]))
    run.check("no content-length: an attack argument in the body is denied",
              rs[s2].status == 403, "status %s" % rs[s2].status)
    run.check("no content-length: an attack in a raw body is denied", rs[s3].status == 403,
              "status %s" % rs[s3].status)
    run.check("no content-length: the denied bodies never reached the backend",
              run.seen("/nolen/attack") == 0 and run.seen("/nolen/raw") == 0)
    run.obs["no content-length"] = {"statuses": [rs[s].status for s in (s1, s2, s3)]}


def case_trailers(run):
    """Request trailers after the body: the body is still inspected and replayed."""
    benign = b"name=carol&city=lyon"
    attack = b"attack=1"
    trailers = [("x-checksum", "abc123"), ("x-attack", "1")]
    c = run.h2()
    try:
        s1 = c.request("POST", "/trailers/benign", headers=[FORM], body=benign, trailers=trailers,
                       content_length=False)
        s2 = c.request("POST", "/trailers/len", headers=[FORM], body=benign, trailers=trailers)
        s3 = c.request("POST", "/trailers/attack", headers=[FORM], body=attack, trailers=trailers,
                       content_length=False)
        rs = c.wait()
    finally:
        c.close()
    run.check("trailers: benign body without length reaches the backend byte for byte",
              body_ok(rs[s1], benign), "status %s %s" % (rs[s1].status, rs[s1].error))
    run.check("trailers: benign body with length reaches the backend byte for byte",
              body_ok(rs[s2], benign), "status %s %s" % (rs[s2].status, rs[s2].error))
    run.check("trailers: attack body with trailers is denied", rs[s3].status == 403,
              "status %s" % rs[s3].status)
    run.check("trailers: the denied body never reached the backend", run.seen("/trailers/attack") == 0)
    # A trailer is not a header: rule 150012 (REQUEST_HEADERS:X-Attack) must not see it.
    msgs = run.log_for(rs[s1].header(UID_HEADER) or "")
    run.obs["trailers"] = {"statuses": [rs[s].status for s in (s1, s2, s3)],
                           "trailer seen as a header": any(i == 150012 for i, _ in msgs)}


def case_body_limit(run):
    """SecRequestBodyLimit over h2, with and without content-length."""
    at = b"a=" + b"y" * (LIMIT - 2)
    over = at + b"y"
    c = run.h2()
    try:
        s1 = c.request("POST", "/limit/at", headers=[FORM], body=at, content_length=False)
        s2 = c.request("POST", "/limit/over-nolen", headers=[FORM], body=over, content_length=False)
        s3 = c.request("POST", "/limit/over-len", headers=[FORM], body=over)
        s4 = c.request("POST", "/limit/at-len", headers=[FORM], body=at)
        rs = c.wait()
        after = c.request("GET", "/limit/after") if c.usable() else None
        ra = c.wait([after])[after] if after else None
    finally:
        c.close()
    run.check("body limit: a body of exactly the limit, no content-length, passes",
              body_ok(rs[s1], at), "status %s" % rs[s1].status)
    run.check("body limit: a body of exactly the limit, with content-length, passes",
              body_ok(rs[s4], at), "status %s" % rs[s4].status)
    run.check("body limit: one byte over, no content-length: 413", rs[s2].status == 413,
              "status %s %s" % (rs[s2].status, rs[s2].error))
    run.check("body limit: one byte over, with content-length: 413", rs[s3].status == 413,
              "status %s %s" % (rs[s3].status, rs[s3].error))
    run.check("body limit: bodies over the limit never reached the backend",
              run.seen("/limit/over-nolen") == 0 and run.seen("/limit/over-len") == 0)
    run.check("body limit: the connection serves the next stream", ra is not None and ra.status == 200,
              "status %s" % (ra.status if ra else "no stream"))
    run.obs["body limit"] = {"statuses": [rs[s].status for s in (s1, s2, s3, s4)]}
    # The same limit over HTTP/1.1 with a chunked body, for the comparison.
    raw = (b"POST /limit/at-chunked HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
           b"application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n"
           b"Connection: close\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(at), at))
    st, _ = h2client.raw_h1(run.ap.port, raw, tls=run.ap.client_tls())
    run.obs["body limit"]["HTTP/1.1 chunked, exactly the limit"] = st


def case_multiplex(run):
    """Blocked streams among others on one connection: the others go on."""
    c = run.h2()
    sent, sids = {}, {}
    try:
        for i in range(24):
            kind = ("query", "body", "header")[i // 8] if i % 8 == 3 else "benign"
            path = "/mux/%d-%s" % (i, kind)
            if kind == "query":
                sid = c.request("GET", path + "?attack=1")
            elif kind == "body":
                sid = c.request("POST", path, headers=[FORM], body=b"attack=1&pad=" + b"p" * 30000,
                                content_length=i % 2 == 0)
            elif kind == "header":
                sid = c.request("GET", path, headers=[("x-attack", "1")])
            else:
                body = (b"i=%d&pad=" % i) + b"q" * (1000 * i)
                sid = c.request("POST", path, headers=[FORM], body=body, content_length=i % 2 == 0)
                sent[sid] = body
            sids[sid] = (kind, path)
        rs = c.wait()
        usable = c.usable()
        last = c.request("GET", "/mux/after") if usable else None
        rl = c.wait([last])[last] if last else None
    finally:
        c.close()
    bad = ["%s %s: %s %s" % (k, p, rs[s].status, rs[s].error or "")
           for s, (k, p) in sids.items()
           if (k == "benign" and not body_ok(rs[s], sent[s])) or (k != "benign" and rs[s].status != 403)]
    run.check("multiplex: 3 attacks denied, 21 benign streams answered on the same connection",
              not bad, "; ".join(bad[:5]))
    run.check("multiplex: no GOAWAY, and a later stream on that connection is served",
              usable and rl is not None and rl.status == 200)
    run.check("multiplex: no denied stream reached the backend",
              all(run.seen(p) == 0 for k, p in sids.values() if k != "benign"))


def case_curl(run):
    """curl as a browser-like client: --http2 (ALPN, or Upgrade: h2c) and
    --http2-prior-knowledge."""
    base = "%s://localhost:%d" % (run.ap.scheme, run.ap.port)
    variants = [("--http2", [])]
    if run.ap.scheme == "http":
        variants.append(("--http2-prior-knowledge", []))
    for flag, extra in variants:
        for path, want in (("/curl/ok?x=1", 200), ("/curl/no?attack=1", 403)):
            cmd = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", flag,
                   "--max-time", "20"] + extra
            if run.ap.ca_file:
                cmd += ["--cacert", run.ap.ca_file]
            p = subprocess.run(cmd + [base + path], stdout=subprocess.PIPE, text=True, timeout=30)
            got = p.stdout.split()
            # With Upgrade: h2c (curl --http2 on http://) the request is read
            # as HTTP/1.1 and a denial is answered before mod_http2 switches.
            versions = ("2", "1.1") if flag == "--http2" and run.ap.scheme == "http" else ("2",)
            run.check("curl %s %s: %d" % (flag, path, want),
                      len(got) == 2 and got[0] in versions and got[1] == str(want),
                      " ".join(got) or "curl exit %d" % p.returncode)
            run.obs["curl %s %s" % (flag, path)] = got
    # An Upgrade: h2c request is read as HTTP/1.1 and answered over h2: what the
    # engine saw is recorded, for the comparison with mod_security2.
    if run.ap.scheme == "http":
        p = subprocess.run(["curl", "-s", "-D", "-", "-o", "/dev/null", "--http2", "--max-time", "20",
                            base + "/look/upgrade"], stdout=subprocess.PIPE, text=True, timeout=30)
        m = re.search(r"(?im)^%s: (\S+)" % UID_HEADER, p.stdout)
        msgs = run.log_for(m.group(1)) if m else []
        run.obs["h2c upgrade"] = {"REQUEST_PROTOCOL/LINE": [x for i, x in msgs if i == 150001]}


CASES = [case_protocol, case_body_no_length, case_trailers, case_body_limit, case_multiplex, case_curl]


def main(argv=None):
    hz.cleanup_on_signals()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", choices=("bulwark", "modsec2"), default="bulwark")
    p.add_argument("--front", choices=hz.FRONTS, default="tls")
    p.add_argument("--module", help="mod_bulwark.so (default: BW_MODULE or build/out/.libs)")
    p.add_argument("--sanitize", action="store_true", default=None)
    p.add_argument("--observations", help="write what the engine showed here (JSON)")
    p.add_argument("--keep", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    work = tempfile.mkdtemp(prefix="bw-fronts-cases-")
    run = Run(a, work)
    label = "fronts-cases"
    t0 = time.monotonic()
    try:
        run.run_dir = work
        hz.engine_dirs(work)
        with open(os.path.join(HERE, "cases.conf")) as f:
            text = f.read().replace("@RUN@", work)
        rules = os.path.join(work, "cases.conf")
        with open(rules, "w") as f:
            f.write(text)
        with hz.Backend.start("echo", log_dir=work) as be:
            run.be_port = be.port
            cfg = hz.ApacheConfig(a.engine, be.port, rule_files=[rules], module_so=a.module,
                                  sanitize=a.sanitize, run_dir=os.path.join(work, "apache"),
                                  extra_conf=EXTRA_CONF, front=a.front, h2=True, threads=16)
            run.ap = hz.Apache(cfg)
            try:
                run.ap.start(timeout=60)
                print("%s: engine %s, front %s (%s), port %d"
                      % (label, a.engine, a.front, "h2" if a.front == "tls" else "h2c",
                         run.ap.port), flush=True)
                for case in CASES:
                    try:
                        case(run)
                    except (OSError, h2client.H2Error, ValueError) as e:
                        run.check(case.__name__[5:] + ": ran", False, "%s: %s" % (type(e).__name__, e))
            finally:
                run.ap.stop()
            crashes = [l for l in open(run.ap.error_log, errors="replace") if "exit signal" in l]
            run.check("no child died", not crashes,
                      "\n".join([crashes[0].strip()] + run.ap.crash_backtraces()) if crashes else "")
            if a.sanitize:
                reps = run.ap.sanitizer_reports()
                run.check("no sanitizer report", not reps, "\n".join(reps)[:3000])
    except hz.HarnessError as e:
        print("%s: run broke: %s" % (label, e))
        return 2
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("%s: kept %s" % (label, work))
    if a.observations:
        with open(a.observations, "w") as f:
            json.dump(run.obs, f, indent=1, sort_keys=True)
    print("%s: %.0fs" % (label, time.monotonic() - t0))
    print("%s: %d passed, %d failed" % (label, len(run.passed), len(run.failed)))
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
