#!/usr/bin/python3
"""Graceful reload under load: `apache2 -k graceful` every second while
clients send benign and attack traffic over HTTP/1.1 and HTTP/2.

Apache (the harness, TLS front, mod_http2) with Bulwark and CRS 3.3.4 at
paranoia level 1 in blocking mode (Debian's modsecurity-crs, the setup of
tests/reach/run: the configuration an operator runs) in front of the echo
backend, audit log on for relevant statuses. While the reloads run:

  - h1 clients: a new TLS connection per request (benign GET and form POST,
    and SQL injection / XSS in the query and in a body);
  - h2 clients: one connection, many streams at once (the same mix). After a
    GOAWAY a client opens a new connection and sends again only the streams
    the server did not process (above the GOAWAY's last stream id, or refused
    with REFUSED_STREAM), as RFC 9113 section 6.8 allows, and those of a
    connection closed with no GOAWAY before any stream on it was answered
    when the backend never got them;
  - h2load (nghttp2-client) as extra h2 load when it is installed.

Checked: every benign request answered 200 with its body intact at the
backend, every attack answered 403 and never seen by the backend (no missed
block), an audit record for every attack, each with its parts from A to Z
(the record is complete), no child crash; the resident memory of Apache's
parent (which re-reads the configuration at each reload) measured after each
reload, growth per reload over the second half of the run under
--max-growth-kb (default 8).

    reload.py [--seconds 120] [--interval 1] [--module SO] [--sanitize]
              [--max-growth-kb 8] [--reloads N] [-v]

--reloads N runs N reloads back to back (no sleep between them, traffic
still on) for the memory measure the README describes (1,000 reloads).
There httpd itself drops some requests it accepted without any answer
(Apache alone too: --engine none --reloads 300 loses dozens): those are
listed on a NOTE line; a wrong answer (a missed block, a bad body) still
fails.
Closing line `fronts-reload: N passed, M failed`.
"""

import argparse
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import bwharness as hz  # noqa: E402
import h2client  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
CRS_RULES = "/usr/share/modsecurity-crs/rules"
CRS_SETUP = "/etc/modsecurity/crs/crs-setup.conf"
UID_HEADER = "X-Bw-Unique-Id"
FORM = ("content-type", "application/x-www-form-urlencoded")

BENIGN = [
    ("GET", "/b/page?id=42&sort=name", None),
    ("GET", "/b/search?q=blue+shoes&page=2", None),
    ("POST", "/b/form", b"name=Alice+Martin&city=Lyon&comment=See+you+on+Monday"),
    ("POST", "/b/order", b"item=1234&qty=2&note=" + b"n" * 3000),
]
ATTACKS = [
    ("GET", "/a/q?id=1%27%20or%20%271%27%3D%271", None),
    ("GET", "/a/x?name=%3Cscript%3Ealert(1)%3C%2Fscript%3E", None),
    ("POST", "/a/form", b"user=admin&pass=x%27+or+1%3D1--"),
    ("POST", "/a/upload", b"comment=%3Cscript%3Edocument.cookie%3C%2Fscript%3E&pad=" + b"p" * 2000),
]


