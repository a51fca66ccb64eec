#!/usr/bin/env python3
"""crs2raw: every OWASP CRS regression test request as a raw HTTP request file.

For each stage of each test in CRS test trees of the go-ftw v2 schema (CRS
3.3.4's tests-v2 and CRS v4's tests/regression/tests) this writes the bytes
go-ftw v2.5.0 sends for that stage, one file per stage:

    OUT/<suite>/<rule>-<test>.s<stage>.http      e.g. OUT/v4.28.0/942100-3.s0.http

and OUT/index.jsonl, one JSON object a file: id, rule, test, stage, suite,
crs (version), file, source (test file), valid, marks, disabled, expect and,
when CRS's httpd-overrides.yaml replaced the test's expectation, override.

`valid` says whether Apache httpd 2.4 with its defaults (HttpProtocolOptions
Strict, LimitRequestLine/FieldSize 8190, LimitRequestFields 100) accepts the
whole request and hands it to the WAF; `marks` lists every reason a stage is
not a plain request (Apache's refusal, bytes after the end of the request,
something go-ftw would do that no file can hold). Nothing is left out: a stage
that cannot be represented is still written, with its marks.

Usage: crs2raw.py -o OUT [--crs-root DIR] [TESTS_DIR ...]
  --crs-root DIR  find the test trees below DIR as tests/crs/run.py does
                  (default: $BW_SHARED/crs, ../shared/crs beside the repository)
  TESTS_DIR       a test tree of its own (its suite name: the vX.Y.Z
                  component of its path, else its last component)

Last line: `crs2raw: N requests from M tests (K marked)`. Exit 1 when a test
file cannot be read: a converter that silently drops tests is of no use.
"""

import argparse
import base64
import fnmatch
import json
import os
import re
import sys
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


# ---------------------------------------------------------------- YAML
# go-ftw reads the files with go.yaml.in/yaml/v4 into typed Go structs, so
# every scalar it uses arrives as the text written (`port: 80` and
# `data: 1e3` are strings to it). PyYAML's BaseLoader does the same; two Go
# habits are added: a plain null (`~`, `null`, empty) is no value, and a
# repeated mapping key is an error (go-ftw then skips the file).

class GoYamlLoader(getattr(yaml, "CBaseLoader", yaml.BaseLoader)):
    pass


def _construct_str(loader, node):
    if node.style is None and node.value in ("", "~", "null", "Null", "NULL"):
        return None
    return node.value


def _construct_map(loader, node):
    out = {}
    for knode, vnode in node.value:
        key = loader.construct_object(knode, deep=True)
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, "mapping key %r already defined" % key, knode.start_mark)
        out[key] = loader.construct_object(vnode, deep=True)
    return out


GoYamlLoader.add_constructor("tag:yaml.org,2002:str", _construct_str)
GoYamlLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)


def go_bool(value):
    """A YAML boolean as yaml/v4 reads it into a Go bool; None when it is none."""
    if value is None:
        return None
    low = value.lower() if isinstance(value, str) else ""
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    raise ValueError("not a boolean: %r" % (value,))


def utf8(text):
    """A Go string's bytes: UTF-8, a lone surrogate becoming U+FFFD as Go's encoder does."""
    return re.sub("[\ud800-\udfff]", "\ufffd", text).encode("utf-8")


# ---------------------------------------------------------------- go-ftw's request
TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789"
                  b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
# Go's regexp `^POST|PUT|PATCH|DELETE$` (alternation binds loosest), which
# go-ftw uses to decide that a body-less request still gets Content-Length: 0.
METHOD_WITH_BODY = re.compile(rb"\APOST|PUT|PATCH|DELETE\Z")
# The one Go template form CRS tests use: {{ "1" | repeat 64200 }}.
REPEAT = re.compile(r'\{\{\s*"([^"\\]*)"\s*\|\s*repeat\s+(\d+)\s*\}\}')
KNOWN_INPUT = {"dest_addr", "port", "protocol", "uri", "follow_redirect", "version", "method",
               "headers", "ordered_headers", "data", "encoded_data", "save_cookie", "stop_magic",
               "autocomplete_headers", "encoded_request", "response", "virtual_host_mode"}


