#!/usr/bin/env python3
"""Where the OWASP CRS data for Bulwark's tests and tools is: one place that
every consumer asks (tests/run-all, the CRS runner, the unit tests through
the environment, the detection benchmark, the fuzzers).

CRS is data of the CRS project and never part of this repository. It is
looked for, in this order:

  1. BULWARK_CRS_DIR: a directory laid out like ../shared/crs (below);
  2. ../shared/crs beside the clone (BW_SHARED names another shared dir);
  3. a cache from an earlier run: ${BW_TOOLS:-<repo>/.tools}/crs;
  4. a package registry: CRS v4 rules and regression tests from the Go module
     github.com/corazawaf/coraza-coreruleset/v4 (pinned by
     tools/crs/export/go.mod and go.sum, written into the cache by
     tools/crs/export), CRS 3.3.4 rules from Debian's modsecurity-crs.

The layout (what ../shared/crs holds):

  v3.3.4/crs-setup.conf.example   v3.3.4/tests-v2/      (go-ftw v2 schema)
  v4.X.Y/rules/  v4.X.Y/crs-setup.conf.example
  v4.X.Y/tests/regression/tests/  v4.X.Y/tests/regression/httpd-overrides.yaml

CRS 3.3.4's rules always come from Debian's package (the same files as the
release). Its regression tests exist only in CRS's own repository: without
them the 3.3.4 suite cannot run, and `v3_tests` is None with the reason in
`v3_missing`. Of several v4.X.Y directories the newest is used.

CLI (stdlib only):
  crsdata.py [--no-fetch] --shell   `export BW_CRS_...=...` lines for a shell
  crsdata.py [--no-fetch]           what was found, for a person
Exit 1 with one message naming BULWARK_CRS_DIR when no CRS v4 data is found
(and, without --no-fetch, the registry could not be reached).

The exported variables, which a consumer started by tests/run-all reads
instead of searching again:
  BW_CRS_SOURCE      BULWARK_CRS_DIR | ../shared/crs | cache | registry
  BW_CRS_ROOT        the directory laid out as above
  BW_CRS_RULES       CRS 3.3.4 rules (Debian's)
  BW_CRS_V3_SETUP    CRS 3.3.4 crs-setup file
  BW_CRS_V3_TESTS    CRS 3.3.4 tests-v2, empty when there are none
  BW_CRS_V3_MISSING  why they are missing (empty when present)
  BW_CRS_V4_VERSION  e.g. 4.28.0
  BW_CRS_V4_DIR      BW_CRS_ROOT/v4.X.Y
"""

import argparse
import os
import re
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

DEBIAN_V3_RULES = "/usr/share/modsecurity-crs/rules"
DEBIAN_V3_SETUP = "/etc/modsecurity/crs/crs-setup.conf"
V3 = "3.3.4"
ENV_DIR = "BULWARK_CRS_DIR"

V4_DIR_RE = re.compile(r"^v(4)\.(\d+)\.(\d+)$")


class NotFound(Exception):
    """No usable CRS v4 data anywhere (the message says what to do)."""


class CrsData:
    """Paths of one resolved CRS data set (see the module docstring)."""

    def __init__(self, source, root, v4_version, v3_tests, v3_missing, v3_setup):
        self.source = source
        self.root = root
        self.v4_version = v4_version
        self.v4_dir = os.path.join(root, "v" + v4_version)
        self.v3_rules = os.environ.get("BW_CRS_RULES") or DEBIAN_V3_RULES
        self.v3_setup = v3_setup
        self.v3_tests = v3_tests
        self.v3_missing = v3_missing

    # CRS v4 pieces, in the layout every source shares.
    @property
    def v4_rules(self):
        return os.path.join(self.v4_dir, "rules")

    @property
    def v4_setup(self):
        return os.path.join(self.v4_dir, "crs-setup.conf.example")

    @property
    def v4_tests(self):
        return os.path.join(self.v4_dir, "tests", "regression", "tests")

    @property
    def v4_overrides(self):
        """CRS's go-ftw overrides for Apache + ModSecurity 2, or None: the
        registry's module does not carry this file."""
        path = os.path.join(self.v4_dir, "tests", "regression", "httpd-overrides.yaml")
        return path if os.path.isfile(path) else None

    def env(self):
        return {
            "BW_CRS_SOURCE": self.source,
            "BW_CRS_ROOT": self.root,
            "BW_CRS_RULES": self.v3_rules,
            "BW_CRS_V3_SETUP": self.v3_setup or "",
            "BW_CRS_V3_TESTS": self.v3_tests or "",
            "BW_CRS_V3_MISSING": self.v3_missing or "",
            "BW_CRS_V4_VERSION": self.v4_version,
            "BW_CRS_V4_DIR": self.v4_dir,
        }

    def describe(self):
        lines = ["CRS data from %s: %s" % (self.source, self.root),
                 "  CRS v%s: rules, setup and tests in %s%s"
                 % (self.v4_version, self.v4_dir,
                    "" if self.v4_overrides else " (no httpd-overrides.yaml)"),
                 "  CRS %s: rules %s%s" % (V3, self.v3_rules,
                                           "" if os.path.isdir(self.v3_rules) else " (missing)")]
        if self.v3_tests:
            lines.append("  CRS %s: tests %s" % (V3, self.v3_tests))
        else:
            lines.append("  CRS %s: no regression tests: %s" % (V3, self.v3_missing))
        return "\n".join(lines)


