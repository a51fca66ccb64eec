#!/usr/bin/env python3
"""How `bulwark eval` reads a raw request (tools/cli_request.c), case by case.

Each case is a request and either what the engine must see (method,
protocol, the Foo header, the number of Content-Length headers, the body as
REQUEST_BODY, the request line) or the words its parse error must contain.
The engine's view is read back through rules that log each variable.

Usage: parser_cases.py --bulwark BUILD/bulwark
Last line: `parser: N passed, M failed`; exit 1 on any failure.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# rule id -> what it shows; MATCHED_VAR of a rule that always matches.
RULES = """SecRequestBodyAccess On
SecRule REQUEST_METHOD "@unconditionalMatch" "id:1,phase:1,pass,log,ctl:forceRequestBodyVariable=On,logdata:'%{MATCHED_VAR}'"
SecRule REQUEST_PROTOCOL "@unconditionalMatch" "id:2,phase:1,pass,log,logdata:'%{MATCHED_VAR}'"
SecRule REQUEST_HEADERS:Foo "@unconditionalMatch" "id:3,phase:1,pass,log,logdata:'%{MATCHED_VAR}'"
SecRule &REQUEST_HEADERS:Content-Length "@unconditionalMatch" "id:4,phase:1,pass,log,logdata:'%{MATCHED_VAR}'"
SecRule REQUEST_BODY "@unconditionalMatch" "id:5,phase:2,pass,log,logdata:'%{MATCHED_VAR}'"
SecRule REQUEST_LINE "@unconditionalMatch" "id:6,phase:1,pass,log,logdata:'%{MATCHED_VAR}'"
SecRule REQUEST_URI_RAW "@unconditionalMatch" "id:7,phase:1,pass,log,logdata:'%{MATCHED_VAR}'"
"""
SHOWS = {1: "method", 2: "protocol", 3: "foo", 4: "cl_count", 5: "body", 6: "line", 7: "uri"}

H = b"Host: x\r\n"
FORM = b"Content-Type: application/x-www-form-urlencoded\r\n"

# (name, request, expected view or error words). A view lists only the
# variables the case is about; None: the variable is absent.
CASES = [
    ("plain GET", b"GET /a?b=1 HTTP/1.1\r\n" + H + b"\r\n",
     dict(method="GET", protocol="HTTP/1.1", uri="/a?b=1", line="GET /a?b=1 HTTP/1.1", body="")),
    ("bare LF line ends (lenient)", b"GET / HTTP/1.1\nHost: x\nFoo: 1\n\n", dict(foo="1")),
    ("blank lines before the request line", b"\r\n\r\nGET / HTTP/1.0\r\nFoo: 1\r\n\r\n", dict(foo="1")),
    ("no blank line after the headers (lenient)", b"GET / HTTP/1.0\r\nFoo: 1\r\n", dict(foo="1")),
    ("empty", b"\r\n\r\n", "empty request"),
    ("white space before the method", b" GET / HTTP/1.1\r\n" + H + b"\r\n", "white space before the method"),
    ("tab before the method", b"\tGET / HTTP/1.1\r\n" + H + b"\r\n", "white space before the method"),
    ("method not a token", b"GE(T / HTTP/1.1\r\n" + H + b"\r\n", "method is not a token"),
    ("'|' is a token character", b"|GET / HTTP/1.1\r\n" + H + b"\r\n", dict(method="|GET")),
    ("two spaces after the method", b"GET  / HTTP/1.1\r\n" + H + b"\r\n", "more than one space"),
    ("tab in the target", b"GET /a\tb HTTP/1.1\r\n" + H + b"\r\n", "control character in the request target"),
    ("space after the protocol", b"GET / HTTP/1.1 \r\n" + H + b"\r\n", "is not HTTP/"),
    ("lower-case protocol", b"GET / http/1.1\r\n" + H + b"\r\n", "is not HTTP/"),
    ("HTTP/0.8", b"GET / HTTP/0.8\r\n" + H + b"\r\n", "is not HTTP/"),
    ("HTTP/2 without minor", b"GET / HTTP/2\r\n" + H + b"\r\n", "is not HTTP/"),
    ("HTTP/4.0 is taken", b"GET / HTTP/4.0\r\n" + H + b"\r\n", dict(protocol="HTTP/4.0")),
    ("HTTP/0.9: no headers", b"GET /x\r\nFoo: 1\r\n\r\n",
     dict(method="GET", protocol="HTTP/0.9", uri="/x", foo=None)),
    ("HTTP/0.9 with a trailing space", b"GET /x \r\nFoo: 1\r\n\r\n", dict(protocol="HTTP/0.9", foo=None)),
    ("HTTP/0.9 POST", b"POST /x\r\n\r\n", "other than GET"),
    ("HTTP/1.1 needs Host", b"GET / HTTP/1.1\r\nFoo: 1\r\n\r\n", "without Host"),
    ("HTTP/1.0 does not", b"GET / HTTP/1.0\r\nFoo: 1\r\n\r\n", dict(foo="1")),
    ("absolute target", b"GET http://x/p?q=1 HTTP/1.1\r\n" + H + b"\r\n", dict(uri="http://x/p?q=1")),
    ("HTTP/2.0 with an absolute target and no Host", b"GET http://x/ HTTP/2.0\r\n\r\n",
     dict(protocol="HTTP/2.0")),
    ("HTTP/2.0 with neither", b"GET / HTTP/2.0\r\n\r\n", "without a host name"),
    ("HTTP/1.1 with an empty Host", b"GET / HTTP/1.1\r\nHost: \r\n\r\n", "without a host name"),
    ("HTTP/1.0 with an empty Host", b"GET / HTTP/1.0\r\nHost:\r\nFoo: 1\r\n\r\n", dict(foo="1")),
    ("Host with '..'", b"GET / HTTP/1.1\r\nHost: a..b\r\n\r\n", "malformed Host header"),
    ("Host with '%'", b"GET / HTTP/1.1\r\nHost: localhost%00\r\n\r\n", "malformed Host header"),
    ("Host with an empty port", b"GET / HTTP/1.1\r\nHost: localhost:\r\n\r\n", "malformed Host header"),
    ("two Host headers", b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", "malformed Host header"),
    ("Host [v6]:port", b"GET / HTTP/1.1\r\nHost: [::1]:80\r\nFoo: 1\r\n\r\n", dict(foo="1")),
    ("Host with '_' and '-'", b"GET / HTTP/1.1\r\nHost: -a_b.c.:8080\r\nFoo: 1\r\n\r\n", dict(foo="1")),
    ("an http:// target's host replaces Host", b"GET http://x/ HTTP/1.1\r\nHost: a%41\r\nFoo: 1\r\n\r\n",
     dict(foo="1")),
    ("an https:// target's does not", b"GET https://x/ HTTP/1.1\r\nHost: a%41\r\n\r\n", "malformed Host header"),
    ("target with a fragment", b"GET /a?b#c HTTP/1.1\r\n" + H + b"\r\n", "target with a fragment"),
    ("target * for GET", b"GET * HTTP/1.1\r\n" + H + b"\r\n", "other than OPTIONS"),
    ("target * for OPTIONS", b"OPTIONS * HTTP/1.1\r\n" + H + b"\r\n", dict(uri="*")),
    ("relative target", b"GET index.html HTTP/1.1\r\n" + H + b"\r\n", "target is no /path"),
    ("backslash target", b"GET \\ HTTP/1.1\r\n" + H + b"\r\n", "target is no /path"),
    ("scheme with a relative path", b"GET x:y HTTP/1.1\r\n" + H + b"\r\n", "target is no /path"),
    ("scheme with an absolute path", b"GET http:/x HTTP/1.1\r\n" + H + b"\r\n", dict(uri="http:/x")),
    ("query alone", b"GET ?a=1 HTTP/1.1\r\n" + H + b"\r\n", dict(uri="?a=1")),
    ("bad port in the target", b"GET http://x:abc/ HTTP/1.1\r\n" + H + b"\r\n", "bad port in the target"),
    ("Expect: 100-continue", b"GET / HTTP/1.1\r\n" + H + b"Expect: 100-Continue\r\nFoo: 1\r\n\r\n", dict(foo="1")),
    ("another Expect", b"GET / HTTP/1.1\r\n" + H + b"Expect: foo\r\n\r\n", "Expect other than 100-continue"),
    ("CONNECT host:port", b"CONNECT example.com:443 HTTP/1.1\r\n" + H + b"\r\n",
     dict(uri="example.com:443")),
    ("CONNECT [v6]:port", b"CONNECT [::1]:443 HTTP/1.1\r\n" + H + b"\r\n", dict(uri="[::1]:443")),
    ("CONNECT without a port", b"CONNECT example.com HTTP/1.1\r\n" + H + b"\r\n", "not host:port"),
    ("repeated header merged into the first", b"GET / HTTP/1.1\r\nFoo: a\r\n" + H + b"FOO: b\r\n\r\n",
     dict(foo="a, b")),
    ("value trimmed", b"GET / HTTP/1.1\r\n" + H + b"Foo: \t a b \t\r\n\r\n", dict(foo="a b")),
    ("folded value", b"GET / HTTP/1.1\r\n" + H + b"Foo: a\r\n \t b\r\n\tc\r\n\r\n", dict(foo="a b c")),
    ("folded line first", b"GET / HTTP/1.1\r\n b\r\n" + H + b"\r\n", "folded line before the first header"),
    ("white space before ':'", b"GET / HTTP/1.1\r\n" + H + b"Foo : 1\r\n\r\n", "is not a token"),
    ("no ':'", b"GET / HTTP/1.1\r\n" + H + b"Foo\r\n\r\n", "without ':'"),
    ("control character in a value", b"GET / HTTP/1.1\r\n" + H + b"Foo: a\x01b\r\n\r\n",
     "control character in the value of header Foo"),
    ("DEL in a value", b"GET / HTTP/1.1\r\n" + H + b"Foo: a\x7fb\r\n\r\n", "control character"),
    ("Content-Length body, bytes after it not part of it",
     b"POST / HTTP/1.1\r\n" + H + FORM + b"Content-Length: 7\r\n\r\nhi=testGARBAGE", dict(body="hi=test")),
    ("no Content-Length: no body", b"POST / HTTP/1.1\r\n" + H + FORM + b"\r\nhi=test",
     dict(body="", cl_count="0")),
    ("body shorter than Content-Length", b"POST / HTTP/1.1\r\n" + H + FORM + b"Content-Length: 9\r\n\r\nhi=test",
     "the body has 7 bytes, Content-Length says 9"),
    ("Content-Length not a number", b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 3;\r\n\r\nabc",
     "invalid Content-Length"),
    ("two Content-Lengths merge into an invalid one",
     b"POST / HTTP/1.1\r\n" + H + b"Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
     'invalid Content-Length "3, 3"'),
    ("chunked, with an extension and a trailer",
     b"POST / HTTP/1.1\r\n" + H + FORM + b"Transfer-Encoding: chunked\r\n\r\n"
     b"4\r\nhi=t\r\n3 ;x=y\r\nest\r\n0\r\nTrailer-Field: 1\r\n\r\nGARBAGE", dict(body="hi=test")),
    ("chunked drops Content-Length",
     b"POST / HTTP/1.1\r\n" + H + FORM + b"Content-Length: 99\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"
     b"7\r\nhi=test\r\n0\r\n\r\n", dict(body="hi=test", cl_count="0")),
    ("chunked with bare LF (lenient)",
     b"POST / HTTP/1.1\n" + b"Host: x\n" + b"Content-Type: application/x-www-form-urlencoded\n"
     b"Transfer-Encoding: chunked\n\n7\nhi=test\n0\n\n", dict(body="hi=test")),
    ("Transfer-Encoding not ending in chunked",
     b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", "does not end in chunked"),
    ("chunk size with 0x", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n0x7\r\nhi=test\r\n0\r\n\r\n",
     "malformed chunk size line"),
    ("chunk size not hex", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
     "malformed chunk size line"),
    ("chunk longer than the data", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\na\r\nhi=test\r\n",
     "ends early"),
    ("chunk without its line end", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n2\r\nhi=test\r\n0\r\n\r\n",
     "not followed by a line end"),
    ("no last chunk", b"POST / HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\n7\r\nhi=test\r\n",
     "ends early"),
]


def view(bulwark, rules, raw):
    """(variables seen, None) or (None, the parse error)."""
    r = subprocess.run([bulwark, "eval", "--rules", rules], input=raw,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode == 2:
        return None, r.stderr.decode("utf-8", "replace").strip()
    seen = {name: None for name in SHOWS.values()}
    for m in json.loads(r.stdout)["matched"]:
        seen[SHOWS[m["id"]]] = m["data"]
    if seen["body"] is None and seen["method"] is not None:
        seen["body"] = ""           # REQUEST_BODY is absent when the body is empty
    return seen, None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bulwark", required=True, help="the bulwark CLI")
    a = p.parse_args(argv)
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        f.write(RULES)
    passed = failed = 0
    try:
        for name, raw, want in CASES:
            seen, err = view(a.bulwark, f.name, raw)
            if isinstance(want, str):
                ok = err is not None and want in err
                got = err if err is not None else "parsed: %r" % seen
            else:
                ok = seen is not None and all(seen[k] == v for k, v in want.items())
                got = err if seen is None else {k: seen[k] for k in want}
            if ok:
                passed += 1
            else:
                failed += 1
                print("parser: FAIL %s: want %r, got %r" % (name, want, got))
    finally:
        os.unlink(f.name)
    print("parser: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