def same_header(name, wanted):
    """go-ftw compares Go-canonicalised names; a name with a byte outside the
    token set is left as it is by Go and so never equals a standard name."""
    raw = utf8(name)
    return all(c in TOKEN for c in raw) and raw.lower() == utf8(wanted).lower()


def query_escape(raw):
    """Go's url.QueryEscape: unreserved bytes stay, space is '+', the rest %XX."""
    out = bytearray()
    for c in raw:
        if c in b"-_.~" or 0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A:
            out.append(c)
        elif c == 0x20:
            out += b"+"
        else:
            out += b"%%%02X" % c
    return bytes(out)


def form_encode(data):
    """go-ftw's encodeDataParameters for a urlencoded body. Go's unescaping
    changes any text holding '%' or '+', which go-ftw takes for "already
    encoded" and sends as is; otherwise each key and value is escaped, and a
    trailing '&' is lost on the way."""
    if b"%" in data or b"+" in data:
        return data
    out = bytearray()
    for token in data.split(b"&") if not data.endswith(b"&") else data[:-1].split(b"&"):
        key, eq, value = token.partition(b"=")
        out += query_escape(key) + (b"=" + query_escape(value) if eq else b"") + b"&"
    return bytes(out[:-1])


def render_data(text, marks):
    """The body text after go-ftw's Go template pass (data is a template)."""
    out = REPEAT.sub(lambda m: m.group(1) * int(m.group(2)), text)
    if "{{" in out:
        marks.append("data holds a Go template action crs2raw does not evaluate; written as is")
    return out


def header_list(inp):
    """The stage's headers in go-ftw's order: ordered_headers as given, else
    the `headers` map sorted by name (Go's byte order)."""
    if inp.get("ordered_headers") is not None:
        return [(h.get("name") or "", h.get("value") or "") for h in inp["ordered_headers"]]
    headers = inp.get("headers") or {}
    return [(k, headers[k] or "") for k in sorted(headers, key=utf8)]


def build_request(inp, marks):
    """The bytes go-ftw v2.5.0 writes to the socket for one stage's input."""
    if inp.get("encoded_request"):
        if inp.get("data") is not None:
            marks.append("data and encoded_request both set: go-ftw refuses the stage")
        try:
            # Go's StdEncoding skips CR and LF and nothing else.
            return base64.b64decode(re.sub(r"[\r\n]", "", inp["encoded_request"]), validate=True)
        except ValueError as e:
            marks.append("encoded_request is not base64 (%s): go-ftw refuses the stage" % e)
            return b""
    if go_bool(inp.get("follow_redirect")):
        marks.append("follow_redirect: go-ftw takes the URI from the previous stage's response")
    auto = go_bool(inp.get("autocomplete_headers"))
    if auto is None:
        stop = go_bool(inp.get("stop_magic"))    # deprecated inverse
        auto = True if stop is None else not stop
    method = inp.get("method") if inp.get("method") is not None else "GET"
    uri = inp.get("uri") if inp.get("uri") is not None else "/"
    version = inp.get("version") if inp.get("version") is not None else "HTTP/1.1"
    headers = header_list(inp)
    if inp.get("data") is not None:
        data = utf8(render_data(inp["data"], marks))
    elif inp.get("encoded_data") is not None:
        data = base64.b64decode(re.sub(r"[\r\n]", "", inp["encoded_data"]), validate=True)
    else:
        data = b""

    def has(name):
        return any(same_header(n, name) for n, _ in headers)

    if data and auto:
        if not has("Content-Type"):
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        if any(same_header(n, "Content-Type") and v.lower() == "application/x-www-form-urlencoded"
               for n, v in headers):
            data = form_encode(data)
    # Multipart bodies get CRLF line ends, autocompletion or not; go-ftw
    # replaces every LF, so a CRLF already there becomes CR CR LF.
    if any(same_header(n, "Content-Type") and "multipart/form-data;" in v.lower()
           for n, v in headers):
        data = data.replace(b"\n", b"\r\n")
    if auto:
        if not has("Connection"):
            headers.append(("Connection", "close"))
        if not has("Content-Length") and (data or METHOD_WITH_BODY.search(utf8(method))):
            headers.append(("Content-Length", str(len(data))))
    out = [utf8("%s %s %s\r\n" % (method, uri, version))]
    out += [utf8(n) + b": " + utf8(v) + b"\r\n" for n, v in headers]
    return b"".join(out) + b"\r\n" + data