def newest_v4(root):
    """The newest "4.X.Y" with rules and tests under root, or None."""
    found = []
    try:
        names = os.listdir(root)
    except OSError:
        return None
    for name in names:
        m = V4_DIR_RE.match(name)
        if not m:
            continue
        d = os.path.join(root, name)
        if (os.path.isdir(os.path.join(d, "rules"))
                and os.path.isdir(os.path.join(d, "tests", "regression", "tests"))
                and os.path.isfile(os.path.join(d, "crs-setup.conf.example"))):
            found.append(tuple(int(x) for x in m.groups()))
    if not found:
        return None
    return "%d.%d.%d" % max(found)


def from_root(source, root):
    """CrsData for a directory laid out like ../shared/crs, or None."""
    root = os.path.abspath(root)
    v4 = newest_v4(root)
    if v4 is None:
        return None
    v3dir = os.path.join(root, "v" + V3)
    tests = os.path.join(v3dir, "tests-v2")
    setup = os.path.join(v3dir, "crs-setup.conf.example")
    if not os.path.isfile(setup):
        setup = DEBIAN_V3_SETUP
    if os.path.isdir(tests):
        return CrsData(source, root, v4, tests, None, setup)
    why = ("CRS %s's regression tests are not in %s (they exist only in CRS's own "
           "repository, as tests-v2/ in ../shared/crs/v%s; set %s to a directory that has them)"
           % (V3, v3dir, V3, ENV_DIR))
    return CrsData(source, root, v4, None, why, setup)


def shared_crs():
    shared = os.environ.get("BW_SHARED", os.path.join(REPO, "..", "shared"))
    return os.path.abspath(os.path.join(shared, "crs"))


def cache_dir():
    tools = os.environ.get("BW_TOOLS", os.path.join(REPO, ".tools"))
    return os.path.abspath(os.path.join(tools, "crs"))


def fetch_from_registry(cache):
    """Build tools/crs/export and let it write the module's CRS into cache.
    Returns None on success, else a short reason."""
    build = subprocess.run([os.path.join(REPO, "tools", "ftw", "build.sh"), "crs-export"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace")
    if build.returncode != 0:
        return "building tools/crs/export from the Go module proxy failed: %s" % last_line(build.stdout)
    tools = os.environ.get("BW_TOOLS", os.path.join(REPO, ".tools"))
    exe = os.path.join(tools, "bin", "crs-export")
    run = subprocess.run([exe, cache], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, errors="replace")
    if run.returncode != 0:
        return "crs-export failed: %s" % last_line(run.stderr)
    return None


def last_line(text):
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return lines[-1] if lines else "(no output)"


def from_env():
    """What tests/run-all exported, when it did (no search again)."""
    if not os.environ.get("BW_CRS_V4_DIR") or not os.environ.get("BW_CRS_ROOT"):
        return None
    v4dir = os.environ["BW_CRS_V4_DIR"]
    version = os.environ.get("BW_CRS_V4_VERSION") or os.path.basename(v4dir).lstrip("v")
    d = CrsData(os.environ.get("BW_CRS_SOURCE", "environment"), os.environ["BW_CRS_ROOT"],
                version, os.environ.get("BW_CRS_V3_TESTS") or None,
                os.environ.get("BW_CRS_V3_MISSING") or None,
                os.environ.get("BW_CRS_V3_SETUP") or DEBIAN_V3_SETUP)
    d.v4_dir = v4dir
    return d


def locate(fetch=True, log=None):
    """CrsData from the first source that has CRS v4 data; raises NotFound."""
    say = log or (lambda msg: print("crsdata: " + msg, file=sys.stderr))
    d = from_env()
    if d is not None:
        return d
    tried = []
    explicit = os.environ.get(ENV_DIR)
    if explicit:
        d = from_root(ENV_DIR, explicit)
        if d is None:
            raise NotFound("%s=%s has no v4.X.Y/ with rules/, crs-setup.conf.example and "
                           "tests/regression/tests/ (a directory laid out like ../shared/crs)"
                           % (ENV_DIR, explicit))
        return d
    for source, root in (("../shared/crs", shared_crs()), ("cache", cache_dir())):
        d = from_root(source, root)
        if d is not None:
            return d
        tried.append(root)
    reason = "not fetched (--no-fetch)"
    if fetch:
        say("no CRS data in %s: fetching CRS v4 from the Go module proxy "
            "(github.com/corazawaf/coraza-coreruleset/v4, pinned by tools/crs/export/go.sum)"
            % " or ".join(tried))
        reason = fetch_from_registry(cache_dir())
        if reason is None:
            d = from_root("registry", cache_dir())
            if d is not None:
                return d
            reason = "the export left no usable data in %s" % cache_dir()
    raise NotFound("no CRS data: set %s to a directory laid out like ../shared/crs "
                   "(v4.X.Y/rules, v4.X.Y/tests/regression/tests, optionally v3.3.4/tests-v2), "
                   "or put shared/ beside the clone; looked in %s; registry: %s"
                   % (ENV_DIR, " and ".join(tried), reason))


def main(argv=None):
    p = argparse.ArgumentParser(description="Find the CRS data for Bulwark's tests.")
    p.add_argument("--shell", action="store_true", help="print export lines for a shell")
    p.add_argument("--no-fetch", action="store_true", help="do not ask a package registry")
    a = p.parse_args(argv)
    try:
        d = locate(fetch=not a.no_fetch)
    except NotFound as e:
        print("crsdata: %s" % e, file=sys.stderr)
        return 1
    if a.shell:
        for k, v in d.env().items():
            print("export %s=%s" % (k, shlex.quote(v)))
    else:
        print(d.describe())
    return 0


if __name__ == "__main__":
    sys.exit(main())
