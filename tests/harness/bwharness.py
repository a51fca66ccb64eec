#!/usr/bin/env python3
"""Test harness: a real Apache 2.4 reverse proxy with a WAF engine, in front
of a loopback backend, in a throw-away run directory.

The CRS runner, the regression runner and the demo all start Apache the same
way through this module, so that a difference between the engines (Bulwark,
Debian's mod_security2, or none) is never a difference of harness.

Python 3 standard library only (Debian 12's python3).

Library use:
    with Backend.start("albedo") as be, Apache(ApacheConfig(...)) as ap:
        ...  # ap.port, ap.error_log

CLI: see `bwharness.py --help` (start / stop / status / configtest).
"""

import argparse
import contextlib
import glob
import http.client
import os
import resource
import pwd
import grp
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

APACHE_BIN = os.environ.get("BW_APACHE", "apache2")
MODULES_DIR = os.environ.get("BW_APACHE_MODULES", "/usr/lib/apache2/modules")
MODSEC2_SO = os.environ.get("BW_MODSEC2_SO", os.path.join(MODULES_DIR, "mod_security2.so"))

ENGINES = ("bulwark", "modsec2", "none")
# How clients reach Apache: "plain" TCP (HTTP/1.1 and, with h2, h2c), or
# "tls" (mod_ssl with a certificate of a CA made for the run; with h2, ALPN
# offers h2 before http/1.1).
FRONTS = ("plain", "tls")

# Modules every run loads; the WAF module comes after them.
BASE_MODULES = [
    ("mpm_event_module", "mod_mpm_event.so"),
    ("authz_core_module", "mod_authz_core.so"),
    ("mime_module", "mod_mime.so"),
    ("env_module", "mod_env.so"),
    ("setenvif_module", "mod_setenvif.so"),
    ("headers_module", "mod_headers.so"),
    ("proxy_module", "mod_proxy.so"),
    ("proxy_http_module", "mod_proxy_http.so"),
    ("unique_id_module", "mod_unique_id.so"),
    # mod_alias: Redirect-free, but regression configs may use Alias/Redirect.
    ("alias_module", "mod_alias.so"),
]


class HarnessError(RuntimeError):
    """A run could not be set up (Apache or the backend would not start...)."""


def log(msg):
    print("harness: " + msg, file=sys.stderr, flush=True)


def tools_bin():
    """Where tools/ftw/build.sh puts go-ftw and albedo."""
    return os.path.join(os.environ.get("BW_TOOLS", os.path.join(REPO, ".tools")), "bin")


def shared_dir():
    """The read-only shared data (CRS rules and tests), beside the repo."""
    return os.path.abspath(os.environ.get("BW_SHARED", os.path.join(REPO, "..", "shared")))


def scan_cache_dir():
    """Where every run keeps Bulwark's compiled scan databases."""
    d = os.path.abspath(os.environ.get("BW_SCAN_CACHE", os.path.join(REPO, "build", "scan-cache")))
    os.makedirs(d, mode=0o700, exist_ok=True)
    return d


def free_port():
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(port, deadline, path="/", host="localhost", proc=None, tls=None):
    """Poll until something answers HTTP on 127.0.0.1:port; return the status.

    Any status counts as ready (a WAF may answer 403). proc, when given, is a
    process whose early death means it will never be ready. tls: an
    ssl.SSLContext to speak HTTPS with."""
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise HarnessError("process exited with status %s before it was ready" % proc.returncode)
        try:
            if tls is not None:
                conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=2, context=tls)
            else:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path, headers={"Host": host, "User-Agent": "bulwark-harness"})
            status = conn.getresponse().status
            conn.close()
            return status
        except (OSError, http.client.HTTPException) as e:
            last = e
            time.sleep(0.1)
    raise HarnessError("nothing answered on 127.0.0.1:%d in time (%s)" % (port, last))


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is as good as gone; /proc tells us.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return False


def cleanup_on_signals():
    """Turn SIGTERM/SIGHUP into SystemExit so `finally:` blocks stop Apache
    and the backend when a runner is killed (CI time-out, Ctrl-C is already
    KeyboardInterrupt)."""
    def handler(signum, _frame):
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


def allow_core_dumps():
    """preexec_fn: let a crashing worker leave a core (CoreDumpDirectory)."""
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    except (ValueError, OSError):
        pass


