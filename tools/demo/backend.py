#!/usr/bin/env python3
"""The demo's backend: a tiny loopback web application behind the WAF.

Answers every GET/HEAD/POST with a small page that echoes the method, path and
body size, so a visitor can see that a request reached it. Python 3 standard
library only; binds 127.0.0.1 only.
"""

import argparse
import html
import http.server
import sys

PAGE = """<!doctype html>
<html><head><title>Bulwark demo backend</title></head>
<body><h1>Hello from the demo backend</h1>
<p>This request went through Apache + the WAF and reached the application.</p>
<p>method: {method}<br>path: {path}<br>body bytes: {size}</p>
</body></html>
"""

# Upper bound of a request body we read; the WAF's own limits are lower.
MAX_BODY = 1 << 20


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "bulwark-demo-backend"
    protocol_version = "HTTP/1.1"

    def _answer(self, send_body=True):
        size = 0
        length = self.headers.get("Content-Length")
        if length and length.isdigit():
            size = min(int(length), MAX_BODY)
            self.rfile.read(size)
        body = PAGE.format(method=html.escape(self.command), path=html.escape(self.path),
                           size=size).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def do_GET(self):
        self._answer()

    def do_POST(self):
        self._answer()

    def do_HEAD(self):
        self._answer(send_body=False)

    def log_message(self, fmt, *args):
        sys.stderr.write("backend: " + (fmt % args) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    a = p.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.serve_forever()


if __name__ == "__main__":
    main()
