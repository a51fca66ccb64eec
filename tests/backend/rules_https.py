#!/usr/bin/env python3
"""An HTTPS server of rule files, for the SecRemoteRules tests.

At start it makes, with the openssl command, a throw-away CA and a
certificate for localhost / 127.0.0.1 signed by it, in DIR (nothing of it is
committed), then serves on 127.0.0.1:PORT:

  /rules.conf   the rules below, only with the header "ModSec-key: secret"
                (403 without it or with another key)
  /bad.conf     rules with a syntax error on their line 2
  /hang.conf    answers nothing until the client gives up
  /missing      404

It writes "PORT" to DIR/port once listening, with DIR/ca.pem beside it, and
logs each request (path and key header) to DIR/requests.log.

    rules_https.py DIR
"""

import http.server
import os
import socketserver
import ssl
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from bwharness import make_test_ca  # noqa: E402

KEY = "secret"

RULES = """# served by tests/backend/rules_https.py
SecRule ARGS:remote "@streq 1" "id:106301,phase:2,deny,status:403,log,msg:'from the remote rules'"
SecRule ARGS:remote "@streq 2" \\
    "id:106302,phase:2,deny,status:406,log"
"""

BAD = """# served by tests/backend/rules_https.py
SecRule ARGS:remote "@nosuchoperator 1" "id:106303,phase:2,deny"
"""


class Handler(http.server.BaseHTTPRequestHandler):
    log_path = None

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        key = self.headers.get("ModSec-key")
        with open(self.log_path, "a") as f:
            f.write("%s key=%s\n" % (self.path, key))
        if self.path == "/rules.conf":
            if key == KEY:
                self.answer(200, RULES.encode())
            else:
                self.answer(403, b"wrong key\n")
        elif self.path == "/bad.conf":
            self.answer(200, BAD.encode())
        elif self.path == "/hang.conf":
            time.sleep(120)
        else:
            self.answer(404, b"no such rules\n")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    d = os.path.abspath(sys.argv[1])
    os.makedirs(d, exist_ok=True)
    make_test_ca(d)
    Handler.log_path = os.path.join(d, "requests.log")
    srv = Server(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(os.path.join(d, "port.tmp"), "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
