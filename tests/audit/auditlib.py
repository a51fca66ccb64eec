"""Strict readers of ModSecurity-format audit logs, for Bulwark's audit tests.

Written independently of the C reader (apache2/audit/bw_audit_read.c) so the
tests do not check the writer with its own twin. Python 3 standard library.

A Record has: fmt ("native"|"json"), raw (bytes), boundary, parts (ordered
part letters), sections {letter: bytes}, request_line, headers (list of
(name, value)), status, messages (list of str), unique_id, json (dict or None).

Strictness (what the concurrency test relies on): a Native record must open
with "--B-A--", use only its own boundary B for every section line, and end
with "--B-Z--" followed by a blank line before the next record; any other
line between records is an error. A JSON record is one line that parses as
an object.
"""

import hashlib
import json
import os
import re

SECTION = re.compile(rb"^--([0-9A-Za-z]+)-([A-Z])--$")
ID_RE = re.compile(r'\[id "([^"]*)"\]')


class AuditError(Exception):
    pass


class Record:
    def __init__(self, fmt, raw):
        self.fmt = fmt
        self.raw = raw
        self.boundary = None
        self.parts = ""
        self.sections = {}
        self.request_line = None
        self.headers = []
        self.status = None
        self.messages = []
        self.unique_id = None
        self.json = None

    def text(self):
        return self.raw.decode("utf-8", "replace")

    def rule_ids(self):
        ids = []
        for m in self.messages:
            ids += ID_RE.findall(m)
        return ids

    def all_rule_ids(self):
        """Ids of messages and of matched rules (Native part K, JSON matched_rules)."""
        ids = set(self.rule_ids())
        if self.json is not None:
            for g in self.json.get("matched_rules") or []:
                for r in g.get("rules") or []:
                    i = (r.get("actionset") or {}).get("id")
                    if i:
                        ids.add(i)
        elif "K" in self.sections:
            ids.update(re.findall(r'[",]id:(\d+)', self.sections["K"].decode("utf-8", "replace")))
        return ids

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def is_harness_probe(self):
        """The harness's readiness probe and go-ftw's marker requests."""
        if self.request_line is None:
            return "999999" in self.rule_ids()
        if self.request_line.startswith("GET /status/200 ") and self.header("X-CRS-Test") is not None:
            return True
        if "999999" in self.rule_ids():
            return True
        return self.request_line == "GET / HTTP/1.1" and self.header("User-Agent") == "bulwark-harness"


def _fill_native(rec):
    a = rec.sections.get("A", b"").split(b"\n")[0].decode("utf-8", "replace")
    m = re.match(r"^\[([^\]]+)\] (\S+) (\S+) (\d+) (\S+) (\d+)$", a)
    if not m:
        raise AuditError("part A is malformed: %r" % a)
    rec.unique_id = m.group(2)
    if "B" in rec.sections:
        lines = rec.sections["B"].decode("utf-8", "replace").split("\n")
        rec.request_line = lines[0]
        for l in lines[1:]:
            if not l:
                break
            k, _, v = l.partition(": ")
            rec.headers.append((k, v))
    if "F" in rec.sections:
        first = rec.sections["F"].split(b"\n")[0].decode("utf-8", "replace")
        m = re.match(r"^HTTP/\d\.\d (\d{3})", first)
        if not m:
            raise AuditError("part F is malformed: %r" % first)
        rec.status = int(m.group(1))
    if "H" in rec.sections:
        for l in rec.sections["H"].decode("utf-8", "replace").split("\n"):
            if l.startswith("Message: "):
                rec.messages.append(l[9:])


