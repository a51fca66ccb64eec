"""The load generators of tools/perf/run, one per front of Apache.

    h1      HTTP/1.1 on plain TCP, Apache Bench: ab -k -c C
    h2tls   HTTP/2 on TLS (mod_ssl, ALPN h2, mod_http2), h2load -c C -m M

A Load is one front at one concurrency. It builds the command for a
workload, turns the tool's report into one shape of result (complete,
failed, non2xx, seconds, rps, mean_ms, ...) and sends the one request of the
check stage. h2load runs are strict: a failed, errored or timed-out request,
a status other than 2xx, a request not done or a protocol other than h2 stops
the whole run with the command and the tail of h2load's output.
"""

import os
import re
import shlex
import subprocess

FRONTS = {
    "h1": "HTTP/1.1, plain TCP (ab -k)",
    "h2tls": "HTTP/2 over TLS (mod_ssl + mod_http2, h2load)",
}


class LoadError(RuntimeError):
    """A load generator failed, or its report cannot be trusted."""


def _tail(p):
    return ((p.stdout or "") + (p.stderr or ""))[-1500:]


# --------------------------------------------------------------------------
# ab

def parse_ab(out):
    """The numbers we use from ab's report."""
    r = {}
    keys = {"Complete requests:": "complete", "Failed requests:": "failed",
            "Non-2xx responses:": "non2xx", "Time taken for tests:": "seconds",
            "Requests per second:": "rps", "Keep-Alive requests:": "keepalive"}
    for line in out.splitlines():
        for k, name in keys.items():
            if line.startswith(k) and name not in r:
                r[name] = float(line[len(k):].split()[0])
        if line.strip().startswith("(Connect:"):
            r["failed_detail"] = line.strip()
        if line.startswith("Time per request:") and "mean_ms" not in r:
            r["mean_ms"] = float(line.split()[3])
    r.setdefault("non2xx", 0.0)
    return r


class AbLoad:
    """HTTP/1.1 keep-alive on plain TCP, `ab -k -c C`. Non-2xx answers are
    counted and flagged in the report, not fatal (ab's established runs)."""

    front = "h1"
    apache_front, apache_h2 = "plain", False

    def __init__(self, conc):
        self.clients, self.streams = conc, 1

    @property
    def key(self):
        return (self.front, self.clients, self.streams)

    @property
    def label(self):
        return "c=%d" % self.clients

    def min_requests(self):
        return max(self.clients, 5)

    def command(self, wl, port, n, cap, extra=()):
        return wl.ab_command(port, self.clients, n, cap, extra)

    def result(self, p, cmd):
        r = parse_ab(p.stdout)
        if p.returncode != 0 or "complete" not in r or not r["complete"]:
            raise LoadError("ab failed (status %d): %s\n%s"
                            % (p.returncode, " ".join(cmd), _tail(p)))
        return r

    def status(self, wl, port, work):
        """Status of one request (0: none), from ab's verbose output. One
        client: ab refuses more clients than requests."""
        p = subprocess.run(wl.ab_command(port, 1, 1, 60, extra=["-v", "4"]),
                           capture_output=True, text=True, errors="replace", timeout=120)
        m = re.search(r"(?:LOG: Response code = |Response code not 2xx \()(\d+)", p.stdout)
        return int(m.group(1)) if m else 0


# --------------------------------------------------------------------------
# h2load

_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(us|ms|s)$")


def h2_seconds(text):
    """h2load's durations ("226us", "66.29ms", "4.02s") in seconds."""
    m = _DURATION.match(text.strip())
    if not m:
        raise ValueError("not an h2load duration: %r" % text)
    return float(m.group(1)) * _UNITS[m.group(2)]


def _counts(text):
    """'200 total, 200 started, 0 failed' -> {'total': 200, ...}: by name,
    so that another order or another field in a later h2load still parses."""
    out = {}
    for part in text.split(","):
        words = part.split()
        if len(words) == 2 and words[0].isdigit():
            out[words[1]] = int(words[0])
    return out


def parse_h2load(out):
    """The numbers we use from h2load's report; a field it lacks is absent."""
    r = {}
    for line in out.splitlines():
        s = line.strip()
        if s.startswith("finished in "):
            parts = [x.strip() for x in s[len("finished in "):].split(",")]
            r["seconds"] = h2_seconds(parts[0])
            if len(parts) > 1 and parts[1].endswith(" req/s"):
                r["rps"] = float(parts[1].split()[0])
        elif s.startswith("requests:"):
            r["requests_line"] = _counts(s[len("requests:"):])
        elif s.startswith("status codes:"):
            r["status_line"] = _counts(s[len("status codes:"):])
        elif s.startswith("time for request:"):
            cols = s[len("time for request:"):].split()
            r["mean_ms"] = h2_seconds(cols[2]) * 1e3          # min max mean sd +/-sd
        elif s.startswith("Application protocol:"):
            r["protocol"] = s.split(":", 1)[1].strip()
    return r


