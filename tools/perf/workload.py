"""A recorded request of tools/perf/requests/ as load-generator arguments:
tools/perf/run and tools/perf/memory send the same requests, over HTTP/1.1
with Apache Bench (ab) or over HTTP/2 with h2load."""

import os

HERE = os.path.dirname(os.path.abspath(__file__))

# Header fields HTTP/2 forbids (RFC 9113, 8.2.2): a stream carrying one is
# malformed. The recorded requests have none today; dropped if they ever do.
H2_CONNECTION_HEADERS = ("connection", "keep-alive", "proxy-connection", "transfer-encoding",
                         "upgrade", "te")


class Workload:
    """One recorded request, turned into ab or h2load arguments."""

    def __init__(self, name, work):
        self.name = name
        with open(os.path.join(HERE, "requests", name + ".http"), "rb") as f:
            raw = f.read()
        head, _, body = raw.partition(b"\r\n\r\n")
        lines = head.decode("ascii").split("\r\n")
        self.method, self.path, _ = lines[0].split(" ", 2)
        self.headers = []           # (name, value) in recorded order, Content-Length left out
        for line in lines[1:]:
            name_, _, value = line.partition(":")
            if name_.strip().lower() != "content-length":     # both tools compute it
                self.headers.append((name_.strip(), value.strip()))
        self.body_len = len(body)
        self.body_file = None
        if body:
            self.body_file = os.path.join(work, name + ".body")
            with open(self.body_file, "wb") as f:
                f.write(body)
        self.args = []
        for key, value in self.headers:
            if key.lower() == "content-type":
                self.args += ["-T", value]
            else:
                self.args += ["-H", "%s: %s" % (key, value)]
        if self.body_file:
            self.args += ["-p" if self.method == "POST" else "-u", self.body_file]

    def ab_command(self, port, conc, n, cap, extra=()):
        # -t first: it sets a 50000 request default that -n then replaces.
        return (["ab", "-r", "-k", "-s", "120", "-t", str(cap), "-n", str(n), "-c", str(conc)]
                + list(extra) + self.args + ["http://127.0.0.1:%s%s" % (port, self.path)])

    def h2load_args(self):
        """The request as h2load options. h2load takes the authority from
        the URL and ignores a Host header, so Host becomes :authority (what
        Apache hands on as Host); -d sends the body with its Content-Length
        and makes the method POST, the only method with a body h2load has."""
        if self.body_file and self.method != "POST":
            raise ValueError("%s: h2load sends a body only with POST, not %s"
                             % (self.name, self.method))
        if not self.body_file and self.method != "GET":
            raise ValueError("%s: h2load sends GET without a body, not %s"
                             % (self.name, self.method))
        args = []
        for key, value in self.headers:
            low = key.lower()
            if low in H2_CONNECTION_HEADERS:
                continue
            args += ["-H", "%s: %s" % (":authority" if low == "host" else low, value)]
        if self.body_file:
            args += ["-d", self.body_file]
        return args

    def h2load_command(self, port, clients, streams, n, extra=()):
        """h2load over TLS (ALPN h2) to Apache on 127.0.0.1:port, one thread
        like ab. h2load does not verify the server's certificate."""
        return (["h2load", "-t", "1", "-n", str(n), "-c", str(clients), "-m", str(streams)]
                + list(extra) + self.h2load_args()
                + ["https://127.0.0.1:%s%s" % (port, self.path)])