def engine_conf(work):
    """Recommended configuration, blocking, paths in the run directory."""
    with open(os.path.join(REPO, "rules", "bulwark.conf-recommended")) as f:
        text = f.read()
    text = re.sub(r"(?m)^SecRuleEngine .*$", "SecRuleEngine On", text)
    text = re.sub(r"(?m)^SecAuditEngine .*$", "SecAuditEngine RelevantOnly", text)
    text = re.sub(r"(?m)^SecAuditLogRelevantStatus .*$", 'SecAuditLogRelevantStatus "^(?:5|4(?!04))"', text)
    text = re.sub(r"(?m)^SecAuditLogParts .*$", "SecAuditLogParts ABIJDEFHZ", text)
    text = re.sub(r"(?m)^SecAuditLogType .*$", "SecAuditLogType Serial", text)
    text = re.sub(r"(?m)^SecAuditLog .*$", "SecAuditLog %s/modsec/audit.log" % work, text)
    text = re.sub(r"(?m)^SecTmpDir .*$", "SecTmpDir %s/modsec/tmp" % work, text)
    text = re.sub(r"(?m)^SecDataDir .*$", "SecDataDir %s/modsec/data" % work, text)
    text = re.sub(r"(?m)^SecUnicodeMapFile .*$",
                  "SecUnicodeMapFile %s 20127" % os.path.join(REPO, "rules", "unicode.mapping"), text)
    text = re.sub(r"(?m)^SecDebugLog .*$", "SecDebugLog /dev/null", text)
    path = os.path.join(work, "engine.conf")
    with open(path, "w") as f:
        f.write(text)
    return path


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {"benign": 0, "attack": 0, "retried": 0, "abandoned": 0, "dropped": 0}
        self.failures = []
        self.unanswered = []    # no response at all (connection closed, never processed)
        self.lost_streams = []
        self.attack_uids = []

    def ok(self, kind, uid=None):
        with self.lock:
            self.counts[kind] += 1
            if kind == "attack" and uid:
                self.attack_uids.append(uid)

    def fail(self, what, answered=True):
        with self.lock:
            (self.failures if answered else self.unanswered).append(what)

    def lost(self, what):
        with self.lock:
            self.lost_streams.append(what)

    def abandoned(self):
        with self.lock:
            self.counts["abandoned"] += 1

    def dropped(self):
        with self.lock:
            self.counts["dropped"] += 1

    def retried(self):
        with self.lock:
            self.counts["retried"] += 1


# --engine none (a baseline of Apache alone): nothing blocks, every request
# must be answered as a benign one.
BASELINE = []


def judge(tally, kind, method, path, body, status, headers_get, err):
    if kind == "benign" or BASELINE:
        if status == 200 and headers_get("x-body-sha256") == hashlib.sha256(body or b"").hexdigest():
            tally.ok("benign")
        else:
            tally.fail("benign %s %s: %s %s" % (method, path, status, err or ""), status is not None)
    else:
        if status == 403:
            tally.ok("attack", headers_get(UID_HEADER))
        else:
            tally.fail("attack %s %s: %s %s (missed block or failure)" % (method, path, status, err or ""),
                       status is not None)


def pick(rng):
    """A request on a path of its own (/b/form/<n>), so that the echo
    backend can tell whether it ever got it."""
    kind, (m, p, b) = (("attack", rng.choice(ATTACKS)) if rng.random() < 0.3
                       else ("benign", rng.choice(BENIGN)))
    path, q, query = p.partition("?")
    return kind, m, "%s/%d%s%s" % (path, rng.getrandbits(48), q, query), b


def backend_saw(be_port, path):
    """How often the echo backend got this path (query ignored)."""
    st, body = h2client.raw_h1(be_port, b"GET /__seen%s HTTP/1.1\r\nHost: localhost\r\n"
                               b"Connection: close\r\n\r\n" % path.split("?")[0].encode())
    m = re.search(rb"seen (\d+) times", body)
    return int(m.group(1)) if m else -1


def h1_client(port, tls, stop, tally, seed):
    """A new TLS connection per request: a graceful reload never races an
    idle keep-alive connection (the retry of that race is the client's own
    business, not the server's)."""
    rng = random.Random(seed)
    while not stop.is_set():
        kind, method, path, body = pick(rng)
        head = "%s %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bulwark-reload\r\nAccept: */*\r\n" % (method, path)
        if body is not None:
            head += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n" % len(body)
        raw = head.encode() + b"Connection: close\r\n\r\n" + (body or b"")
        try:
            status, got = h2client.raw_h1(port, raw, tls=tls(), timeout=30)
            err = None
        except OSError as e:
            status, got, err = None, b"", str(e)
        hdrs = dict((k.strip().lower(), v.strip()) for k, _, v in
                    (l.decode("latin-1").partition(":") for l in got.split(b"\r\n\r\n")[0].split(b"\r\n")[1:]))
        judge(tally, kind, method, path, body, status, lambda n: hdrs.get(n.lower()), err)


