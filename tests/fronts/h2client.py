"""Small HTTP clients for the fronts tests: HTTP/2 (h2 over TLS, h2c by prior
knowledge) on Debian's python3-h2, and raw HTTP/1.1 bytes over TCP or TLS.

The HTTP/2 client does what the tests need and a browser does not: bodies
with or without content-length, request trailers, many streams at once on one
connection, and, after a GOAWAY, the retry RFC 9113 section 6.8 allows (a
stream above the last stream id the server names, or one it refused with
REFUSED_STREAM, was not processed and may be sent again on a new connection).

Only loopback addresses are ever connected to.
"""

import socket
import ssl
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions

# Headers RFC 9113 section 8.2.2 forbids in HTTP/2: a request that needs one
# cannot be sent as it is.
CONNECTION_HEADERS = frozenset((b"connection", b"keep-alive", b"proxy-connection",
                                b"transfer-encoding", b"upgrade"))


class Response:
    """What one stream got back. status None: no response (see error)."""

    def __init__(self):
        self.status = None
        self.headers = []
        self.body = bytearray()
        self.trailers = []
        self.error = None          # reset code, "GOAWAY", "closed", "timeout"
        self.unprocessed = False   # the server says it never began it: safe to retry
        self.done = False

    def header(self, name):
        name = name.lower().encode() if isinstance(name, str) else name.lower()
        for k, v in self.headers:
            if k == name:
                return v.decode("latin-1")
        return None


class H2Error(RuntimeError):
    pass


class H2Conn:
    """One HTTP/2 connection to 127.0.0.1:port. tls: an ssl.SSLContext (ALPN
    h2 is set here) or None for h2c with prior knowledge."""

    def __init__(self, port, tls=None, authority="localhost", timeout=30.0):
        self.authority = authority
        self.scheme = "https" if tls is not None else "http"
        self.timeout = timeout
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        if tls is not None:
            tls.set_alpn_protocols(["h2"])
            sock = tls.wrap_socket(sock, server_hostname=authority.split(":")[0])
            if sock.selected_alpn_protocol() != "h2":
                sock.close()
                raise H2Error("the server did not choose h2 by ALPN (%r)" % sock.selected_alpn_protocol())
        self.sock = sock
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding=None,
                                      validate_outbound_headers=True))
        # python-h2 closes its state machine on any GOAWAY, even within the
        # data of one read, and would then refuse the frames of the streams
        # the server still answers (RFC 9113 section 6.8: those up to the
        # GOAWAY's last stream id). After a graceful GOAWAY (httpd's on a
        # reload) it is kept open; usable() is False from then on, so no new
        # stream is opened here.
        dispatch = self.conn._frame_dispatch_table
        goaway_type = next(t for t in dispatch if t.__name__ == "GoAwayFrame")
        on_goaway = dispatch[goaway_type]

        def keep_open(frame):
            out = on_goaway(frame)
            if frame.error_code == h2.errors.ErrorCodes.NO_ERROR:
                self.conn.state_machine.state = h2.connection.ConnectionState.CLIENT_OPEN
            return out
        dispatch[goaway_type] = keep_open
        self.conn.initiate_connection()
        # A large receive window: responses are read at once, never throttled.
        self.conn.increment_flow_control_window(2 ** 24)
        self._flush()
        self.streams = {}
        self.goaway = None         # last stream id of a GOAWAY, once one came
        self.closed = False
        self.heard = False         # the server sent something (its preface comes first)

    # -- sending -------------------------------------------------------------
    def _flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, method, path, headers=(), body=None, trailers=None, content_length=True,
                chunk=16384):
        """Open a stream; returns its id. headers: (name, value) pairs (str or
        bytes; names lowercased). body: bytes or None. content_length: send a
        content-length header for the body (False: none, as a streaming client
        does). trailers: (name, value) pairs sent after the body."""
        sid = self.conn.get_next_available_stream_id()
        hdrs = [(b":method", _b(method)), (b":scheme", _b(self.scheme)),
                (b":authority", _b(self.authority)), (b":path", _b(path))]
        for k, v in headers:
            hdrs.append((_b(k).lower(), _b(v)))
        if body is not None and content_length and not any(k == b"content-length" for k, _ in hdrs):
            hdrs.append((b"content-length", b"%d" % len(body)))
        if trailers:
            hdrs.append((b"te", b"trailers"))
        self.streams[sid] = Response()
        end = body is None and not trailers
        self.conn.send_headers(sid, hdrs, end_stream=end)
        self._flush()
        if body is not None:
            self._send_body(sid, bytes(body), chunk, end_stream=not trailers)
        if trailers:
            self.conn.send_headers(sid, [(_b(k).lower(), _b(v)) for k, v in trailers], end_stream=True)
            self._flush()
        return sid

    def _send_body(self, sid, body, chunk, end_stream):
        pos = 0
        deadline = time.monotonic() + self.timeout
        while True:
            resp = self.streams[sid]
            if resp.done:      # answered (a 413 or 403) before the body was all sent
                return
            window = self.conn.local_flow_control_window(sid)
            size = min(window, self.conn.max_outbound_frame_size, chunk, len(body) - pos)
            if size > 0 or pos == len(body):
                last = pos + size == len(body)
                self.conn.send_data(sid, body[pos:pos + size], end_stream=last and end_stream)
                self._flush()
                pos += size
                if last:
                    return
                continue
            if time.monotonic() > deadline:
                raise H2Error("stream %d: no flow-control window for %ds" % (sid, self.timeout))
            self._read_once()     # wait for a WINDOW_UPDATE (or the answer)

    # -- receiving -----------------------------------------------------------
    def _read_once(self):
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise H2Error("no data from the server for %ds" % self.timeout)
        except OSError as e:
            data = b""
            self._fail_open("closed: %s" % e)
        if not data:
            self.closed = True
            self._fail_open("closed")
            return
        self.heard = True
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError as e:
            self.closed = True
            self._fail_open("protocol error: %s" % e)
            return
        for ev in events:
            self._event(ev)
        try:
            self._flush()
        except OSError:
            self.closed = True

    def _event(self, ev):
        r = self.streams.get(getattr(ev, "stream_id", None))
        if isinstance(ev, h2.events.ResponseReceived):
            for k, v in ev.headers:
                if k == b":status":
                    r.status = int(v)
                else:
                    r.headers.append((k, v))
        elif isinstance(ev, h2.events.InformationalResponseReceived):
            pass
        elif isinstance(ev, h2.events.DataReceived):
            r.body += ev.data
            self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        elif isinstance(ev, h2.events.TrailersReceived):
            r.trailers = list(ev.headers)
        elif isinstance(ev, h2.events.StreamEnded):
            r.done = True
        elif isinstance(ev, h2.events.StreamReset):
            if r is not None and not r.done:
                r.error = "reset %s" % _code(ev.error_code)
                r.unprocessed = ev.error_code == h2.errors.ErrorCodes.REFUSED_STREAM
                r.done = True
        elif isinstance(ev, h2.events.ConnectionTerminated):
            self.goaway = ev.last_stream_id
            for sid, resp in self.streams.items():
                if not resp.done and sid > ev.last_stream_id:
                    resp.error, resp.unprocessed, resp.done = "GOAWAY", True, True

    def _fail_open(self, why):
        for resp in self.streams.values():
            if not resp.done:
                resp.error, resp.done = why, True

    def wait(self, sids=None, timeout=None):
        """Read until every stream in sids (default: all) is done; returns
        {sid: Response}."""
        sids = list(self.streams) if sids is None else list(sids)
        deadline = time.monotonic() + (timeout or self.timeout)
        while not all(self.streams[s].done for s in sids):
            if self.closed:
                self._fail_open("closed")
                break
            if time.monotonic() > deadline:
                for s in sids:
                    if not self.streams[s].done:
                        self.streams[s].error, self.streams[s].done = "timeout", True
                break
            self._read_once()
        return {s: self.streams[s] for s in sids}

    def usable(self):
        return not self.closed and self.goaway is None

    def close(self):
        try:
            if not self.closed:
                self.conn.close_connection()
                self._flush()
        except (OSError, h2.exceptions.ProtocolError):
            pass
        try:
            self.sock.close()
        except OSError:
            pass
        self.closed = True


