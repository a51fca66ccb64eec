#!/usr/bin/env python3
"""A loopback HTTP backend that answers with a digest of the body it got.

The regression tests use it to check that a request body crosses the WAF
unchanged: the test knows the SHA-256 of what the client sends, and the
answer tells the SHA-256 of what reached the backend.

Every request (any method, any path) is answered 200 with a JSON body:
    {"method": "POST", "path": "/x", "length": 5, "framing": "length",
     "sha256": "<hex>"}
(framing: "length", "chunked" or "none") and the header X-Body-Sha256.

It also remembers which paths it saw, so that a test can check that a
request the WAF refused never got here:
    GET /__seen/<path>   ->   "seen <n> times"   (n: requests for /<path>, query
                                            strings ignored; this request
                                            itself is not counted)

Standard library only. Usage: echo_digest.py --port N [--bind 127.0.0.1]
"""

import argparse
import hashlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SEEN_PREFIX = "/__seen/"
MAX_BODY = 64 << 20            # refuse anything bigger: this is a test backend
MAX_LINE = 4096


class BadFraming(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # mod_proxy keeps connections open
    # Head and body leave in one write: seen through Apache, go-ftw 2.5
    # missed the body of an answer sent in two writes.
    wbufsize = 1 << 16
    server_version = "echo-digest"
    seen = {}
    lock = threading.Lock()

    def log_message(self, fmt, *args):
        sys.stdout.write("%s\n" % (fmt % args))
        sys.stdout.flush()

    def read_chunked(self, digest):
        total = 0
        while True:
            line = self.rfile.readline(MAX_LINE)
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise BadFraming("bad chunk size %r" % line[:40])
            if size == 0:
                break
            total += size
            if total > MAX_BODY:
                raise BadFraming("body too large")
            data = self.rfile.read(size)
            if len(data) != size or self.rfile.read(2) != b"\r\n":
                raise BadFraming("truncated chunk")
            digest.update(data)
        while self.rfile.readline(MAX_LINE) not in (b"\r\n", b"\n", b""):
            pass   # trailer fields
        return total

    def read_body(self):
        """(length, framing, sha256 hex) of the request body."""
        digest = hashlib.sha256()
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            return self.read_chunked(digest), "chunked", digest.hexdigest()
        cl = self.headers.get("Content-Length")
        if cl is None:
            return 0, "none", digest.hexdigest()
        try:
            n = int(cl)
        except ValueError:
            raise BadFraming("bad Content-Length")
        if n < 0 or n > MAX_BODY:
            raise BadFraming("bad Content-Length")
        left = n
        while left:
            data = self.rfile.read(min(left, 65536))
            if not data:
                raise BadFraming("body shorter than Content-Length")
            digest.update(data)
            left -= len(data)
        return n, "length", digest.hexdigest()

    def answer(self, status, body, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if status == 200 else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        path = self.path.split("?", 1)[0]
        try:
            length, framing, sha = self.read_body()
        except BadFraming as e:
            self.close_connection = True
            self.answer(400, ("bad request: %s\n" % e).encode())
            return
        if path.startswith(SEEN_PREFIX):
            with self.lock:
                n = self.seen.get("/" + path[len(SEEN_PREFIX):], 0)
            self.answer(200, ("seen %d times\n" % n).encode())
            return
        with self.lock:
            self.seen[path] = self.seen.get(path, 0) + 1
        body = json.dumps({"method": self.command, "path": path, "length": length,
                           "framing": framing, "sha256": sha}).encode() + b"\n"
        self.answer(200, body, [("X-Body-Sha256", sha)])

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = handle_any


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--bind", default="127.0.0.1")
    a = p.parse_args(argv)
    srv = ThreadingHTTPServer((a.bind, a.port), Handler)
    srv.daemon_threads = True
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
