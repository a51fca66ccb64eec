#!/usr/bin/env python3
"""What request bodies leave on disk, checked on the file system (go-ftw
cannot look there): multipart file parts under SecUploadKeepFiles Off, On
and RelevantOnly, and the request body's own temp file.

  - SecUploadKeepFiles Off with SecTmpSaveUploadedFiles On: the stored
    file parts are gone once the request is over;
  - On: every file part stays in SecUploadDir, byte for byte, with
    SecUploadFileMode;
  - RelevantOnly: kept when a rule logged a match, removed otherwise;
  - a body larger than SecRequestBodyInMemoryLimit leaves nothing in
    SecTmpDir (its temp file has no name from the start).

Usage: tests/regression/bodies/check_uploads.py [--engine bulwark|modsec2]
                                                [--module SO] [--keep]
Closing line `uploads: N passed, M failed`; exit 1 on any failure.
"""

import argparse
import http.client
import os
import shutil
import stat
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "..", "harness"))
import bwharness as hz  # noqa: E402

ENGINE = """SecRuleEngine On
SecRequestBodyAccess On
SecRequestBodyLimit 1048576
SecRequestBodyNoFilesLimit 131072
SecRequestBodyInMemoryLimit 1024
SecTmpDir {tmp}
SecDataDir {tmp}
SecUploadDir {up}
SecUploadFileMode 0640
{keep}
SecAuditEngine Off
SecDebugLog /dev/null
SecDebugLogLevel 0
SecRule ARGS_POST:flag "@streq log" "id:110901,phase:2,pass,log,msg:'relevant'"
"""

FILE_A = bytes(range(256)) * 4
FILE_B = b"second file\r\n--not-a-boundary\r\n" * 10


def multipart(flag):
    parts = [(b'Content-Disposition: form-data; name="flag"', flag.encode()),
             (b'Content-Disposition: form-data; name="a"; filename="a.bin"', FILE_A),
             (b'Content-Disposition: form-data; name="b"; filename="b.txt"', FILE_B)]
    body = b"".join(b"--XyZ\r\n" + h + b"\r\n\r\n" + d + b"\r\n" for h, d in parts)
    return body + b"--XyZ--\r\n"


def post(port, body, ctype):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    c.request("POST", "/upload", body=body, headers={"Content-Type": ctype, "Connection": "close"})
    r = c.getresponse()
    r.read()
    c.close()
    return r.status


def files_in(d):
    return sorted(os.path.join(d, n) for n in os.listdir(d))


def settle(d, want, timeout=3.0):
    """Files in d once their number is want (cleanups run after the answer)."""
    end = time.monotonic() + timeout
    while True:
        found = files_in(d)
        if len(found) == want or time.monotonic() > end:
            return found


def scenario(a, work, name, keep_lines, requests, check):
    run = os.path.join(work, name)
    tmp, up = os.path.join(run, "tmp"), os.path.join(run, "upload")
    for d in (tmp, up):
        os.makedirs(d)
        if os.geteuid() == 0:
            os.chown(d, hz.run_user()[2], hz.run_user()[3])
            os.chmod(run, 0o755)
    conf = os.path.join(run, "engine.conf")
    with open(conf, "w") as f:
        f.write(ENGINE.format(tmp=tmp, up=up, keep=keep_lines))
    if os.geteuid() == 0:
        os.chmod(work, 0o755)
    cfg = hz.ApacheConfig(a.engine, 9, engine_conf=conf, module_so=a.module,
                          run_dir=os.path.join(run, "apache"), threads=4)
    with hz.Backend.start("echo", log_dir=run) as be:
        cfg.backend_port = be.port
        with hz.Apache(cfg) as ap:
            ap.start(timeout=30)
            statuses = [post(ap.port, body, ctype) for body, ctype in requests]
            return check(statuses, tmp, up)


def expect(cond, why, problems):
    if not cond:
        problems.append(why)


def check_off(statuses, tmp, up):
    p = []
    expect(statuses == [200], "status %s, want [200]" % statuses, p)
    expect(settle(up, 0) == [] and settle(tmp, 0) == [], "files left: %s" % (files_in(up) + files_in(tmp)), p)
    return p


def check_on(statuses, tmp, up):
    p = []
    expect(statuses == [200, 200], "status %s, want [200, 200]" % statuses, p)
    kept = settle(up, 4)
    contents = sorted(open(f, "rb").read() for f in kept)
    expect(contents == sorted([FILE_A, FILE_B] * 2), "%d files kept, want the 4 file parts" % len(kept), p)
    for f in kept:
        mode = stat.S_IMODE(os.stat(f).st_mode)
        expect(mode == 0o640, "%s has mode %o, want 640" % (f, mode), p)
    return p


def check_relevant(statuses, tmp, up):
    p = []
    expect(statuses == [200, 200], "status %s, want [200, 200]" % statuses, p)
    kept = settle(up, 2)
    contents = sorted(open(f, "rb").read() for f in kept)
    expect(contents == sorted([FILE_A, FILE_B]),
           "%d files kept, want the 2 of the request that logged" % len(kept), p)
    return p


def check_body_tmp(statuses, tmp, up):
    p = []
    expect(statuses == [200, 200], "status %s, want [200, 200]" % statuses, p)
    expect(settle(tmp, 0) == [], "left in SecTmpDir: %s" % files_in(tmp), p)
    return p


def main(argv=None):
    hz.cleanup_on_signals()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=("bulwark", "modsec2"), default="bulwark")
    ap.add_argument("--module", help="mod_bulwark.so (default: BW_MODULE or build/out/.libs)")
    ap.add_argument("--keep", action="store_true", help="keep the run directory")
    a = ap.parse_args(argv)
    mp = "multipart/form-data; boundary=XyZ"
    big = b"0123456789" * 10000
    cases = [
        ("keep-off", "SecUploadKeepFiles Off\nSecTmpSaveUploadedFiles On",
         [(multipart("log"), mp)], check_off),
        ("keep-on", "SecUploadKeepFiles On", [(multipart("x"), mp), (multipart("log"), mp)], check_on),
        ("keep-relevant", "SecUploadKeepFiles RelevantOnly",
         [(multipart("x"), mp), (multipart("log"), mp)], check_relevant),
        ("body-tmp", "SecUploadKeepFiles Off",
         [(b"flag=log&pad=" + big, "application/x-www-form-urlencoded"),
          (big, "application/octet-stream")], check_body_tmp),
    ]
    work = tempfile.mkdtemp(prefix="bw-uploads-")
    passed = failed = 0
    try:
        for name, keep, reqs, check in cases:
            try:
                problems = scenario(a, work, name, keep, reqs, check)
            except (hz.HarnessError, OSError, http.client.HTTPException) as e:
                problems = ["run broke: %s" % e]
            if problems:
                failed += 1
                print("  FAIL  %s: %s" % (name, "; ".join(problems)))
            else:
                passed += 1
                print("  ok    %s" % name)
    finally:
        if a.keep:
            print("uploads: run dir kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("uploads: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