def _b(v):
    return v if isinstance(v, bytes) else str(v).encode("latin-1")


def _code(c):
    try:
        return h2.errors.ErrorCodes(c).name
    except ValueError:
        return str(c)


# ---------------------------------------------------------------- HTTP/1.1
def raw_h1(port, raw, tls=None, timeout=15.0, authority="localhost"):
    """Send raw request bytes on a new connection and read until the server
    closes it (the requests carry Connection: close) or times out. Returns
    (status or None, response bytes)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        if tls is not None:
            tls.set_alpn_protocols(["http/1.1"])
            sock = tls.wrap_socket(sock, server_hostname=authority)
        sock.sendall(raw)
        got = bytearray()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                data = sock.recv(65536)
            except socket.timeout:
                break
            except (ConnectionResetError, ssl.SSLError):
                break
            if not data:
                break
            got += data
            if _h1_complete(got):
                break
    finally:
        sock.close()
    status = None
    if got.startswith(b"HTTP/"):
        try:
            status = int(got.split(b" ", 2)[1])
        except (IndexError, ValueError):
            pass
    return status, bytes(got)


def _h1_complete(got):
    """A whole response with Content-Length is there (no need to wait for close)."""
    head, sep, body = got.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            try:
                return len(body) >= int(v.strip())
            except ValueError:
                return False
    return False


def parse_h1_request(raw):
    """(method, target, headers [(name, value)], body) of raw HTTP/1.1 request
    bytes (a chunked body dechunked, trailers dropped), or raise ValueError."""
    head, sep, rest = raw.partition(b"\r\n\r\n")
    if not sep:
        raise ValueError("no end of headers")
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3:
        raise ValueError("request line is not METHOD TARGET VERSION")
    method, target, _ = parts
    headers = []
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):
            raise ValueError("folded header line")
        k, colon, v = line.partition(b":")
        if not colon:
            raise ValueError("header line without a colon")
        headers.append((k, v.strip(b" \t")))
    te = [v for k, v in headers if k.lower() == b"transfer-encoding"]
    if te:
        body = _dechunk(rest)
    else:
        cl = [v for k, v in headers if k.lower() == b"content-length"]
        body = rest[:int(cl[0])] if cl else b""
    return method, target, headers, body


def _dechunk(data):
    out = bytearray()
    pos = 0
    while True:
        end = data.index(b"\r\n", pos)
        size = int(data[pos:end].split(b";")[0], 16)
        pos = end + 2
        if size == 0:
            return bytes(out)
        out += data[pos:pos + size]
        pos += size + 2