class H2Load:
    """HTTP/2 on TLS, `h2load -c C -m M`: C connections, each with up to M
    streams in flight, so C*M requests at a time (4x8 is comparable to ab's
    32). h2load does not verify the server's certificate (the run's CA is
    not asked for): acceptable for a loopback benchmark."""

    front = "h2tls"
    apache_front, apache_h2 = "tls", True

    def __init__(self, clients, streams):
        self.clients, self.streams = clients, streams

    @property
    def key(self):
        return (self.front, self.clients, self.streams)

    @property
    def label(self):
        return "c=%d m=%d" % (self.clients, self.streams)

    def min_requests(self):
        # h2load refuses fewer requests than clients; fill every stream once.
        return max(self.clients * self.streams, 5)

    def command(self, wl, port, n, cap, extra=()):
        return wl.h2load_command(port, self.clients, self.streams, n, extra)

    def result(self, p, cmd):
        n = int(cmd[cmd.index("-n") + 1])
        try:
            r = parse_h2load(p.stdout)
        except (ValueError, IndexError) as e:
            raise LoadError("h2load: unreadable report (%s): %s\n%s"
                            % (e, shlex.join(cmd), _tail(p)))
        req, st = r.get("requests_line", {}), r.get("status_line", {})
        problems = []
        if p.returncode != 0:
            problems.append("exit status %d" % p.returncode)
        if not all(k in r for k in ("seconds", "rps", "mean_ms")) or "done" not in req \
                or "2xx" not in st:
            problems.append("report incomplete")
        if r.get("protocol") != "h2":
            problems.append("protocol %s, not h2" % r.get("protocol", "unknown"))
        bad = {k: req.get(k, 0) for k in ("failed", "errored", "timeout") if req.get(k, 0)}
        if bad:
            problems.append(", ".join("%d %s" % (v, k) for k, v in bad.items()))
        if req.get("done") != n or req.get("succeeded") != n:
            problems.append("%s of %d requests done, %s succeeded"
                            % (req.get("done", "?"), n, req.get("succeeded", "?")))
        if st.get("2xx") != n:
            problems.append("status codes: %s" % ", ".join("%d %s" % (v, k) for k, v in st.items()))
        if problems:
            raise LoadError("h2load run failed (%s): %s\n%s"
                            % ("; ".join(problems), shlex.join(cmd), _tail(p)))
        return {"complete": float(req["done"]), "failed": 0.0, "non2xx": 0.0,
                "seconds": r["seconds"], "rps": r["rps"], "mean_ms": r["mean_ms"]}

    def status(self, wl, port, work):
        """Status of one request over h2 (0: none), from h2load's log file;
        a protocol other than h2 is an error."""
        log = os.path.join(work, "h2load-check.log")
        if os.path.exists(log):
            os.unlink(log)
        cmd = self.command(wl, port, 1, 60, extra=["--log-file", log])
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120)
        proto = parse_h2load(p.stdout).get("protocol")
        if proto != "h2":
            raise LoadError("h2load did not speak h2 (protocol %s): %s\n%s"
                            % (proto or "unknown", shlex.join(cmd), _tail(p)))
        try:
            with open(log) as f:
                fields = f.readline().split("\t")     # start µs, status, duration µs
            return int(fields[1])
        except (OSError, IndexError, ValueError):
            return 0


def parse_loads(fronts, concurrency, h2_concurrency):
    """Loads in run order from the command line's lists: "1,32" for ab,
    "1x1,4x8" (clients x streams) for h2load."""
    loads = []
    for front in fronts:
        if front == "h1":
            loads += [AbLoad(int(c)) for c in concurrency.split(",") if c]
        elif front == "h2tls":
            for item in (x for x in h2_concurrency.split(",") if x):
                c, _, m = item.lower().partition("x")
                loads.append(H2Load(int(c), int(m or 1)))
        else:
            raise ValueError("unknown front %r (known: %s)" % (front, ", ".join(FRONTS)))
    if any(ld.clients < 1 or ld.streams < 1 for ld in loads):
        raise ValueError("concurrency must be at least 1")
    return loads


def display_command(load, wl, cap):
    """The exact command of a measured run, with PORT and N (the request
    count sized by calibration) in place of the run's values."""
    cmd = load.command(wl, "PORT", "N", cap)
    if wl.body_file:
        cmd = [os.path.basename(wl.body_file) if x == wl.body_file else x for x in cmd]
    return shlex.join(cmd)