def parse_native(data):
    """All records of a Native log (bytes). Raises AuditError on anything
    that is not a sequence of complete records."""
    out = []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    i = 0
    while i < len(lines):
        if lines[i] == b"":
            raise AuditError("line %d: blank line outside a record" % (i + 1))
        m = SECTION.match(lines[i])
        if not m or m.group(2) != b"A":
            raise AuditError("line %d: expected a --BOUNDARY-A-- line, got %r" % (i + 1, lines[i][:80]))
        b = m.group(1)
        start = i
        rec_parts, sections, cur, body = [], {}, None, []
        while True:
            if i >= len(lines):
                raise AuditError("record %s (line %d): input ends before its Z part" % (b.decode(), start + 1))
            m = SECTION.match(lines[i])
            if m and m.group(1) == b:
                if cur is not None:
                    sections[cur] = b"\n".join(body)
                cur, body = m.group(2).decode(), []
                if cur in rec_parts:
                    raise AuditError("record %s: part %s twice (line %d)" % (b.decode(), cur, i + 1))
                rec_parts.append(cur)
                i += 1
                if cur == "Z":
                    break
                continue
            if m and m.group(2) == b"A":
                raise AuditError("record %s (line %d): another record starts at line %d"
                                 % (b.decode(), start + 1, i + 1))
            body.append(lines[i])
            i += 1
        # a blank line closes the record; mod_security2's Concurrent files
        # end right after the Z line
        if i < len(lines):
            if lines[i] != b"":
                raise AuditError("record %s: no blank line after its Z part (line %d)" % (b.decode(), i + 1))
            i += 1
        rec = Record("native", b"\n".join(lines[start:i]) + b"\n")
        rec.boundary = b.decode()
        rec.parts = "".join(rec_parts)
        rec.sections = sections
        _fill_native(rec)
        out.append(rec)
    return out


def parse_json(data):
    out = []
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise AuditError("line %d: not JSON: %s" % (n, e))
        if not isinstance(obj, dict) or "transaction" not in obj:
            raise AuditError("line %d: not an audit record" % n)
        rec = Record("json", line + b"\n")
        rec.json = obj
        rec.unique_id = obj["transaction"].get("transaction_id")
        req = obj.get("request") or {}
        rec.request_line = req.get("request_line")
        rec.headers = list((req.get("headers") or {}).items())
        rec.status = (obj.get("response") or {}).get("status")
        rec.messages = list((obj.get("audit_data") or {}).get("messages") or [])
        letters = "A"
        for part, present in (("B", "request_line" in req), ("C", "body" in req), ("I", "fake_body" in req),
                              ("F", "status" in (obj.get("response") or {})),
                              ("E", "body" in (obj.get("response") or {})), ("H", "audit_data" in obj),
                              ("J", "uploads" in obj), ("K", "matched_rules" in obj)):
            if present:
                letters += part
        rec.parts = letters + "Z"
        out.append(rec)
    return out


def parse(data, fmt=None):
    if fmt is None:
        fmt = "json" if data.lstrip()[:1] == b"{" else "native"
    return parse_native(data) if fmt == "native" else parse_json(data)


INDEX_RE = re.compile(
    r'^(\S+) (\S+) (\S+) (\S+) \[([^\]]+)\] "((?:[^"\\]|\\.)*)" (\d+) (\d+) "((?:[^"\\]|\\.)*)" '
    r'"((?:[^"\\]|\\.)*)" (\S+) "((?:[^"\\]|\\.)*)" (/\S+) (\d+) (\d+) md5:([0-9a-f]{32}) ?$')


def parse_index(data, storage_dir, fmt=None):
    """Concurrent mode: every index line must name a file under storage_dir
    whose size and MD5 match and which holds exactly one complete record.
    Returns (records, index entries as dicts)."""
    recs, entries = [], []
    for n, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
        if not line:
            continue
        m = INDEX_RE.match(line)
        if not m:
            raise AuditError("index line %d is malformed: %r" % (n, line[:200]))
        e = {"host": m.group(1), "client": m.group(2), "request_line": m.group(6), "status": int(m.group(7)),
             "unique_id": m.group(11), "path": m.group(13), "offset": int(m.group(14)),
             "size": int(m.group(15)), "md5": m.group(16)}
        path = os.path.join(storage_dir, e["path"].lstrip("/"))
        try:
            with open(path, "rb") as f:
                body = f.read()
        except OSError as ex:
            raise AuditError("index line %d: %s" % (n, ex))
        if len(body) != e["size"]:
            raise AuditError("index line %d: %s has %d bytes, the index says %d" % (n, path, len(body), e["size"]))
        if hashlib.md5(body).hexdigest() != e["md5"]:
            raise AuditError("index line %d: MD5 of %s does not match" % (n, path))
        got = parse(body, fmt)
        if len(got) != 1:
            raise AuditError("index line %d: %s holds %d records" % (n, path, len(got)))
        got[0].index = e
        got[0].path = path
        recs.append(got[0])
        entries.append(e)
    return recs, entries


def json_get(obj, dotted):
    """a.b.c into nested dicts; lists by numeric index. KeyError when absent."""
    cur = obj
    for k in dotted.split("."):
        if isinstance(cur, list):
            cur = cur[int(k)]
        else:
            cur = cur[k]
    return cur
