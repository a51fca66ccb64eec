"""A recorded request of tools/perf/requests/ as Apache Bench arguments:
tools/perf/run and tools/perf/memory send the same requests."""

import os

HERE = os.path.dirname(os.path.abspath(__file__))


class Workload:
    """One recorded request, turned into ab arguments."""

    def __init__(self, name, work):
        self.name = name
        with open(os.path.join(HERE, "requests", name + ".http"), "rb") as f:
            raw = f.read()
        head, _, body = raw.partition(b"\r\n\r\n")
        lines = head.decode("ascii").split("\r\n")
        self.method, self.path, _ = lines[0].split(" ", 2)
        self.args = []
        self.body_len = len(body)
        for line in lines[1:]:
            name_, _, value = line.partition(":")
            key = name_.strip().lower()
            if key == "content-length":
                continue        # ab computes it
            if key == "content-type":
                self.args += ["-T", value.strip()]
            else:
                self.args += ["-H", "%s: %s" % (name_.strip(), value.strip())]
        if body:
            bf = os.path.join(work, name + ".body")
            with open(bf, "wb") as f:
                f.write(body)
            self.args += ["-p" if self.method == "POST" else "-u", bf]

    def ab_command(self, port, conc, n, cap, extra=()):
        # -t first: it sets a 50000 request default that -n then replaces.
        return (["ab", "-r", "-k", "-s", "120", "-t", str(cap), "-n", str(n), "-c", str(conc)]
                + list(extra) + self.args + ["http://127.0.0.1:%d%s" % (port, self.path)])
