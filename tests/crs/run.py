#!/usr/bin/env python3
"""Run an OWASP CRS regression suite with go-ftw against Apache + a WAF engine.

Apache runs as a reverse proxy (tests/harness) with the engine settings CRS's
own CI uses (written here, see engine_conf()); go-ftw sends each test and reads
the verdict from the error log between two marker requests (rule 999999).
The CRS data comes from tools/crs/crsdata.py (BULWARK_CRS_DIR, ../shared/crs,
a cache, or a package registry):

  --crs v3  Debian's CRS 3.3.4 rules, the 3.3.4 setup + tests-v2; without
            those tests the suite is not run (exit 4, and the closing line
            says why), never counted as passed
  --crs v4  the newest CRS v4 found: rules, setup, tests (+ CRS's
            httpd-overrides.yaml where the data has it)

Closing line: `crs-v4: N passed, M failed[, K skipped]`, then the failing ids.
Exit status: 0 whatever the counts; 1 when the floor (--floor N, or
--floor-auto: mod_security2's count for that CRS version, see FLOORS) is not
reached; 2 when the run itself broke (Apache would not start, go-ftw
missing...); 3 when --sanitize found a sanitizer report; 4 when the suite
could not run for want of its data.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
sys.path.insert(0, os.path.join(REPO, "tools", "crs"))
import bwharness as hz  # noqa: E402
import crsdata  # noqa: E402

RECOMMENDED = os.path.join(REPO, "rules", "bulwark.conf-recommended")
UNICODE_MAP = os.environ.get("BW_UNICODE_MAP", os.path.join(REPO, "rules", "unicode.mapping"))
MARKER = os.path.join(HERE, "marker.conf")

# The floors: mod_security2 2.9.7's passes on this harness, per CRS version
# (tests/crs/REPORT.md says how each was measured). For a version not listed
# here --floor-auto measures mod_security2 on the spot when it is installed.
FLOORS = {
    "3.3.4": (2395, "mod_security2 2.9.7 on CRS 3.3.4 tests-v2 (tests/crs/REPORT.md)"),
    "4.28.0": (5003, "mod_security2 2.9.7 on CRS v4.28.0 (tests/crs/REPORT.md)"),
    "4.25.0": (4672, "mod_security2 2.9.7 on CRS v4.25.0 from the Go module, which lacks "
                     "CRS's httpd-overrides.yaml (tests/crs/REPORT.md)"),
}

MAX_ATTEMPTS = 4


class Broken(Exception):
    """The run could not be done at all (exit 2)."""


class NotRun(Exception):
    """The suite's data is not there (exit 4): said, never counted as passed."""


def suite_paths(crs, data):
    """Rules dir, setup file, tests dir, go-ftw overrides, backend, version."""
    if crs == "v3":
        if not data.v3_tests:
            raise NotRun(data.v3_missing)
        return dict(rules=data.v3_rules, setup=data.v3_setup, tests=data.v3_tests,
                    ftw_overrides=None, backend="httpbin", version=crsdata.V3)
    return dict(rules=data.v4_rules, setup=data.v4_setup, tests=data.v4_tests,
                ftw_overrides=data.v4_overrides, backend="albedo", version=data.v4_version)


def disabled_tests(tests_dir):
    """Test ids (RULE-TEST) of files CRS disables with `meta.enabled: false`.

    go-ftw v2 ignores that flag; we exclude these tests so they count as
    skipped. A small line parser is enough for the files' regular layout."""
    out = []
    for root, _, files in os.walk(tests_dir):
        for name in sorted(files):
            if not name.endswith((".yaml", ".yml")):
                continue
            with open(os.path.join(root, name), errors="replace") as f:
                text = f.read()
            meta = re.search(r"^meta:\n((?:[ \t]+.*\n|\n)*)", text, re.M)
            if not meta or not re.search(r"^[ \t]+enabled:[ \t]*false\b", meta.group(1), re.M):
                continue
            rule = re.search(r"^rule_id:[ \t]*(\d+)", text, re.M)
            if not rule:
                continue
            for tid in re.findall(r"^[ \t]*-?[ \t]*test_id:[ \t]*(\d+)", text, re.M):
                out.append("%s-%s" % (rule.group(1), tid))
    return sorted(set(out))