# ---------------------------------------------------------------- Apache's view
# What Apache httpd 2.4 (HttpProtocolOptions Strict LenientMethods Allow0.9,
# the default) checks before the WAF's phase 1 runs, and where it takes the
# request to end; checked against httpd 2.4.71 + mod_security2 with every
# request here. Later refusals (an invalid URI path, %2f with
# AllowEncodedSlashes Off: 400/404 after phase 1) are not modelled. The
# bulwark CLI's parser (tools/cli_request.c) follows the same rules, but
# takes bare LF line ends, data that ends before the blank line, and applies
# no size limits.
LIMIT_LINE = 8190       # LimitRequestLine
LIMIT_FIELD = 8190      # LimitRequestFieldSize
LIMIT_FIELDS = 100      # LimitRequestFields
PROTOCOL = re.compile(rb"HTTP/[1-9]\.[0-9]\Z")
SCHEME = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*:")
HOST = re.compile(rb"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::[0-9]+)?\Z")
HOST_PORT = re.compile(rb"(?:\[[^]]*\]|[^:\[\]]+):[0-9]+\Z")


class Refused(Exception):
    """Apache answers with an error instead of handing the request on."""


def take_line(raw, pos):
    """(line without its CRLF, position after it); Refused at a bare LF or
    when no line end comes (Apache would wait until its Timeout)."""
    end = raw.find(b"\n", pos)
    if end < 0:
        raise Refused("the request ends inside a line (Apache waits, then times out)")
    if end == pos or raw[end - 1] != 0x0D:
        raise Refused("bare LF line end (strict HTTP wants CRLF)")
    return raw[pos:end - 1], end + 1


def check_request_line(line):
    """(method, target, protocol) of a request line; protocol b"" for HTTP/0.9."""
    if len(line) > LIMIT_LINE:
        raise Refused("request line longer than LimitRequestLine (414)")
    parts = line.split(b" ")
    if line[:1].isspace():
        raise Refused("white space before the method")
    if not parts[0] or any(c not in TOKEN for c in parts[0]):
        raise Refused("method is not a token")
    if len(parts) < 2 or not parts[1]:
        raise Refused("no request target, or more than one space after the method")
    if any(c <= 0x20 or c == 0x7F for c in parts[1]):
        raise Refused("control character in the request target")
    if len(parts) == 2 or (len(parts) == 3 and parts[2] == b""):
        if parts[0] != b"GET":
            raise Refused("HTTP/0.9 request line with a method other than GET")
        return parts[0], parts[1], b""
    if len(parts) > 3:
        raise Refused("extra white space or text in the request line")
    if not PROTOCOL.match(parts[2]):
        raise Refused("protocol %r is not HTTP/<1-9>.<0-9>" % parts[2].decode("latin-1"))
    return parts[0], parts[1], parts[2]