def h2_client(port, be_port, tls, stop, tally, seed, streams=8):
    """Batches of streams on one connection, a new connection when the
    server closed or went away; unprocessed streams are sent again."""
    rng = random.Random(seed)
    conn = None
    while not stop.is_set():
        batch = [pick(rng) for _ in range(streams)]
        pending = list(batch)
        for attempt in range(5):
            if conn is None or not conn.usable():
                if conn is not None:
                    conn.close()
                try:
                    conn = h2client.H2Conn(port, tls=tls(), timeout=30)
                except (OSError, h2client.H2Error) as e:
                    conn = None
                    if attempt == 4:
                        for kind, m, p, b in pending:
                            tally.fail("%s %s %s: cannot connect: %s" % (kind, m, p, e), False)
                    time.sleep(0.05)
                    continue
            sids = {}
            err = None
            used = conn
            try:
                for req in pending:
                    kind, m, p, b = req
                    sids[conn.request(m, p, headers=[FORM] if b is not None else [], body=b,
                                      content_length=rng.random() < 0.5)] = req
                conn.wait(list(sids))
            except (OSError, h2client.H2Error) as e:
                # The server may have gone away while we wrote: read what it
                # said (a GOAWAY names the streams it never began).
                err = str(e)
                try:
                    conn.wait(list(sids), timeout=5)
                except (OSError, h2client.H2Error):
                    pass
                conn.close()
                conn = None
            retry = [req for req in pending if req not in sids.values()]   # never sent
            for sid, req in sids.items():
                r = used.streams.get(sid)
                kind, m, p, b = req
                if r is not None and r.status is not None:
                    judge(tally, kind, m, p, b, r.status, r.header, None)
                elif r is not None and r.unprocessed:
                    retry.append(req)
                    tally.retried()
                elif r is not None and used.goaway is not None and sid <= used.goaway:
                    # httpd 2.4.71 (Apache alone too: --engine none) may close
                    # a connection after its graceful GOAWAY without answering
                    # the stream of the last id. When the backend never got
                    # it nothing was done, and a retry loses or doubles
                    # nothing; when it did, the answer is lost: counted apart.
                    if backend_saw(be_port, p) == 0:
                        retry.append(req)
                        tally.abandoned()
                    else:
                        tally.lost("%s %s %s (stream %d)" % (kind, m, p, sid))
                elif (r is not None and used.goaway is None
                      and not any(x.status is not None for x in used.streams.values())
                      and backend_saw(be_port, p) == 0):
                    # The connection closed with no GOAWAY before any stream
                    # on it was answered, and the backend never got this
                    # one: httpd dropped the whole connection unprocessed.
                    # Seen in loaded fresh roots while reloads ran, on new
                    # connections (streams 1 to 9), once before the server's
                    # preface, once after its SETTINGS; likely a stopping child's
                    # event MPM closes connections idle in its keep-alive
                    # queue, an h2 one included, without a GOAWAY. A client
                    # cannot tell those streams from refused ones and sends
                    # them again; a request that did reach the backend is
                    # still a failure.
                    retry.append(req)
                    tally.dropped()
                else:
                    tally.fail("%s %s %s over h2: %s (stream %d, GOAWAY last id %s, %s)"
                               % (kind, m, p, (r.error if r else err), sid, used.goaway,
                                  "server spoke" if used.heard else "server never spoke"), False)
            pending = retry
            if not pending:
                break
        else:
            for kind, m, p, b in pending:
                tally.fail("%s %s %s: not processed after 5 connections" % (kind, m, p), False)
    if conn is not None:
        conn.close()


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def slope_kb(samples):
    """Least-squares growth, KB per reload, of (reload number, rss) pairs."""
    n = len(samples)
    if n < 3:
        return 0.0
    mx = sum(x for x, _ in samples) / n
    my = sum(y for _, y in samples) / n
    sxx = sum((x - mx) ** 2 for x, _ in samples)
    return sum((x - mx) * (y - my) for x, y in samples) / sxx if sxx else 0.0


def audit_records(path):
    """{unique_id: set of part letters} of a Serial audit log."""
    recs = {}
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return recs
    for m in re.finditer(r"(?ms)^--([0-9a-f]+)-A--\n\[[^\]]*\] (\S+) .*?^--\1-Z--\n", text):
        recs[m.group(2)] = set(re.findall(r"(?m)^--%s-([A-Z])--$" % m.group(1), m.group(0)))
    return recs