def retry_once_tests(tests_dir):
    """Test ids whose output says `retry_once: true`.

    go-ftw v2.5.0 aborts the whole run ("Error: retry-once", no summary) when
    such a test fails twice. The runner runs them apart, one go-ftw call each,
    so one such failure costs that test and not the run."""
    out = []
    for root, _, files in os.walk(tests_dir):
        for name in sorted(files):
            if not name.endswith((".yaml", ".yml")):
                continue
            rule, test = None, None
            with open(os.path.join(root, name), errors="replace") as f:
                for line in f:
                    m = re.match(r"^rule_id:[ \t]*(\d+)", line)
                    if m:
                        rule = m.group(1)
                    m = re.match(r"^[ \t]*-?[ \t]*test_id:[ \t]*(\d+)", line)
                    if m:
                        test = m.group(1)
                    if re.match(r"^[ \t]*retry_once:[ \t]*true\b", line) and rule and test:
                        out.append("%s-%s" % (rule, test))
    return sorted(set(out))


# The engine settings of CRS's CI container (owasp/modsecurity-crs:apache with
# the environment of CRS's tests/docker-compose.yml: DetectionOnly, response
# bodies of these MIME types, Native Serial audit log, the image's defaults for
# the rest), as changes to Bulwark's own recommended file, which already has
# the rest of them and the base rules 200000-200007 (body processors,
# REQBODY_ERROR, multipart strictness, PCRE limits).
def ci_settings(work):
    return [
        ("SecRuleEngine", "DetectionOnly"),
        ("SecResponseBodyMimeType", "text/plain text/html text/xml application/json"),
        ("SecResponseBodyLimit", "1048576"),
        ("SecUnicodeMapFile", "%s 20127" % UNICODE_MAP),
        ("SecTmpDir", "%s/modsec/tmp" % work),
        ("SecDataDir", "%s/modsec/data" % work),
        ("SecUploadDir", "%s/modsec/upload" % work),
        ("SecUploadFileMode", "0600"),
        ("SecUploadKeepFiles", "RelevantOnly"),
        ("SecTmpSaveUploadedFiles", "On"),
        ("SecDisableBackendCompression", "On"),
        ("SecServerSignature", "Apache"),
        ("SecAuditLogFormat", "Native"),
        ("SecAuditLog", "%s/modsec_audit.log" % work),
        ("SecDebugLog", "/dev/null"),
        ("SecDebugLogLevel", "0"),
    ]


# What CRS's CI appends to crs-setup (docker-compose.yml: paranoia level 4,
# the image's anomaly thresholds 5/4, v4's argument and file size limits, and
# UTF-8 validation, which v4 releases before 4.28 leave off by default and
# their 920250 tests expect on; 4.28.0 turns it on itself, rule 901169).
SETUP_OVERRIDES = {
    "v3": [("900000", "tx.paranoia_level=4"),
           ("900110", "tx.inbound_anomaly_score_threshold=5,setvar:tx.outbound_anomaly_score_threshold=4"),
           ("900350", "tx.combined_file_sizes=65535")],
    "v4": [("900000", "tx.blocking_paranoia_level=4"),
           ("900110", "tx.inbound_anomaly_score_threshold=5,setvar:tx.outbound_anomaly_score_threshold=4"),
           ("900320", "tx.arg_length=400"),
           ("900330", "tx.total_arg_length=6400"),
           ("900340", "tx.max_file_size=64100"),
           ("900350", "tx.combined_file_sizes=65535"),
           ("900950", "tx.crs_validate_utf8_encoding=1")],
}


def engine_conf(work):
    """rules/bulwark.conf-recommended with the CI's values: a directive the
    file sets is replaced in place, the others are appended."""
    with open(RECOMMENDED) as f:
        lines = f.read().split("\n")
    todo = dict(ci_settings(work))
    for i, line in enumerate(lines):
        words = line.split(None, 1)
        if words and words[0] in todo and not line.rstrip().endswith("\\"):
            lines[i] = "%s %s" % (words[0], todo.pop(words[0]))
    lines.append("# CRS CI settings the recommended file does not set")
    lines += ["%s %s" % (k, v) for k, v in ci_settings(work) if k in todo]
    return "# Generated by tests/crs/run.py from %s\n%s\n" % (RECOMMENDED, "\n".join(lines))