def target_host(method, target):
    """The host an absolute http:// target names (None when it names none);
    Refused for a target httpd cannot take (it answers 400 before any
    module runs): a fragment, a relative path, '*' but for OPTIONS."""
    if method == b"CONNECT":
        if not HOST_PORT.match(target):
            raise Refused("CONNECT target is not host:port")
        return None
    if target == b"*":
        if method != b"OPTIONS":
            raise Refused("target * with a method other than OPTIONS")
        return None
    if b"#" in target:
        raise Refused("target with a fragment")
    scheme = SCHEME.match(target)
    rest = target[scheme.end():] if scheme else target
    host = None
    if scheme and rest.startswith(b"//"):
        authority = re.match(rb"//([^/?]*)", rest).group(1)
        rest = rest[2 + len(authority):]
        hostport = authority.rpartition(b"@")[2]
        if not re.match(rb"(?:\[[^]]*\]|[^:\[][^:]*|)(?::[0-9]*)?\Z", hostport):
            raise Refused("bad port in the target")
        if scheme.group().lower() == b"http:":
            host = hostport
    if rest[:1] not in (b"", b"/", b"?"):
        raise Refused("target is no /path, absolute URI, * (OPTIONS) or host:port (CONNECT)")
    return host


def check_host(protocol, headers, uri_host):
    """httpd's checks of the host a request names (vhost.c, protocol.c)."""
    host = headers.get(b"host")
    if not uri_host and host:
        if not HOST.match(host) or b".." in host:
            raise Refused("malformed Host header")
    if protocol == b"HTTP/1.1" and host is None:
        raise Refused("HTTP/1.1 request without Host")
    if protocol >= b"HTTP/1.1" and not host and not uri_host:
        raise Refused("request without a host name (Host or absolute target)")


def read_headers(raw, pos):
    """The header fields as Apache keeps them (folded lines joined, values
    trimmed, repeated names merged with ", "), and the position after them."""
    fields = []
    while True:
        line, pos = take_line(raw, pos)
        if not line:
            break
        if len(line) > LIMIT_FIELD:
            raise Refused("header line longer than LimitRequestFieldSize")
        if line[:1] in (b" ", b"\t"):
            if not fields:
                raise Refused("folded line before the first header")
            cont = line.strip(b" \t")
            if cont:
                fields[-1][1] += (b" " if fields[-1][1] else b"") + cont
            continue
        name, colon, value = line.partition(b":")
        if not colon:
            raise Refused("header line without ':'")
        if not name or any(c not in TOKEN for c in name):
            raise Refused("header name %r is not a token" % name.decode("latin-1"))
        fields.append([name, value.strip(b" \t")])
    if len(fields) > LIMIT_FIELDS:
        raise Refused("more header lines than LimitRequestFields")
    merged = {}
    for name, value in fields:
        if any((c < 0x20 and c != 0x09) or c == 0x7F for c in value):
            raise Refused("control character in the value of %s" % name.decode("latin-1"))
        low = name.lower()
        merged[low] = merged[low] + b", " + value if low in merged else value
    return merged, pos


def chunked_end(raw, pos):
    """Position after a chunked body (and its trailer), as Apache reads it."""
    while True:
        line, pos = take_line(raw, pos)
        m = re.match(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;.*)?\Z", line)
        if not m:
            raise Refused("malformed chunk size line")
        size = int(m.group(1), 16)
        if size == 0:
            break
        if len(raw) - pos < size + 2:
            raise Refused("chunked body ends early (Apache waits, then times out)")
        if raw[pos + size:pos + size + 2] != b"\r\n":
            raise Refused("chunk data not followed by CRLF")
        pos += size + 2
    while True:                      # trailer fields up to an empty line
        line, pos = take_line(raw, pos)
        if not line:
            return pos


def apache_view(raw):
    """(problem or None, bytes after the end of the request)."""
    try:
        pos = 0
        while raw.startswith(b"\r\n", pos):          # Apache skips blank lines first
            pos += 2
        line, pos = take_line(raw, pos)
        method, target, protocol = check_request_line(line)
        uri_host = target_host(method, target)
        if not protocol:                               # HTTP/0.9: no headers follow
            return None, len(raw) - pos
        headers, pos = read_headers(raw, pos)
        check_host(protocol, headers, uri_host)
        expect = headers.get(b"expect")
        if expect and expect.lower() != b"100-continue":
            raise Refused("Expect other than 100-continue (417)")
        te = headers.get(b"transfer-encoding")
        if te is not None:
            if te.split(b",")[-1].strip(b" \t").lower() != b"chunked":
                raise Refused("Transfer-Encoding does not end in chunked")
            pos = chunked_end(raw, pos)
        elif b"content-length" in headers:
            cl = headers[b"content-length"]
            if not re.match(rb"[0-9]{1,18}\Z", cl):
                raise Refused("invalid Content-Length %r" % cl.decode("latin-1"))
            if len(raw) - pos < int(cl):
                raise Refused("body shorter than Content-Length (Apache waits, then times out)")
            pos += int(cl)
        return None, len(raw) - pos
    except Refused as e:
        return str(e), 0