def kill_group(pgid, sig):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


# --------------------------------------------------------------------------
# Backends

class Backend:
    """A loopback HTTP backend in its own process group.

    kind: "albedo" (CRS's reflector; /reflect for response tests),
    "httpbin" (what CRS 3.3.x's CI used; from a venv, see ensure_httpbin),
    "demo" (tools/demo/backend.py, standard library only) or "echo"
    (tests/backend/echo_digest.py: answers with the SHA-256 of the body it
    got, for byte-for-byte checks)."""

    def __init__(self, kind, port=None, log_dir=None):
        self.kind = kind
        self.port = port or free_port()
        self.log_dir = log_dir
        self.proc = None
        self._logf = None

    @classmethod
    def start(cls, kind, port=None, log_dir=None, timeout=30):
        be = cls(kind, port, log_dir)
        be._start(timeout)
        return be

    def _command(self):
        if self.kind == "albedo":
            exe = os.path.join(tools_bin(), "albedo")
            if not os.access(exe, os.X_OK):
                raise HarnessError("albedo not built: run tools/ftw/build.sh (looked in %s)" % exe)
            return [exe, "--bind", "127.0.0.1", "--port", str(self.port)]
        if self.kind == "httpbin":
            py = ensure_httpbin()
            return [py, "-m", "gunicorn", "--bind", "127.0.0.1:%d" % self.port,
                    "--workers", "2", "--threads", "4", "--log-level", "warning",
                    "httpbin:app"]
        if self.kind == "demo":
            return [sys.executable, os.path.join(REPO, "tools", "demo", "backend.py"),
                    "--port", str(self.port)]
        if self.kind == "echo":
            return [sys.executable, os.path.join(REPO, "tests", "backend", "echo_digest.py"),
                    "--port", str(self.port)]
        raise HarnessError("unknown backend %r" % self.kind)

    def _start(self, timeout):
        cmd = self._command()
        out = subprocess.DEVNULL
        if self.log_dir:
            self._logf = open(os.path.join(self.log_dir, "backend-%s.log" % self.kind), "ab")
            out = self._logf
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                     start_new_session=True)
        try:
            wait_http(self.port, time.monotonic() + timeout, proc=self.proc)
        except HarnessError as e:
            self.stop()
            raise HarnessError("backend %s: %s" % (self.kind, e))

    def stop(self):
        if self.proc is not None:
            kill_group(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                kill_group(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
            # Workers (gunicorn) share the group: make sure none is left.
            kill_group(self.proc.pid, signal.SIGKILL)
            self.proc = None
        if self._logf:
            self._logf.close()
            self._logf = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Redis:
    """redis-server (Debian's) on 127.0.0.1 and a free port, without
    persistence, in its own process group: for the collection store tests
    (tests/shared/run) and benchmarks (tools/perf/shared-bench). start()
    waits until it answers PING; kill() leaves nothing behind (a stopped
    server is continued first). conf_lines: more configuration (ACL `user`
    lines...), written to redis.conf in workdir; password: the default
    user's (requirepass), which PING then sends first."""

    def __init__(self, workdir, conf_lines=(), password=None):
        self.port = free_port()
        self.dir = workdir
        self.proc = None
        self.conf_lines = list(conf_lines)
        self.password = password

    def start(self, timeout=10):
        exe = shutil.which("redis-server")
        if not exe:
            raise HarnessError("redis-server not found (Debian: apt-get install redis-server)")
        conf = os.path.join(self.dir, "redis.conf")
        with open(conf, "w") as f:
            f.write("".join(line + "\n" for line in self.conf_lines))
            if self.password:
                f.write("requirepass %s\n" % self.password)
        self.proc = subprocess.Popen(
            [exe, conf, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, "--daemonize", "no", "--loglevel", "warning"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ping():
                return self
            time.sleep(0.05)
        self.kill()
        raise HarnessError("redis-server did not answer on port %d" % self.port)

    def ping(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                if self.password:
                    pw = self.password.encode()
                    s.sendall(b"*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n" % (len(pw), pw))
                    if not s.recv(16).startswith(b"+OK"):
                        return False
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def signal(self, sig):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def kill(self):
        if self.proc:
            self.signal(signal.SIGCONT)
            self.signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
            self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.kill()


def httpbin_venv():
    return os.path.join(os.environ.get("BW_TOOLS", os.path.join(REPO, ".tools")), "httpbin-venv")


def ensure_httpbin():
    """Python of a venv holding httpbin + gunicorn from PyPI, made on first use."""
    venv = httpbin_venv()
    py = os.path.join(venv, "bin", "python")
    probe = [py, "-c", "import httpbin, gunicorn"]
    if os.access(py, os.X_OK) and subprocess.call(probe, stderr=subprocess.DEVNULL) == 0:
        return py
    log("creating httpbin venv in %s" % venv)
    subprocess.check_call(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
                           "-m", "venv", venv])
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.check_call(pip + ["-r", os.path.join(HERE, "httpbin-requirements.txt")])
    subprocess.check_call(probe)
    return py


# --------------------------------------------------------------------------
# TLS: a CA made for the run, never committed

def make_test_ca(d):
    """A throw-away CA (d/ca.pem) and a certificate for localhost and
    127.0.0.1 signed by it (d/server.pem, d/server.key), made with the
    openssl command. A second call with the files there does nothing."""
    if all(os.path.exists(os.path.join(d, n)) for n in ("ca.pem", "server.pem", "server.key")):
        return
    os.makedirs(d, exist_ok=True)

    def ossl(*args):
        p = subprocess.run(["openssl"] + list(args), cwd=d, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
        if p.returncode != 0:
            raise HarnessError("openssl %s failed: %s" % (args[0], p.stdout.strip()[-500:]))
    # P-256 keys: made in milliseconds, and cheap handshakes under load.
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    ossl("req", "-x509", *ec, "-days", "2", "-subj", "/CN=Bulwark test CA",
         "-keyout", "ca.key", "-out", "ca.pem",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    ossl("req", *ec, "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr")
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                "extendedKeyUsage=serverAuth\n")
    ossl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-CAcreateserial", "-days", "2", "-extfile", "ext.cnf", "-out", "server.pem")
    # Workers read nothing here (the parent loads the key before it drops
    # privileges), but clients started as other users read ca.pem.
    os.chmod(d, 0o755)
    os.chmod(os.path.join(d, "ca.pem"), 0o644)


def client_tls_context(ca_file, alpn=None):
    """An ssl.SSLContext that trusts only the run's CA (verification on)."""
    import ssl
    ctx = ssl.create_default_context(cafile=ca_file)
    if alpn:
        ctx.set_alpn_protocols(list(alpn))
    return ctx


# --------------------------------------------------------------------------
# Apache

def sanitizer_preload():
    """Libraries to LD_PRELOAD for a module built with ASan+UBSan.

    An ASan-instrumented module dlopen()ed by a plain apache2 needs the ASan
    runtime loaded first. BW_ASAN_LIBS (colon-separated) overrides; default is
    gcc's libasan and libubsan (CC may name another gcc)."""
    if os.environ.get("BW_ASAN_LIBS"):
        return os.environ["BW_ASAN_LIBS"]
    cc = os.environ.get("BW_SANITIZER_CC", "gcc")
    libs = []
    for name in ("libasan.so", "libubsan.so"):
        try:
            path = subprocess.check_output([cc, "-print-file-name=" + name], text=True).strip()
        except (OSError, subprocess.CalledProcessError):
            path = ""
        if not os.path.isabs(path) or not os.path.exists(path):
            raise HarnessError("sanitizer run: %s -print-file-name=%s found nothing" % (cc, name))
        libs.append(os.path.realpath(path))
    return ":".join(libs)


class ApacheConfig:
    """What one Apache run looks like.

    engine:       "bulwark" | "modsec2" | "none"
    engine_conf:  engine settings file (Include'd first), or None
    rule_files:   rule files Include'd after it, in order (globs allowed)
    extra_conf:   raw config text placed after the rules inside the server
                  (e.g. <Location> blocks of a regression test)
    backend_port: where ProxyPass sends requests
    port:         Listen port on 127.0.0.1 (None: a free one)
    module_so:    mod_bulwark.so path (bulwark engine)
    sanitize:     preload ASan/UBSan runtimes (also BW_SANITIZE=1)
    front:        "plain" or "tls" (mod_ssl, the run's CA in <run>/tls)
    h2:           load mod_http2: `Protocols h2 h2c http/1.1` (h2 over TLS
                  by ALPN, h2c on plain TCP by prior knowledge or Upgrade)
    """

    def __init__(self, engine, backend_port, engine_conf=None, rule_files=(), extra_conf="",
                 port=None, module_so=None, sanitize=None, log_level=None, run_dir=None,
                 threads=None, front="plain", h2=False):
        if engine not in ENGINES:
            raise HarnessError("engine must be one of %s" % ", ".join(ENGINES))
        if front not in FRONTS:
            raise HarnessError("front must be one of %s" % ", ".join(FRONTS))
        self.front = front
        self.h2 = h2
        self.engine = engine
        self.backend_port = backend_port
        self.engine_conf = engine_conf
        self.rule_files = list(rule_files)
        self.extra_conf = extra_conf
        self.port = port
        self.module_so = module_so or default_module_so()
        if sanitize is None:
            sanitize = os.environ.get("BW_SANITIZE", "") not in ("", "0")
        self.sanitize = sanitize
        self.log_level = log_level or os.environ.get("BW_LOGLEVEL", "notice")
        self.run_dir = run_dir
        self.threads = threads or 25


def default_module_so():
    """mod_bulwark.so: BW_MODULE, else <BW_BUILD_DIR or build/out>/.libs/."""
    if os.environ.get("BW_MODULE"):
        return os.path.abspath(os.environ["BW_MODULE"])
    build = os.environ.get("BW_BUILD_DIR", os.path.join(REPO, "build", "out"))
    for cand in (os.path.join(build, ".libs", "mod_bulwark.so"),
                 os.path.join(build, "apache2", ".libs", "mod_bulwark.so")):
        if os.path.exists(cand):
            return os.path.abspath(cand)
    return os.path.abspath(os.path.join(build, ".libs", "mod_bulwark.so"))


def run_user():
    """User/Group for the workers when Apache starts as root (CI)."""
    for name in (os.environ.get("BW_APACHE_USER"), "www-data", "nobody"):
        if not name:
            continue
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            continue
        return pw.pw_name, grp.getgrgid(pw.pw_gid).gr_name, pw.pw_uid, pw.pw_gid
    raise HarnessError("no unprivileged user for Apache's workers (set BW_APACHE_USER)")


def waf_conf_lines(cfg):
    """The engine part: LoadModule + engine settings + rules."""
    lines = []
    if cfg.engine == "bulwark":
        if not os.path.exists(cfg.module_so):
            raise HarnessError("mod_bulwark.so not found at %s (build the project, or set BW_MODULE)"
                               % cfg.module_so)
        lines.append("LoadModule bulwark_module %s" % cfg.module_so)
    elif cfg.engine == "modsec2":
        if not os.path.exists(MODSEC2_SO):
            raise HarnessError("mod_security2 not found at %s (apt-get install libapache2-mod-security2)"
                               % MODSEC2_SO)
        lines.append("LoadModule security2_module %s" % MODSEC2_SO)
    if cfg.engine == "none":
        return lines
    if cfg.engine_conf:
        lines.append("Include %s" % os.path.abspath(cfg.engine_conf))
    for rf in cfg.rule_files:
        lines.append("Include %s" % os.path.abspath(rf))
    if cfg.engine == "bulwark":
        # Compiled multi-pattern databases are kept for the next Apache this
        # harness starts: compiling CRS takes seconds, loading it milliseconds.
        lines.append("SecScanCacheDir %s" % scan_cache_dir())
    return lines


def front_conf_lines(cfg, run_dir):
    """mod_ssl and mod_http2 for the front the config asks for."""
    lines = []
    if cfg.front == "tls":
        tls = os.path.join(run_dir, "tls")
        lines += ["LoadModule socache_shmcb_module %s" % os.path.join(MODULES_DIR, "mod_socache_shmcb.so"),
                  "LoadModule ssl_module %s" % os.path.join(MODULES_DIR, "mod_ssl.so"),
                  'SSLSessionCache "shmcb:%s/ssl_scache(512000)"' % run_dir,
                  "SSLRandomSeed startup builtin",
                  "SSLEngine on",
                  'SSLCertificateFile "%s/server.pem"' % tls,
                  'SSLCertificateKeyFile "%s/server.key"' % tls,
                  "SSLProtocol -all +TLSv1.2 +TLSv1.3"]
    if cfg.h2:
        lines += ["LoadModule http2_module %s" % os.path.join(MODULES_DIR, "mod_http2.so"),
                  "Protocols h2 h2c http/1.1",
                  # Enough streams for the multiplexing tests, and request
                  # bodies handed on as they arrive (mod_http2's default).
                  "H2MaxSessionStreams 100"]
    return lines


def render_httpd_conf(cfg, run_dir, port):
    user = run_user() if os.geteuid() == 0 else None
    mods = "\n".join("LoadModule %s %s" % (name, os.path.join(MODULES_DIR, so))
                     for name, so in BASE_MODULES)
    mods += "".join("\n" + l for l in front_conf_lines(cfg, run_dir))
    waf = "\n".join(waf_conf_lines(cfg))
    usr = ("User %s\nGroup %s" % (user[0], user[1])) if user else "# not root: workers keep our user"
    return f"""# Generated by tests/harness/bwharness.py for one test run.
ServerRoot "{run_dir}"
DefaultRuntimeDir "{run_dir}"
PidFile "{run_dir}/httpd.pid"
Mutex file:{run_dir} default
ScoreBoardFile "{run_dir}/scoreboard"
CoreDumpDirectory "{run_dir}/cores"
Listen 127.0.0.1:{port}
ServerName localhost
ServerAdmin root@localhost
ServerTokens Full
{mods}
{usr}
StartServers 1
ServerLimit 4
ThreadsPerChild {cfg.threads}
ThreadLimit {cfg.threads}
MaxRequestWorkers {4 * cfg.threads}
MinSpareThreads 1
MaxSpareThreads {4 * cfg.threads}
MaxConnectionsPerChild 0
Timeout 30
KeepAlive On
MaxKeepAliveRequests 1000
KeepAliveTimeout 5
HostnameLookups Off
TypesConfig /etc/mime.types
ErrorLog "{run_dir}/error.log"
LogLevel {cfg.log_level}
LogFormat "%h %l %u %t \\"%r\\" %>s %b \\"%{{User-Agent}}i\\" %D" timed
CustomLog "{run_dir}/access.log" timed
DocumentRoot "{run_dir}/htdocs"
<Directory />
    AllowOverride None
    Require all granted
</Directory>
ProxyRequests Off
ProxyPreserveHost On
ProxyPass / http://127.0.0.1:{cfg.backend_port}/ retry=0 timeout=30
ProxyPassReverse / http://127.0.0.1:{cfg.backend_port}/

# ---- WAF engine ({cfg.engine}) ----
{waf}

# ---- extra configuration ----
{cfg.extra_conf}
"""


class Apache:
    """One Apache started with `apache2 -f CONF -k start`; stop() always cleans up."""

    def __init__(self, cfg, keep=False):
        self.cfg = cfg
        self.keep = keep or os.environ.get("BW_KEEP_RUN", "") not in ("", "0")
        self.port = cfg.port or free_port()
        self.own_dir = cfg.run_dir is None
        self.run_dir = cfg.run_dir or tempfile.mkdtemp(prefix="bw-apache-")
        self.run_dir = os.path.abspath(self.run_dir)
        self.conf = os.path.join(self.run_dir, "httpd.conf")
        self.error_log = os.path.join(self.run_dir, "error.log")
        self.pid = None
        self.started = False
        self.tls_dir = os.path.join(self.run_dir, "tls")
        self.ca_file = os.path.join(self.tls_dir, "ca.pem") if cfg.front == "tls" else None
        self.scheme = "https" if cfg.front == "tls" else "http"

    # -- setup -------------------------------------------------------------
    def prepare(self):
        """Write the run dir and config; returns the config path."""
        for sub in ("htdocs", "modsec/tmp", "modsec/data", "modsec/upload", "asan", "cores"):
            os.makedirs(os.path.join(self.run_dir, sub), exist_ok=True)
        if os.geteuid() == 0:
            # Workers run unprivileged and write SecDataDir/SecTmpDir/upload
            # files and sanitizer reports; the dir must be reachable.
            _, _, uid, gid = run_user()
            os.chmod(self.run_dir, 0o755)
            for sub in ("modsec", "modsec/tmp", "modsec/data", "modsec/upload", "asan", "cores"):
                os.chown(os.path.join(self.run_dir, sub), uid, gid)
        if self.cfg.front == "tls":
            make_test_ca(self.tls_dir)
        with open(self.conf, "w") as f:
            f.write(render_httpd_conf(self.cfg, self.run_dir, self.port))
        return self.conf

    def env(self):
        env = dict(os.environ)
        env.setdefault("LANG", "C")
        if self.cfg.sanitize:
            asan_log = os.path.join(self.run_dir, "asan", "report")
            env["LD_PRELOAD"] = sanitizer_preload()
            env["ASAN_OPTIONS"] = os.environ.get(
                "BW_ASAN_OPTIONS",
                "detect_leaks=0:abort_on_error=0:halt_on_error=1:allocator_may_return_null=1:"
                "log_path=%s" % asan_log)
            env["UBSAN_OPTIONS"] = os.environ.get(
                "BW_UBSAN_OPTIONS",
                "print_stacktrace=1:halt_on_error=0:log_path=%s" % asan_log)
        return env

    def command(self, *args):
        return [APACHE_BIN, "-d", self.run_dir, "-f", self.conf] + list(args)

    def configtest(self):
        """`apache2 -t`; returns (ok, combined output)."""
        self.prepare()
        p = subprocess.run(self.command("-t"), env=self.env(), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=120)
        return p.returncode == 0, p.stdout

    # -- start/stop ----------------------------------------------------------
    def start(self, timeout=None):
        # A first start compiles the rule set's scan databases (CRS v4 at
        # paranoia level 4: about 20 s on 2 cores); later ones read them back
        # from scan_cache_dir().
        timeout = timeout or float(os.environ.get("BW_START_TIMEOUT", "180"))
        self.prepare()
        deadline = time.monotonic() + timeout
        p = subprocess.run(self.command("-k", "start"), env=self.env(), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=timeout, preexec_fn=allow_core_dumps)
        self.started = True
        if p.returncode != 0:
            self.stop()
            raise HarnessError("apache2 -k start failed (status %d):\n%s%s"
                               % (p.returncode, p.stdout, self.error_tail()))
        pidfile = os.path.join(self.run_dir, "httpd.pid")
        while time.monotonic() < deadline and self.pid is None:
            try:
                with open(pidfile) as f:
                    self.pid = int(f.read().strip() or "0") or None
            except (OSError, ValueError):
                time.sleep(0.05)
        if self.pid is None:
            self.stop()
            raise HarnessError("Apache wrote no pid file:\n%s" % self.error_tail())
        try:
            wait_http(self.port, deadline, tls=self.client_tls())
        except HarnessError as e:
            self.stop()
            raise HarnessError("Apache did not answer: %s\n%s" % (e, self.error_tail()))
        return self

    def client_tls(self, alpn=None):
        """An SSLContext trusting the run's CA, or None on a plain front."""
        return client_tls_context(self.ca_file, alpn) if self.ca_file else None

    def error_tail(self, n=30):
        try:
            with open(self.error_log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def stop(self, timeout=20):
        """Stop Apache and everything it started; never leaves a process."""
        if self.started:
            pid = self.pid or self._read_pid()
            subprocess.run(self.command("-k", "stop"), env=self.env(), stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            if pid:
                deadline = time.monotonic() + timeout
                while pid_alive(pid) and time.monotonic() < deadline:
                    time.sleep(0.05)
                # The daemonised parent leads its own process group (setsid);
                # its children share it. Kill whatever is left of that group.
                kill_group(pid, signal.SIGKILL)
            self.started = False
        if self.own_dir and not self.keep:
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def _read_pid(self):
        try:
            with open(os.path.join(self.run_dir, "httpd.pid")) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def crash_backtraces(self, limit=2):
        """Backtraces (gdb) of the core files crashed workers left in
        CoreDumpDirectory; each core is removed once read. Empty when the
        kernel sends cores elsewhere (a core_pattern pipe) or gdb is absent."""
        out = []
        cores = sorted(glob.glob(os.path.join(self.run_dir, "cores", "core*")))
        for path in cores[:limit]:
            if not shutil.which("gdb"):
                out.append("%s: no gdb to read it" % path)
                break
            try:
                p = subprocess.run(["gdb", "-batch", "-nx", "-ex", "bt 40", APACHE_BIN, path],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, errors="replace",
                                   timeout=120)
                bt = [l for l in p.stdout.splitlines() if l.startswith("#")]
                out.append("%s:\n%s" % (path, "\n".join(bt) or p.stdout[-2000:]))
            except subprocess.TimeoutExpired:
                out.append("%s: gdb timed out" % path)
        for path in cores:
            try:
                os.unlink(path)
            except OSError:
                pass
        return out

    def sanitizer_reports(self):
        """Sanitizer findings: report files plus error-log lines."""
        found = []
        for path in sorted(glob.glob(os.path.join(self.run_dir, "asan", "report*"))):
            with open(path, errors="replace") as f:
                text = f.read()
            if text.strip():
                found.append("%s:\n%s" % (path, text))
        found.extend(sanitizer_lines(self.error_log))
        return found

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def engine_dirs(work):
    """<work>/modsec/{tmp,data} for SecTmpDir/SecDataDir/the audit log,
    writable by the workers when Apache starts as root."""
    for sub in ("modsec/tmp", "modsec/data"):
        os.makedirs(os.path.join(work, sub), exist_ok=True)
    if os.geteuid() == 0:
        _, _, uid, gid = run_user()
        os.chmod(work, 0o755)
        for sub in ("modsec", "modsec/tmp", "modsec/data"):
            os.chown(os.path.join(work, sub), uid, gid)


def ftw_config_text(error_log, ap):
    """go-ftw's configuration for tests sent to Apache `ap`: the log marker
    and the address; on a TLS front `protocol: https` (go-ftw then verifies
    the certificate against SSL_CERT_FILE, see ftw_env)."""
    text = ("logfile: '%s'\nlogmarkerheadername: X-CRS-Test\n"
            "testoverride:\n  input:\n    dest_addr: 127.0.0.1\n    port: %d\n"
            % (error_log, ap.port))
    if ap.cfg.front == "tls":
        text += "    protocol: https\n"
    return text


def ftw_env(ap):
    """go-ftw's environment: on a TLS front Go's verifier trusts the run's CA
    (SSL_CERT_FILE), so the certificate is checked, not skipped."""
    env = dict(os.environ)
    if ap.ca_file:
        env["SSL_CERT_FILE"] = ap.ca_file
    return env


SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer",
                     "SUMMARY: AddressSanitizer", "SUMMARY: UndefinedBehaviorSanitizer")


def sanitizer_lines(path):
    out = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if any(m in line for m in SANITIZER_MARKERS):
                    out.append(line.rstrip("\n"))
    except OSError:
        pass
    return out


# --------------------------------------------------------------------------
# CLI: start a detached proxy (the demo uses this), stop it, test a config.

STATE = "harness.state"


def _write_state(run_dir, **kv):
    with open(os.path.join(run_dir, STATE), "w") as f:
        for k, v in kv.items():
            f.write("%s=%s\n" % (k, v))


def _read_state(run_dir):
    state = {}
    with open(os.path.join(run_dir, STATE)) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            state[k] = v
    return state


def cmd_start(a):
    os.makedirs(a.run_dir, exist_ok=True)
    run_dir = os.path.abspath(a.run_dir)
    extra = ""
    for path in a.extra_conf or ():
        with open(path) as f:
            extra += f.read() + "\n"
    be = Backend.start(a.backend, port=a.backend_port, log_dir=run_dir)
    try:
        cfg = ApacheConfig(a.engine, be.port, engine_conf=a.engine_conf, rule_files=a.rules,
                           extra_conf=extra, port=a.port, module_so=a.module, sanitize=a.sanitize,
                           log_level=a.log_level, run_dir=run_dir, front=a.front, h2=a.h2)
        ap = Apache(cfg).start()
    except BaseException:
        be.stop()
        raise
    # Detach: the backend lives in its own session already; just forget it.
    _write_state(run_dir, backend_pid=be.proc.pid, backend_port=be.port,
                 apache_pid=ap.pid, port=ap.port, conf=ap.conf, engine=a.engine)
    print("started: %s://127.0.0.1:%d/ (engine %s, backend %s on 127.0.0.1:%d%s)"
          % (ap.scheme, ap.port, a.engine, a.backend, be.port,
             ", HTTP/2" if a.h2 else ""))
    if ap.ca_file:
        print("CA: %s" % ap.ca_file)
    print("error log: %s" % ap.error_log)
    return 0


def cmd_stop(a):
    run_dir = os.path.abspath(a.run_dir)
    try:
        st = _read_state(run_dir)
    except OSError:
        log("nothing to stop in %s" % run_dir)
        return 0
    cfg_path = st.get("conf")
    pid = int(st.get("apache_pid") or 0)
    if cfg_path and os.path.exists(cfg_path):
        subprocess.run([APACHE_BIN, "-d", run_dir, "-f", cfg_path, "-k", "stop"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=60)
    deadline = time.monotonic() + 20
    while pid and pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid:
        kill_group(pid, signal.SIGKILL)
    bpid = int(st.get("backend_pid") or 0)
    if bpid:
        kill_group(bpid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while pid_alive(bpid) and time.monotonic() < deadline:
            time.sleep(0.05)
        kill_group(bpid, signal.SIGKILL)
    os.unlink(os.path.join(run_dir, STATE))
    print("stopped (logs kept in %s)" % run_dir)
    return 0


def cmd_status(a):
    try:
        st = _read_state(os.path.abspath(a.run_dir))
    except OSError:
        print("not running")
        return 1
    pid = int(st.get("apache_pid") or 0)
    if pid and pid_alive(pid):
        print("running: http://127.0.0.1:%s/ (engine %s, pid %d)" % (st["port"], st["engine"], pid))
        return 0
    print("not running (stale state in %s)" % a.run_dir)
    return 1


def cmd_configtest(a):
    cfg = ApacheConfig(a.engine, a.backend_port or 9, engine_conf=a.engine_conf, rule_files=a.rules,
                       module_so=a.module, sanitize=a.sanitize, log_level=a.log_level)
    ap = Apache(cfg)
    try:
        ok, out = ap.configtest()
    finally:
        ap.stop()
    sys.stdout.write(out)
    return 0 if ok else 1


def main(argv=None):
    p = argparse.ArgumentParser(prog="bwharness.py",
                                description="Start/stop Apache + a WAF engine as a loopback reverse proxy.")
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp):
        sp.add_argument("--engine", choices=ENGINES, default="bulwark")
        sp.add_argument("--engine-conf", help="engine settings file")
        sp.add_argument("--rules", nargs="*", default=[], help="rule files (Include'd in order)")
        sp.add_argument("--module", help="path of mod_bulwark.so (default: build/out/.libs)")
        sp.add_argument("--sanitize", action="store_true", default=None,
                        help="LD_PRELOAD the ASan/UBSan runtimes (also BW_SANITIZE=1)")
        sp.add_argument("--log-level", help="Apache LogLevel (default notice)")
        sp.add_argument("--backend-port", type=int)

    sp = sub.add_parser("start", help="start backend + Apache and detach")
    common(sp)
    sp.add_argument("--run-dir", required=True)
    sp.add_argument("--port", type=int, help="Listen port on 127.0.0.1 (default: a free one)")
    sp.add_argument("--backend", choices=("albedo", "httpbin", "demo", "echo"), default="albedo")
    sp.add_argument("--extra-conf", nargs="*", help="files appended to the server config")
    sp.add_argument("--front", choices=FRONTS, default="plain",
                    help="plain TCP or TLS (mod_ssl, a CA made in RUN_DIR/tls)")
    sp.add_argument("--h2", action="store_true", help="mod_http2: h2 (TLS) and h2c (plain)")
    sp.set_defaults(func=cmd_start)

    sp = sub.add_parser("stop", help="stop what `start` started in --run-dir")
    sp.add_argument("--run-dir", required=True)
    sp.set_defaults(func=cmd_stop)

    sp = sub.add_parser("status", help="tell whether --run-dir's Apache runs")
    sp.add_argument("--run-dir", required=True)
    sp.set_defaults(func=cmd_status)

    sp = sub.add_parser("configtest", help="apache2 -t with this engine and rules")
    common(sp)
    sp.set_defaults(func=cmd_configtest)

    a = p.parse_args(argv)
    cleanup_on_signals()
    try:
        return a.func(a)
    except HarnessError as e:
        log(str(e))
        return 2


if __name__ == "__main__":
    sys.exit(main())
