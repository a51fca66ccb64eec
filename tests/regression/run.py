#!/usr/bin/env python3
"""Bulwark's own regression tests: go-ftw YAML tests against a real Apache.

Layout: tests/regression/<area>/<name>.yaml (go-ftw v2 schema, as CRS's) with
<name>.conf beside it: the rules/config that test needs. For each YAML file
the runner starts Apache (reverse proxy to albedo) with the engine, base.conf
and <name>.conf, then runs go-ftw on that file. A test passes on the status
code and/or the `[id "..."]` fields it expects in the error log (go-ftw's
marker mechanism, see base.conf).

startup/<name>.conf are start-up tests (no go-ftw): `apache2 -t` with base.conf
+ that file must succeed or fail as its header says:
    # expect: fail             (or: ok)
    # expect-line: 7           the output names this line of the file
    # expect-reason: REGEX     the output matches this (Python re, search)
A failing config must also be named by its path in the output.

`@RUN@` in a .conf is replaced by the run directory, `@HERE@` by the
directory the .conf is in (for files it names, e.g. Lua scripts);
`@REMOTE_PORT@`, `@REMOTE_CA@` and `@REMOTE_DOWN_PORT@` start
tests/backend/rules_https.py (an HTTPS server of rule files with a CA made
for the run) and name its port, its CA file and a port nothing listens on
(SecRemoteRules tests). `@BACKEND_PORT@` is the port of the test's
backend (proxy:URL tests send requests there themselves). A .conf line
`# backend: echo` runs that file against tests/backend/echo_digest.py (it
answers with the SHA-256 of the body it got) instead of albedo. A .conf
line `# bulwark-only: WHY` marks a file that tests what only Bulwark does
(its own directives): with --engine modsec2 its tests (a start-up test too)
are listed as not applicable, with the reason, and counted neither way.
A .conf line `# setup: COMMAND ARGS...` (any number of them) is run from the
repository root, `@RUN@` replaced, before Apache starts or is tested: data a
test needs but that is never committed (GeoIP databases) is made there.
Programs a test's rules run (@inspectFile, exec) live in <area>/bin/ and are
copied into @RUN@/bin/, executable, before Apache starts.
A child that dies (`exit signal` in the error log) fails the file.
Closing line: `regression: N passed, M failed`; exit 1 on any failure,
2 when the run could not be done at all (go-ftw missing...).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_TESTS = os.path.dirname(HERE)
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import bwharness as hz  # noqa: E402


def yaml_test_ids(path):
    """RULE-TEST ids of a go-ftw file (a line parser is enough for ours)."""
    with open(path) as f:
        text = f.read()
    rule = re.search(r"^rule_id:[ \t]*(\d+)", text, re.M)
    ids = re.findall(r"^[ \t]*-[ \t]*test_id:[ \t]*(\d+)", text, re.M)
    return ["%s-%s" % (rule.group(1) if rule else "?", t) for t in ids]


class RemoteRules:
    """tests/backend/rules_https.py, started the first time a .conf names
    @REMOTE_PORT@ (its port), @REMOTE_CA@ (the CA it made for this run) or
    @REMOTE_DOWN_PORT@ (a loopback port nothing listens on)."""

    def __init__(self):
        self.proc = None
        self.dir = None
        self.values = {}

    def start(self, work):
        if self.proc:
            return self.values
        self.dir = os.path.join(work, "remote-rules")
        os.makedirs(self.dir, exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, os.path.join(REPO_TESTS, "backend", "rules_https.py"),
                                      self.dir], stdin=subprocess.DEVNULL)
        port_file = os.path.join(self.dir, "port")
        deadline = time.monotonic() + 30
        while not os.path.exists(port_file):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise hz.HarnessError("the HTTPS rules server did not start")
            time.sleep(0.05)
        with open(port_file) as f:
            port = f.read().strip()
        with socket.socket() as s:   # a port that was free: nothing listens
            s.bind(("127.0.0.1", 0))
            down = str(s.getsockname()[1])
        os.chmod(self.dir, 0o755)
        self.values = {"@REMOTE_PORT@": port, "@REMOTE_CA@": os.path.join(self.dir, "ca.pem"),
                       "@REMOTE_DOWN_PORT@": down}
        return self.values

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


REMOTE = RemoteRules()


def substitute(src, dst, run_dir, backend_port=None):
    with open(src) as f:
        text = (f.read().replace("@RUN@", run_dir)
                .replace("@HERE@", os.path.dirname(os.path.abspath(src))))
    if backend_port is not None:
        text = text.replace("@BACKEND_PORT@", str(backend_port))
    if "@REMOTE_" in text:
        for k, v in REMOTE.start(os.path.dirname(run_dir)).items():
            text = text.replace(k, v)
    with open(dst, "w") as f:
        f.write(text)
    return dst


def install_bin(name, run_dir):
    """<area>/bin/* (programs the area's rules run: @inspectFile, exec) into
    <run>/bin, executable, where Apache's workers can reach them whatever the
    permissions of the source tree; the .conf names them @RUN@/bin/..."""
    src = os.path.join(HERE, name.split(os.sep)[0], "bin")
    if not os.path.isdir(src):
        return
    dst = os.path.join(run_dir, "bin")
    os.makedirs(dst, exist_ok=True)
    os.chmod(dst, 0o755)
    for n in sorted(os.listdir(src)):
        shutil.copyfile(os.path.join(src, n), os.path.join(dst, n))
        os.chmod(os.path.join(dst, n), 0o755)


def prepare_run_dir(work, name):
    run_dir = os.path.join(work, name.replace(os.sep, "_"))
    for sub in ("modsec/tmp", "modsec/data", "apache"):
        os.makedirs(os.path.join(run_dir, sub), exist_ok=True)
    install_bin(name, run_dir)
    if os.geteuid() == 0:
        _, _, uid, gid = hz.run_user()
        for d in (work, run_dir):
            os.chmod(d, 0o755)
        for sub in ("modsec", "modsec/tmp", "modsec/data"):
            os.chown(os.path.join(run_dir, sub), uid, gid)
    return run_dir


class Results:
    def __init__(self):
        self.passed = []
        self.failed = []  # (id, why)
        self.na = []      # (id, why): Bulwark-only tests under another engine

    def ok(self, tid):
        self.passed.append(tid)
        print("  ok    %s" % tid, flush=True)

    def not_applicable(self, tid, why):
        self.na.append((tid, why))
        print("  n/a   %s: Bulwark only (%s)" % (tid, why), flush=True)

    def fail(self, tid, why):
        self.failed.append((tid, why))
        print("  FAIL  %s: %s" % (tid, why), flush=True)


class Backends:
    """Backends by kind, each started on first use, all stopped by stop()."""

    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.running = {}

    def port(self, kind):
        if kind not in self.running:
            self.running[kind] = hz.Backend.start(kind, log_dir=self.log_dir)
        return self.running[kind].port

    def stop(self):
        for be in self.running.values():
            be.stop()
        self.running = {}


def conf_bulwark_only(conf):
    """Why a test's .conf applies to Bulwark only (`# bulwark-only: WHY`), or None."""
    with open(conf) as f:
        for line in f:
            m = re.match(r"#\s*bulwark-only:\s*(.+)", line)
            if m:
                return m.group(1).strip()
    return None


def conf_backend(conf):
    """The backend a test's .conf asks for (`# backend: KIND`), else albedo."""
    with open(conf) as f:
        for line in f:
            m = re.match(r"#\s*backend:\s*(\S+)", line)
            if m:
                return m.group(1)
    return "albedo"


def conf_setup(conf, run_dir):
    """Run the `# setup: COMMAND` lines of a .conf; None, or why one failed."""
    with open(conf) as f:
        cmds = [m.group(1) for m in (re.match(r"#\s*setup:\s*(.+?)\s*$", l) for l in f) if m]
    for cmd in cmds:
        argv = [a.replace("@RUN@", run_dir) for a in shlex.split(cmd)]
        p = subprocess.run(argv, cwd=os.path.join(HERE, "..", ".."), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=120)
        if p.returncode != 0:
            return "setup `%s` failed (status %d): %s" % (cmd, p.returncode, p.stdout.strip()[-500:])
    return None


def child_crashes(error_log):
    try:
        with open(error_log, errors="replace") as f:
            return [l.strip() for l in f if "exit signal" in l]
    except OSError:
        return []


def run_ftw_file(a, yaml_path, backends, work, res, ftw):
    """backends: a Backends, or the port of the one backend to use."""
    rel = os.path.relpath(yaml_path, HERE)
    name = rel[:-len(".yaml")]
    conf = os.path.join(HERE, name + ".conf")
    ids = yaml_test_ids(yaml_path)
    print("%s (%d tests)" % (rel, len(ids)), flush=True)
    if not os.path.exists(conf):
        for t in ids:
            res.fail(t, "missing %s.conf" % name)
        return
    only = conf_bulwark_only(conf)
    if only and a.engine != "bulwark":
        for t in ids:
            res.not_applicable(t, only)
        return
    backend_port = backends if isinstance(backends, int) else backends.port(conf_backend(conf))
    run_dir = prepare_run_dir(work, name)
    why = conf_setup(conf, run_dir)
    if why:
        for t in ids:
            res.fail(t, why)
        return
    files = [substitute(os.path.join(HERE, "base.conf"), os.path.join(run_dir, "base.conf"), run_dir),
             substitute(conf, os.path.join(run_dir, "test.conf"), run_dir, backend_port)]
    cfg = hz.ApacheConfig(a.engine, backend_port, rule_files=files, module_so=a.module,
                          sanitize=a.sanitize, run_dir=os.path.join(run_dir, "apache"), threads=8,
                          front=a.front, h2=a.front == "tls")
    ap = hz.Apache(cfg)
    try:
        try:
            ap.start(timeout=30)
        except hz.HarnessError as e:
            for t in ids:
                res.fail(t, "Apache did not start: %s" % str(e).splitlines()[0])
            print(indent(str(e)))
            return
        ftw_cfg = os.path.join(run_dir, "ftw.yaml")
        with open(ftw_cfg, "w") as f:
            f.write(hz.ftw_config_text(ap.error_log, ap))
        cmd = [ftw, "run", "--config", ftw_cfg, "-d", os.path.dirname(yaml_path),
               "-g", os.path.basename(yaml_path), "-o", "json", "--read-timeout", "10s",
               "--max-marker-retries", "10"]
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, errors="replace", timeout=300,
                           cwd=run_dir, env=hz.ftw_env(ap))
        stats = None
        for line in p.stdout.splitlines():
            if line.startswith("{") and '"success"' in line:
                stats = json.loads(line)
        if stats is None:
            for t in ids:
                res.fail(t, "go-ftw gave no result (status %d)" % p.returncode)
            print(indent(p.stderr[-3000:] + p.stdout[-1000:]))
            print(indent(ap.error_tail(15)))
            return
        trig = stats.get("triggered-rules") or {}
        for t in stats.get("success") or []:
            res.ok(t)
        for t in stats.get("failed") or []:
            res.fail(t, "rules logged per stage: %s" % (trig.get(t) or "none"))
        missing = set(ids) - set(stats.get("success") or []) - set(stats.get("failed") or [])
        for t in sorted(missing):
            res.fail(t, "not run by go-ftw")
        if stats.get("failed") and a.verbose:
            print(indent(p.stderr[-3000:]))
            print(indent(ap.error_tail(20)))
    finally:
        ap.stop()
        for line in child_crashes(ap.error_log)[:1]:
            res.fail(name + ":crash", line[:500])
            for bt in ap.crash_backtraces():
                print(indent(bt[:6000]))
        # After the stop: reports of workers that died at shutdown count too.
        if a.sanitize:
            for rep in ap.sanitizer_reports():
                res.fail(name + ":sanitizer", rep[:2000])


def indent(text):
    return "\n".join("      | " + l for l in text.rstrip("\n").splitlines())


def parse_startup_header(path):
    want = {"expect": "fail", "line": None, "reason": []}
    with open(path) as f:
        for line in f:
            m = re.match(r"#\s*expect(-line|-reason)?:\s*(.*?)\s*$", line)
            if not m:
                continue
            if m.group(1) is None:
                want["expect"] = m.group(2)
            elif m.group(1) == "-line":
                want["line"] = int(m.group(2))
            else:
                want["reason"].append(m.group(2))
    return want


def run_startup(a, path, work, res):
    rel = os.path.relpath(path, HERE)
    tid = rel[:-len(".conf")]
    want = parse_startup_header(path)
    only = conf_bulwark_only(path)
    if only and a.engine != "bulwark":
        res.not_applicable(tid, only)
        return
    run_dir = prepare_run_dir(work, tid)
    why = conf_setup(path, run_dir)
    if why:
        res.fail(tid, why)
        return
    files = [substitute(os.path.join(HERE, "base.conf"), os.path.join(run_dir, "base.conf"), run_dir),
             substitute(path, os.path.join(run_dir, os.path.basename(path)), run_dir)]
    tested = files[1]
    cfg = hz.ApacheConfig(a.engine, 9, rule_files=files, module_so=a.module, sanitize=a.sanitize,
                          run_dir=os.path.join(run_dir, "apache"))
    ap = hz.Apache(cfg)
    try:
        ok, out = ap.configtest()
    except (hz.HarnessError, subprocess.SubprocessError) as e:
        res.fail(tid, "could not run apache2 -t: %s" % e)
        return
    finally:
        ap.stop()
    problems = []
    if want["expect"] == "ok":
        if not ok:
            problems.append("apache2 -t failed")
    else:
        if ok:
            problems.append("apache2 -t succeeded, a failure was expected")
        if tested not in out and os.path.basename(tested) not in out:
            problems.append("output does not name the file")
        if want["line"] is not None and not re.search(
                r"(?:line\s+%d\b|:%d\b)" % (want["line"], want["line"]), out):
            problems.append("output does not name line %d" % want["line"])
        for rx in want["reason"]:
            if not re.search(rx, out):
                problems.append("output does not match /%s/" % rx)
    if a.sanitize:
        problems += hz.sanitizer_lines(os.path.join(run_dir, "apache", "error.log"))
    if problems:
        res.fail(tid, "; ".join(problems))
        print(indent(out[-2000:]))
    else:
        res.ok(tid)


def discover(only):
    yamls, startups = [], []
    for root, dirs, files in os.walk(HERE):
        dirs.sort()
        for n in sorted(files):
            p = os.path.join(root, n)
            rel = os.path.relpath(p, HERE)
            if only and not re.search(only, rel):
                continue
            if rel.startswith("startup" + os.sep) and n.endswith(".conf"):
                startups.append(p)
            elif n.endswith(".yaml"):
                yamls.append(p)
    return yamls, startups


def main(argv=None):
    hz.cleanup_on_signals()
    p = argparse.ArgumentParser(description="Run Bulwark's go-ftw regression tests.")
    p.add_argument("--engine", choices=("bulwark", "modsec2"), default="bulwark")
    p.add_argument("--module", help="mod_bulwark.so (default: BW_MODULE or build/out/.libs)")
    p.add_argument("--sanitize", action="store_true", default=None,
                   help="module under ASan+UBSan (LD_PRELOAD); any report fails")
    p.add_argument("--only", help="regex on test file paths (relative to tests/regression)")
    p.add_argument("--front", choices=hz.FRONTS, default="plain",
                   help="tls: Apache terminates TLS (mod_ssl, a CA made for the run; mod_http2 "
                        "loaded, go-ftw speaks HTTP/1.1 over TLS)")
    p.add_argument("-v", "--verbose", action="store_true", help="show go-ftw and error-log output on failures")
    p.add_argument("--keep", action="store_true", help="keep the run directories")
    a = p.parse_args(argv)

    ftw = os.path.join(hz.tools_bin(), "go-ftw")
    if not os.access(ftw, os.X_OK):
        print("regression: go-ftw not found at %s: run tools/ftw/build.sh" % ftw, file=sys.stderr)
        return 2
    yamls, startups = discover(a.only)
    if not yamls and not startups:
        print("regression: no test matched", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="bw-regression-")
    res = Results()
    t0 = time.monotonic()
    try:
        backends = Backends(work)
        try:
            for y in yamls:
                run_ftw_file(a, y, backends, work, res, ftw)
        finally:
            backends.stop()
        if startups:
            print("startup (apache2 -t)")
        for s in startups:
            run_startup(a, s, work, res)
        REMOTE.stop()
    except (hz.HarnessError, OSError, subprocess.SubprocessError) as e:
        print("regression: run broke: %s" % e, file=sys.stderr)
        return 2
    finally:
        REMOTE.stop()
        if a.keep:
            print("regression: run dirs kept in %s" % work, file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("regression: engine %s, front %s, %.0fs" % (a.engine, a.front, time.monotonic() - t0))
    if res.na:
        print("regression: %d tests not applicable to %s (Bulwark only)" % (len(res.na), a.engine))
    if res.failed:
        print("regression failing: %s" % " ".join(t for t, _ in res.failed))
    print("regression: %d passed, %d failed" % (len(res.passed), len(res.failed)))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