def write_confs(work, paths, crs):
    """Engine settings, CRS setup (+CI overrides), marker rule: in `work`."""
    engine = os.environ.get("WAF_ENGINE_CONF")
    if not engine:
        engine = os.path.join(work, "engine.conf")
        with open(engine, "w") as f:
            f.write(engine_conf(work))
    for sub in ("modsec/tmp", "modsec/data", "modsec/upload"):
        os.makedirs(os.path.join(work, sub), exist_ok=True)
    setup = os.path.join(work, "crs-setup.conf")
    with open(setup, "w") as out, open(paths["setup"]) as f:
        out.write(f.read().rstrip("\n") + "\n\n# CRS CI settings (tests/crs/run.py)\n")
        for rid, setvar in SETUP_OVERRIDES[crs]:
            out.write('SecAction "id:%s,phase:1,nolog,pass,t:none,setvar:%s"\n' % (rid, setvar))
    rules = sorted(os.path.join(paths["rules"], n) for n in os.listdir(paths["rules"])
                   if n.endswith(".conf"))
    if not rules:
        raise Broken("no rule files in %s" % paths["rules"])
    return engine, [MARKER, setup] + rules


def chown_for_workers(work):
    """SecDataDir/SecTmpDir/SecUploadDir must be writable by Apache's workers."""
    if os.geteuid() != 0:
        return
    _, _, uid, gid = hz.run_user()
    os.chmod(work, 0o755)
    for root, dirs, _ in os.walk(os.path.join(work, "modsec")):
        os.chown(root, uid, gid)


def ftw_config(work, ap):
    path = os.path.join(work, "ftw.yaml")
    with open(path, "w") as f:
        f.write(hz.ftw_config_text(ap.error_log, ap))
    return path


# go-ftw's environment for the Apache of this run (hz.ftw_env: the TLS CA).
FTW_ENV = dict(os.environ)