# ---------------------------------------------------------------- expectations
def expectation(out):
    """What a stage's output expects, in go-ftw's terms (log_contains and
    no_log_contains become the regexes go-ftw turns them into)."""
    out = out or {}
    log = out.get("log") or {}
    exp = {}
    for key in ("expect_ids", "no_expect_ids"):
        if log.get(key) is not None:
            exp[key] = [int(i) for i in log[key]]
    for key in ("match_regex", "no_match_regex"):
        if log.get(key):
            exp[key] = log[key]
    if out.get("log_contains") and "expect_ids" not in exp and "match_regex" not in exp:
        exp["match_regex"] = out["log_contains"]
    if out.get("no_log_contains") and "no_expect_ids" not in exp and "no_match_regex" not in exp:
        exp["no_match_regex"] = out["no_log_contains"]
    if out.get("status"):
        exp["status"] = int(out["status"])
    if out.get("response_contains"):
        exp["response_contains"] = out["response_contains"]
    for key in ("expect_error", "retry_once", "isolated"):
        if go_bool(out.get(key)):
            exp[key] = True
    return exp


def load_overrides(path):
    """CRS's platform overrides: {(rule, test): [(stage ids or None, output, reason)]}."""
    doc = yaml.load(open(path, "rb"), Loader=GoYamlLoader) or {}
    table = {}
    for o in doc.get("test_overrides") or []:
        stages = [int(s) for s in o["stage_ids"]] if o.get("stage_ids") else None
        for t in o.get("test_ids") or []:
            table.setdefault((int(o["rule_id"]), int(t)), []).append(
                (stages, o.get("output"), o.get("reason") or ""))
    return table


# ---------------------------------------------------------------- the trees
def suite_name(tests_dir):
    for part in reversed(os.path.abspath(tests_dir).split(os.sep)):
        if re.match(r"v?\d+\.\d+(\.\d+)?\Z", part):
            return part if part.startswith("v") else "v" + part
    return os.path.basename(os.path.abspath(tests_dir))


def find_trees(crs_root):
    """Test trees below a CRS data folder: <version>/tests-v2 (3.3.4,
    converted to the v2 schema) and <version>/tests/regression/tests (v4)."""
    trees = []
    for version in sorted(os.listdir(crs_root)):
        # 3.3.4's tests/regression/tests is the legacy ftw format: its
        # tests-v2 twin comes first and is the one taken.
        for sub in ("tests-v2", os.path.join("tests", "regression", "tests")):
            path = os.path.join(crs_root, version, sub)
            if os.path.isdir(path):
                trees.append(path)
                break
    return trees


def test_files(tests_dir):
    """go-ftw's `-d DIR`: every DIR/**/*.y*ml, in a stable order."""
    for root, dirs, files in os.walk(tests_dir):
        dirs.sort()
        for name in sorted(files):
            if fnmatch.fnmatch(name, "*.y*ml"):
                yield os.path.join(root, name)


