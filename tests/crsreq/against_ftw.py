#!/usr/bin/env python3
"""Check crs2raw against go-ftw itself: every request file must hold exactly
the bytes go-ftw v2.5.0 sends for its stage.

go-ftw runs the test trees in cloud mode (no WAF log, no marker requests)
against a small recording server on loopback; the server answers each
connection once the bytes it got stop growing, with a plain 200. Requests
then are compared as multisets of byte strings: each recorded request must be
one of the files, and each file must have been sent.

Usage: against_ftw.py --ftw GO-FTW --converted DIR TESTS_DIR...
  DIR       crs2raw's output for these trees (its index.jsonl names the files)

Last line: `against-ftw: N passed, M failed` (files matched, files not).
Exit 1 on any difference, 2 when go-ftw could not be run.
"""

import argparse
import collections
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class Recorder:
    """A loopback server that keeps what each connection sends. A request is
    taken as complete when it equals a known file and nothing follows within
    a few milliseconds, or when the client has been quiet for IDLE seconds."""
    SETTLE, IDLE = 0.01, 0.5

    def __init__(self, known):
        self.known = known
        self.got = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.one, args=(conn,), daemon=True).start()

    def one(self, conn):
        buf = b""
        with conn:
            while True:
                conn.settimeout(self.SETTLE if buf in self.known else self.IDLE)
                try:
                    chunk = conn.recv(65536)
                except socket.timeout:
                    break
                if not chunk:
                    break
                buf += chunk
            if buf:
                self.got.append(buf)
            try:
                conn.sendall(ANSWER)
            except OSError:
                pass


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ftw", required=True, help="the go-ftw binary (v2.5.0)")
    p.add_argument("--converted", required=True, help="crs2raw's output directory")
    p.add_argument("tests", nargs="+", help="the test trees crs2raw converted")
    a = p.parse_args(argv)

    files = {}
    with open(os.path.join(a.converted, "index.jsonl")) as f:
        for line in f:
            rec = json.loads(line)
            with open(os.path.join(a.converted, rec["file"]), "rb") as g:
                files.setdefault(g.read(), []).append(rec["file"])
    recorder = Recorder(files)
    work = tempfile.mkdtemp(prefix="bw-against-ftw-")
    try:
        cfg = os.path.join(work, "ftw.yaml")
        with open(cfg, "w") as f:
            f.write("testoverride:\n  input:\n    dest_addr: 127.0.0.1\n    port: %d\n" % recorder.port)
        t0 = time.monotonic()
        for tree in a.tests:
            # Cloud mode judges by status alone; our 200 fails some tests,
            # which is no concern here. --read-timeout bounds a stage the
            # recorder cannot close early.
            r = subprocess.run([os.path.abspath(a.ftw), "run", "--cloud", "--config", cfg, "-d", tree,
                                "--read-timeout", "3s", "-o", "quiet"],
                               cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            out = r.stdout.decode("utf-8", "replace")
            # "Error: failed N tests" is the usual end (our 200s fail some);
            # any other error means go-ftw gave up before the end.
            if re.search(r"^Error: (?!failed \d+ tests?\s*$)", out, re.M):
                print("against-ftw: go-ftw stopped on %s:\n%s" % (tree, out[-2000:]))
                return 2
        time.sleep(Recorder.IDLE + 0.2)       # let the last connection finish
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("against-ftw: go-ftw sent %d requests in %.0fs" % (len(recorder.got), time.monotonic() - t0))

    want = collections.Counter({k: len(v) for k, v in files.items()})
    got = collections.Counter(recorder.got)
    missing = want - got
    extra = got - want
    for raw in list(extra)[:10]:
        print("against-ftw: go-ftw sent bytes no file holds:\n  %r" % raw[:600])
    for raw in list(missing)[:10]:
        print("against-ftw: not sent by go-ftw: %s" % ", ".join(files[raw]))
    failed = sum(missing.values())
    print("against-ftw: %d passed, %d failed" % (sum(want.values()) - failed, failed))
    return 1 if failed or extra else 0


if __name__ == "__main__":
    sys.exit(main())