def run_ftw(ftw, cfg_path, paths, exclude, include, work, attempt, timeout):
    """One go-ftw run; returns (stats or None, aborted_test or None, stderr)."""
    cmd = [ftw, "run", "--config", cfg_path, "-d", paths["tests"], "-o", "json",
           "--read-timeout", "10s"]
    if paths["ftw_overrides"]:
        cmd += ["--overrides", paths["ftw_overrides"]]
    if include:
        cmd += ["--include", include]
    elif exclude:
        cmd += ["--exclude", "^(?:%s)$" % "|".join(re.escape(t) for t in exclude)]
    out_path = os.path.join(work, "ftw-%s.json" % attempt)
    err_path = os.path.join(work, "ftw-%s.err" % attempt)
    with open(out_path, "w") as out, open(err_path, "w") as err:
        try:
            rc = subprocess.call(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                 timeout=timeout, cwd=work, env=FTW_ENV)
        except subprocess.TimeoutExpired:
            raise Broken("go-ftw did not finish within %ds" % timeout)
    with open(err_path, errors="replace") as f:
        stderr = f.read()
    with open(out_path, errors="replace") as f:
        stdout = f.read()
    if "retry-once" in stderr:
        retried = re.findall(r"Retrying test once: (\d+-\d+)", stderr)
        return None, (retried[-1] if retried else "?"), stderr
    stats = None
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{") and '"success"' in line:
            stats = json.loads(line)
    if stats is None:
        raise Broken("go-ftw (status %d) printed no summary:\n%s\n%s"
                     % (rc, stdout[-2000:], stderr[-4000:]))
    return stats, None, stderr


def run_suite(a, paths, work, ftw):
    """Start backend + Apache, run go-ftw; returns (stats, disabled, gave_up, sanitizer)."""
    engine_conf, rule_files = write_confs(work, paths, a.crs)
    chown_for_workers(work)
    disabled = disabled_tests(paths["tests"])
    backend_kind = a.backend or paths["backend"]
    with hz.Backend.start(backend_kind, log_dir=work) as be:
        cfg = hz.ApacheConfig(a.engine, be.port, engine_conf=engine_conf, rule_files=rule_files,
                              module_so=a.module, sanitize=a.sanitize, port=a.port,
                              run_dir=os.path.join(work, "apache"), front=a.front, h2=a.front == "tls")
        ap = hz.Apache(cfg)
        try:
            ap.start()
            cfg_path = ftw_config(work, ap)
            FTW_ENV.clear()
            FTW_ENV.update(hz.ftw_env(ap))
            if a.include:
                stats, gave_up = run_with_reruns(ftw, cfg_path, paths, [], a.include, work, a.timeout)
                if stats is None:
                    raise Broken("go-ftw kept aborting with retry-once (last on %s)" % gave_up[0])
            else:
                stats, gave_up = run_two_passes(ftw, cfg_path, paths, disabled, work, a.timeout)
        finally:
            ap.stop()
    # After the stop: reports of workers that died at shutdown count too.
    return stats, disabled, gave_up, ap.sanitizer_reports() if a.sanitize else []


def run_with_reruns(ftw, cfg_path, paths, exclude, include, work, timeout, tag="all",
                    attempts=MAX_ATTEMPTS):
    """One go-ftw run, rerun (at most `attempts` times) while it aborts
    with retry-once. Returns (stats, []) or (None, [aborted test])."""
    aborted = None
    for attempt in range(1, attempts + 1):
        stats, aborted, _ = run_ftw(ftw, cfg_path, paths, exclude, include, work,
                                    "%s-%d" % (tag, attempt), timeout)
        if stats is not None:
            return stats, []
        hz.log("go-ftw aborted with retry-once (test %s failed twice); rerunning" % aborted)
    return None, [aborted]


def run_two_passes(ftw, cfg_path, paths, disabled, work, timeout):
    """All tests but the retry_once ones in one go-ftw run, then each
    retry_once test alone (rerun while it aborts, bounded): an abort then
    means that test failed, and the counts of the others are kept."""
    apart = [t for t in retry_once_tests(paths["tests"]) if t not in disabled]
    stats, _ = run_with_reruns(ftw, cfg_path, paths, disabled + apart, None, work, timeout)
    if stats is None:
        raise Broken("go-ftw kept aborting with retry-once")
    stats["skipped"] = [t for t in stats.get("skipped") or [] if t not in apart]
    gave_up = []
    for t in apart:
        # go-ftw itself already tries such a test twice per call.
        one, _ = run_with_reruns(ftw, cfg_path, paths, [], "^%s$" % re.escape(t), work,
                                 timeout, tag=t, attempts=2)
        if one is None:
            gave_up.append(t)
            continue
        for key in ("success", "failed", "forced-pass", "forced-fail", "ignored"):
            if t in (one.get(key) or []):
                stats.setdefault(key, []).append(t)
        for k, v in (one.get("triggered-rules") or {}).items():
            if k == t:
                stats.setdefault("triggered-rules", {})[k] = v
    rerun_failed(ftw, cfg_path, paths, work, timeout, stats)
    return stats, gave_up


RERUN_MAX = 10


def rerun_failed(ftw, cfg_path, paths, work, timeout, stats):
    """Run each failed test once more, alone. A test that passes then failed
    only through timing (a phase-5 log line landing after go-ftw's end
    marker, see tests/crs/REPORT.md): it counts as passed and is listed as
    flaky in the output and the report, never hidden. More than RERUN_MAX
    failures are a real regression: no rerun."""
    failed = list(stats.get("failed") or [])
    if not failed or len(failed) > RERUN_MAX:
        return
    for t in failed:
        one, _ = run_with_reruns(ftw, cfg_path, paths, [], "^%s$" % re.escape(t), work,
                                 timeout, tag="rerun-" + t, attempts=1)
        if one and t in (one.get("success") or []):
            stats["failed"].remove(t)
            stats.setdefault("success", []).append(t)
            stats.setdefault("flaky", []).append(t)


def summarize(a, stats, disabled, gave_up, elapsed, sanit):
    passed = sorted(stats.get("success") or []) + sorted(stats.get("forced-pass") or [])
    failed = sorted(set((stats.get("failed") or []) + (stats.get("forced-fail") or []) + gave_up))
    skipped = sorted(set(stats.get("skipped") or []) - set(gave_up) - set(failed))
    ignored = sorted(stats.get("ignored") or [])
    label = "crs-%s" % a.crs
    line = "%s: %d passed, %d failed" % (label, len(passed), len(failed))
    if skipped:
        line += ", %d skipped" % len(skipped)
    if a.report:
        write_report(a, stats, passed, failed, skipped, ignored, gave_up, elapsed, sanit, line)
    if failed:
        print("%s failing: %s" % (label, " ".join(failed)))
    if stats.get("flaky"):
        print("%s flaky (failed, then passed when rerun alone): %s" % (label, " ".join(stats["flaky"])))
    if ignored:
        print("%s ignored: %s" % (label, " ".join(ignored)))
    print("%s: run took %.0fs (engine %s)" % (label, elapsed, a.engine))
    print(line)
    return len(passed), len(failed)


def write_report(a, stats, passed, failed, skipped, ignored, gave_up, elapsed, sanit, line):
    trig = stats.get("triggered-rules") or {}
    os.makedirs(os.path.dirname(os.path.abspath(a.report)), exist_ok=True)
    with open(a.report, "w") as f:
        f.write("# CRS %s regression suite: engine `%s`\n\n" % (getattr(a, "version", a.crs), a.engine))
        f.write("`%s` (run took %.0f s, %s)\n\n" % (line, elapsed, time.strftime("%Y-%m-%d %H:%M")))
        f.write("| passed | failed | skipped | ignored |\n|---|---|---|---|\n")
        f.write("| %d | %d | %d | %d |\n\n" % (len(passed), len(failed), len(skipped), len(ignored)))
        if sanit:
            f.write("## Sanitizer reports\n\n```\n%s\n```\n\n" % "\n".join(sanit)[:20000])
        f.write("## Failing tests\n\n")
        if not failed:
            f.write("None.\n\n")
        else:
            f.write("| test | rules logged, per stage |\n|---|---|\n")
            for t in failed:
                stages = trig.get(t)
                why = ("retry_once test: go-ftw aborted on it every time (failed twice per run)" if t in gave_up
                       else "; ".join(" ".join(str(i) for i in (s or [])) or "(none)"
                                      for s in (stages or [])) or "(no stage data)")
                f.write("| %s | %s |\n" % (t, why))
            f.write("\n")
        if stats.get("flaky"):
            f.write("## Flaky: failed in the run, passed when rerun alone\n\n%s\n\n"
                    % " ".join(stats["flaky"]))
        if skipped:
            f.write("## Skipped (disabled by CRS: `meta.enabled: false`)\n\n%s\n\n" % " ".join(skipped))
        if ignored:
            f.write("## Ignored\n\n%s\n" % " ".join(ignored))


def choose_floor(a, paths, ftw):
    """(floor or None, why) for --floor N, or --floor-auto: the recorded
    mod_security2 count for this CRS version, else mod_security2 measured now
    on the same harness and data (when it is installed)."""
    version = paths["version"]
    if a.floor is not None:
        return (a.floor or None), "given (--floor %d)" % a.floor
    if not a.floor_auto:
        return None, "none asked for"
    if version in FLOORS:
        return FLOORS[version]
    if a.engine == "modsec2":
        return None, ("no recorded mod_security2 count for CRS %s; this run measures it "
                      "(record it in tests/crs/run.py FLOORS)" % version)
    if not os.path.exists(hz.MODSEC2_SO):
        return None, ("no recorded mod_security2 count for CRS %s and mod_security2 is not "
                      "installed to measure one (apt-get install libapache2-mod-security2)" % version)
    print("crs-%s: no recorded floor for CRS %s: measuring mod_security2 on it first"
          % (a.crs, version), flush=True)
    ref = argparse.Namespace(**vars(a))
    ref.engine, ref.module, ref.sanitize, ref.include, ref.report = "modsec2", None, False, None, None
    work = tempfile.mkdtemp(prefix="bw-crs-%s-modsec2-" % a.crs)
    try:
        stats, _, gave_up, _ = run_suite(ref, paths, work, ftw)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    passed = len(stats.get("success") or []) + len(stats.get("forced-pass") or [])
    return passed, ("mod_security2 measured just now on CRS %s with this harness "
                    "(no recorded count for this version)" % version)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--crs", choices=("v3", "v4"), required=True)
    p.add_argument("--engine", choices=hz.ENGINES, default="bulwark")
    p.add_argument("--module", help="mod_bulwark.so (default: BW_MODULE or build/out/.libs)")
    p.add_argument("--report", help="write a markdown report here")
    p.add_argument("--floor", type=int, help="exit 1 when fewer tests pass (0: no floor)")
    p.add_argument("--floor-auto", action="store_true",
                   help="the floor is mod_security2's count for this CRS version (FLOORS, or measured)")
    p.add_argument("--include", help="go-ftw --include regex (dev; disabled tests are then not excluded)")
    p.add_argument("--backend", choices=("albedo", "httpbin"), help="backend (default: httpbin for v3, as CRS 3.3 CI; albedo for v4)")
    p.add_argument("--sanitize", action="store_true", default=None,
                   help="module under ASan+UBSan (LD_PRELOAD); exit 3 on any report")
    p.add_argument("--port", type=int, help="Apache port (default: a free one)")
    p.add_argument("--front", choices=hz.FRONTS, default="plain",
                   help="tls: Apache terminates TLS (mod_ssl, a CA made for the run; mod_http2 "
                        "loaded, go-ftw speaks HTTP/1.1 over TLS)")
    p.add_argument("--timeout", type=int, default=1800, help="bound for one go-ftw run, seconds")
    p.add_argument("--keep", action="store_true", help="keep the run directory")
    a = p.parse_args(argv)
    hz.cleanup_on_signals()

    label = "crs-%s" % a.crs
    ftw = os.path.join(hz.tools_bin(), "go-ftw")
    work = tempfile.mkdtemp(prefix="bw-crs-%s-" % a.crs)
    t0 = time.monotonic()
    try:
        data = crsdata.locate()
        paths = suite_paths(a.crs, data)
        a.version = paths["version"]
        print("%s: CRS %s from %s (%s)" % (label, a.version, data.source, paths["tests"]), flush=True)
        for key in ("rules", "setup", "tests"):
            if not os.path.exists(paths[key]):
                raise Broken("missing %s: %s" % (key, paths[key]))
        if not os.access(ftw, os.X_OK):
            raise Broken("go-ftw not found at %s: run tools/ftw/build.sh" % ftw)
        floor, why = choose_floor(a, paths, ftw)
        print("%s: floor %s: %s" % (label, floor if floor is not None else "none", why), flush=True)
        stats, disabled, gave_up, sanit = run_suite(a, paths, work, ftw)
    except NotRun as e:
        shutil.rmtree(work, ignore_errors=True)
        print("%s: not run: %s" % (label, e))
        return 4
    except crsdata.NotFound as e:
        shutil.rmtree(work, ignore_errors=True)
        print("%s: run broke: %s" % (label, e), file=sys.stderr)
        print("%s: run broke" % label)
        return 2
    except (Broken, hz.HarnessError, OSError, subprocess.SubprocessError) as e:
        print("%s: run broke: %s" % (label, e), file=sys.stderr)
        print("%s: run broke" % label)
        return 2
    finally:
        if a.keep:
            print("%s: run dir kept: %s" % (label, work), file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    passed, _ = summarize(a, stats, disabled, gave_up, time.monotonic() - t0, sanit)
    if sanit:
        print("%s: sanitizer reports found:\n%s" % (label, "\n".join(sanit)[:8000]))
        return 3
    if floor is not None and passed < floor:
        print("%s: %d passed is below the floor of %d (%s)" % (label, passed, floor, why))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