def convert_tree(tests_dir, out_dir, index, counts):
    suite = suite_name(tests_dir)
    overrides_path = os.path.join(os.path.dirname(tests_dir), "httpd-overrides.yaml")
    overrides = load_overrides(overrides_path) if os.path.isfile(overrides_path) else {}
    os.makedirs(os.path.join(out_dir, suite), exist_ok=True)
    seen = {}
    for path in test_files(tests_dir):
        source = os.path.relpath(path, tests_dir)
        doc = yaml.load(open(path, "rb"), Loader=GoYamlLoader)
        if not doc or not doc.get("tests"):
            print("crs2raw: %s/%s: no tests in this file" % (suite, source))
            continue
        rule = int(doc.get("rule_id") or re.search(r"\d+", os.path.basename(path)).group())
        disabled = go_bool((doc.get("meta") or {}).get("enabled")) is False
        for pos, test in enumerate(doc["tests"]):
            num = int(test.get("test_id") or 0) or pos + 1
            tid = "%d-%d" % (rule, num)
            if tid in seen:
                raise ValueError("test %s in both %s and %s" % (tid, seen[tid], source))
            seen[tid] = source
            counts["tests"] += 1
            stages = test.get("stages") or []
            for s, stage in enumerate(stages):
                if not isinstance(stage.get("input"), dict):
                    raise ValueError("%s: test %s: a stage without input: not the go-ftw v2 "
                                     "schema (the legacy ftw format?)" % (source, tid))
                inp = stage["input"]
                marks = ["input field %r is not go-ftw's: ignored" % k
                         for k in sorted(inp) if k not in KNOWN_INPUT]
                raw = build_request(inp, marks)
                problem, extra = apache_view(raw)
                if problem:
                    marks.append("Apache refuses it: " + problem)
                if extra:
                    marks.append("%d bytes after the end of the request are not part of it" % extra)
                name = os.path.join(suite, "%s.s%d.http" % (tid, s))
                with open(os.path.join(out_dir, name), "wb") as f:
                    f.write(raw)
                rec = dict(id=tid, rule=rule, test=num, stage=s, stages=len(stages), suite=suite,
                           crs=suite.lstrip("v"), file=name, source=source, valid=problem is None,
                           marks=marks, disabled=disabled, expect=expectation(stage.get("output")))
                for stage_ids, output, reason in overrides.get((rule, num), []):
                    if stage_ids is None or s in stage_ids:
                        rec["expect"], rec["override"] = expectation(output), reason
                index.write(json.dumps(rec, sort_keys=True) + "\n")
                counts["requests"] += 1
                counts["marked"] += bool(marks)
                counts["invalid"] += problem is not None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--out", required=True, help="output directory")
    p.add_argument("--crs-root", help="CRS data folder (default: $BW_SHARED/crs or ../shared/crs)")
    p.add_argument("tests", nargs="*", help="test trees of their own")
    a = p.parse_args(argv)
    trees = list(a.tests)
    if a.crs_root or not trees:
        root = a.crs_root or os.path.join(
            os.environ.get("BW_SHARED", os.path.join(REPO, "..", "shared")), "crs")
        trees += find_trees(root)
        if not trees:
            print("crs2raw: no test trees below %s" % root, file=sys.stderr)
            return 1
    t0 = time.monotonic()
    os.makedirs(a.out, exist_ok=True)
    counts = dict(tests=0, requests=0, marked=0, invalid=0)
    suites = [suite_name(t) for t in trees]
    if len(set(suites)) < len(suites):
        print("crs2raw: two test trees would share a suite name: %s" % " ".join(trees),
              file=sys.stderr)
        return 1
    try:
        with open(os.path.join(a.out, "index.jsonl"), "w") as index:
            for tree in trees:
                before = dict(counts)
                convert_tree(tree, a.out, index, counts)
                print("crs2raw: %s: %d requests from %d tests (%d marked, %d refused by Apache)"
                      % (suite_name(tree), *(counts[k] - before[k]
                                             for k in ("requests", "tests", "marked", "invalid"))))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, yaml.YAMLError) as e:
        print("crs2raw: conversion failed: %s" % e, file=sys.stderr)
        return 1
    print("crs2raw: took %.1fs" % (time.monotonic() - t0))
    print("crs2raw: %d requests from %d tests (%d marked)"
          % (counts["requests"], counts["tests"], counts["marked"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