def run_h2load(port, seconds, work):
    if not shutil.which("h2load"):
        return None
    cmd = ["h2load", "-D", str(seconds), "-c", "2", "-m", "4", "-t", "1",
           "https://localhost:%d/b/page?id=7" % port]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=work)


def main(argv=None):
    hz.cleanup_on_signals()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=120)
    p.add_argument("--interval", type=float, default=1.0)
    p.add_argument("--reloads", type=int, help="this many reloads back to back (memory run)")
    p.add_argument("--module", help="mod_bulwark.so (default: BW_MODULE or build/out/.libs)")
    p.add_argument("--engine", choices=("bulwark", "none"), default="bulwark",
                   help="none: Apache alone, a baseline (attacks are answered 200)")
    p.add_argument("--sanitize", action="store_true", default=None)
    p.add_argument("--max-growth-kb", type=float, default=8.0)
    p.add_argument("--h1-clients", type=int, default=3)
    p.add_argument("--h2-clients", type=int, default=2)
    p.add_argument("--keep", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    label = "fronts-reload"
    passed, failed = [], []

    def check(name, ok, detail=""):
        (passed if ok else failed).append(name)
        print("  %s  %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail else ""), flush=True)

    for need in (CRS_RULES, CRS_SETUP):
        if not os.path.exists(need):
            print("%s: run broke: %s missing (Debian's modsecurity-crs)" % (label, need))
            return 2
    work = tempfile.mkdtemp(prefix="bw-fronts-reload-")
    t0 = time.monotonic()
    try:
        hz.engine_dirs(work)
        rules = [engine_conf(work), CRS_SETUP, os.path.join(CRS_RULES, "*.conf"),
                 os.path.join(REPO, "rules", "bulwark-after.conf")]
        with hz.Backend.start("echo", log_dir=work) as be:
            if a.engine == "none":
                BASELINE.append(True)
            cfg = hz.ApacheConfig(a.engine, be.port, rule_files=rules, module_so=a.module,
                                  sanitize=a.sanitize, run_dir=os.path.join(work, "apache"),
                                  extra_conf='Header always set %s "%%{UNIQUE_ID}e"\n' % UID_HEADER,
                                  front="tls", h2=True, threads=25)
            ap = hz.Apache(cfg)
            try:
                ap.start()
                rc = run_load(a, ap, be, work, check)
            finally:
                ap.stop()
            crashes = [l.strip() for l in open(ap.error_log, errors="replace") if "exit signal" in l]
            check("no child died", not crashes,
                  "\n".join(crashes[:1] + ap.crash_backtraces()) if crashes else "")
            if a.sanitize:
                reps = ap.sanitizer_reports()
                check("no sanitizer report", not reps, "\n".join(reps)[:3000])
    except (hz.HarnessError, OSError) as e:
        print("%s: run broke: %s" % (label, e))
        return 2
    finally:
        if a.keep:
            print("%s: kept %s" % (label, work))
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("%s: %.0fs" % (label, time.monotonic() - t0))
    print("%s: %d passed, %d failed" % (label, len(passed), len(failed)))
    return 1 if failed else 0


def run_load(a, ap, be, work, check):
    tally = Tally()
    stop = threading.Event()

    def tls():
        return ap.client_tls()

    threads = [threading.Thread(target=h1_client, args=(ap.port, tls, stop, tally, i), daemon=True)
               for i in range(a.h1_clients)]
    threads += [threading.Thread(target=h2_client, args=(ap.port, be.port, tls, stop, tally, 100 + i),
                                 daemon=True)
                for i in range(a.h2_clients)]
    for t in threads:
        t.start()
    h2l = run_h2load(ap.port, int(a.seconds), work) if not a.reloads else None
    samples, reloads, refused = [], 0, []
    start = time.monotonic()
    end = start + a.seconds
    while True:
        if a.reloads is not None:
            if reloads >= a.reloads:
                break
        elif time.monotonic() >= end:
            break
        gen_before = generation(ap)
        r = subprocess.run(ap.command("-k", "graceful"), env=ap.env(), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        reloads += 1
        if r.returncode != 0:
            refused.append(r.stdout.strip()[-300:])
        wait_generation(ap, gen_before)
        samples.append((reloads, rss_kb(ap.pid)))
        if a.reloads is None:
            time.sleep(max(0.0, start + reloads * a.interval - time.monotonic()))
    stop.set()
    for t in threads:
        t.join(timeout=60)
    h2l_out = ""
    if h2l is not None:
        try:
            h2l_out, _ = h2l.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            h2l.kill()
            h2l_out, _ = h2l.communicate()
    time.sleep(1.0)   # the last audit records are written after the responses
    c = tally.counts
    print("  %d reloads in %.0fs; %d benign and %d attack requests answered; h2 streams sent "
          "again: %d above a GOAWAY's last id, %d at it that httpd closed unanswered and the "
          "backend never got, %d on connections httpd closed with no GOAWAY before answering any stream"
          % (reloads, time.monotonic() - start, c["benign"], c["attack"],
             c["retried"], c["abandoned"], c["dropped"]), flush=True)
    check("every reload accepted (apache2 -k graceful)", not refused, "; ".join(refused[:2]))
    if tally.lost_streams:
        print("  NOTE  %d h2 streams reached the backend but httpd closed their connection after "
              "its graceful GOAWAY without answering them (httpd's mod_http2; Apache alone too, "
              "--engine none): %s" % (len(tally.lost_streams), "; ".join(tally.lost_streams[:3])),
              flush=True)
    failures = tally.failures
    if a.reloads is None:
        failures = failures + tally.unanswered
    elif tally.unanswered:
        # Reloads back to back (the memory run) leave httpd itself dropping
        # connections it accepted: Apache alone does the same (--engine none).
        # An answer, though, must still be right: no missed block.
        print("  NOTE  %d requests got no answer at all while reloads ran back to back (httpd's "
              "own, Apache alone too: --engine none --reloads N): %s"
              % (len(tally.unanswered), "; ".join(tally.unanswered[:3])), flush=True)
    check("zero failed requests (but for the NOTE above), zero missed blocks (%d benign, %d attacks)"
          % (c["benign"], c["attack"]),
          not failures and c["benign"] > 0 and (c["attack"] > 0 or BASELINE),
          "%d: %s" % (len(failures), "; ".join(failures[:5])))
    recs = audit_records(os.path.join(work, "modsec", "audit.log"))
    missing = [u for u in tally.attack_uids if u not in recs]
    partial = [u for u in tally.attack_uids if u in recs and not set("ABFHZ") <= recs[u]]
    check("an audit record for every attack, each with parts A B F H Z",
          not missing and not partial and (tally.attack_uids or BASELINE),
          "%d missing, %d incomplete of %d" % (len(missing), len(partial), len(tally.attack_uids)))
    if h2l is not None:
        m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                      r"(\d+) errored, (\d+) timeout", h2l_out)
        codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", h2l_out)
        print("  h2load: %s" % (m.group(0) if m else h2l_out.strip()[-300:]), flush=True)
        check("h2load: every request it finished answered 2xx",
              m is not None and codes is not None and int(m.group(3)) > 0
              and int(codes.group(3)) == 0 and int(codes.group(4)) == 0,
              codes.group(0) if codes else "no status line")
    half = samples[len(samples) // 2:]
    growth = slope_kb(half)
    print("  parent RSS: %d KB after reload 1, %d KB after reload %d; growth over the second half "
          "%.2f KB per reload" % (samples[0][1], samples[-1][1], samples[-1][0], growth), flush=True)
    check("resident memory flat: %.2f KB per reload < %.1f" % (growth, a.max_growth_kb),
          growth < a.max_growth_kb and len(samples) >= 10, "%d samples" % len(samples))
    return 0


def generation(ap):
    """The generation the scoreboard's parent runs; read from the error log
    ("resuming normal operations" lines): counting them is enough."""
    with open(ap.error_log, errors="replace") as f:
        return sum(1 for l in f if "resuming normal operations" in l)


def wait_generation(ap, before, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and generation(ap) <= before:
        time.sleep(0.02)


if __name__ == "__main__":
    sys.exit(main())
