#!/usr/bin/env python3
"""Writes guess.yaml and guess-off.yaml beside this file: the requests of
the body-guessing tests as raw bytes (go-ftw's encoded_request, base64),
because they need exact framing go-ftw's `data` cannot express (no
Content-Type at all, UTF-16 bytes, a real PNG). Edit here, run, commit the
YAML files with it.

Usage: tests/regression/bodies/gen_guess.py
"""
import base64
import hashlib
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def png():
    """A real 4x4 RGB PNG."""
    def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    raw = b"".join(b"\0" + b"\xff\x00\x00" * 4 for _ in range(4))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def req(path, body, ctype=None):
    h = "POST %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bulwark-regression\r\nAccept: */*\r\n" % path
    if ctype: h += "Content-Type: %s\r\n" % ctype
    h += "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    return h.encode() + body


def mp(fname, ctype, content, field="f"):
    return (b'--B\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n--B\r\nContent-Disposition: form-data; name="%s"; filename="%s"\r\nContent-Type: %s\r\n\r\n' % (field.encode(), fname.encode(), ctype.encode())) + content + b"\r\n--B--\r\n"
SQ = "1' UNION SELECT password FROM users--"
cases = []


def case(desc, path, body, ctype, status, expect=(), noexpect=(), regex=None, digest=False, comment=None):
    cases.append(dict(desc=desc, raw=req(path, body, ctype), status=status, expect=list(expect), noexpect=list(noexpect), regex=regex, digest=hashlib.sha256(body).hexdigest() if digest else None, comment=comment))
j = ('{"q":"%s"}' % SQ).encode()
case("JSON without a Content-Type: guessed, its values inspected", "/guess/json-notype", j, None, 403, [111105, 111104], regex="guessed JSON as JSON")
case("JSON declared text/plain (no processor claims it): guessed", "/guess/json-text", j, "text/plain", 403, [111105, 111104], regex="guessed JSON as JSON")
case("JSON declared application/x-www-form-urlencoded: read as JSON too, the form arguments kept", "/guess/json-form", j, "application/x-www-form-urlencoded", 403, [111105, 111104], regex="guessed JSON as URLENCODED")
case("URL-encoded without a Content-Type: guessed", "/guess/form-notype", b"q=1%27+UNION+SELECT+password+FROM+users--&x=1", None, 403, [111105, 111104], regex="guessed URLENCODED as URLENCODED")
case("XML without a Content-Type: guessed, XML:/* inspected", "/guess/xml-notype", ("<a><q>%s</q></a>" % SQ).encode(), None, 403, [111105, 111104], regex="guessed XML as XML")
case("prose without a Content-Type: no format, inspected raw as REQUEST_BODY", "/guess/raw", ("note: %s" % SQ).encode(), None, 403, [111106], [111105])
case("JSON-shaped body the parser refuses: a body error like a declared one", "/guess/bad-json", b'{"q":"x",}', None, 400, [111103])
case("HTML prose is no XML document: inspected raw, passes", "/guess/html", b"<p>Hello</p><p>see you</p>", None, 200, [], [111103, 111105], digest=True)
case("benign JSON without a Content-Type passes unchanged", "/guess/json-benign", b'{"name":"Alice","age":30}', None, 200, [111105], [111104], digest=True)
case("benign text/plain note passes unchanged", "/guess/note", b"Remember to buy milk. Meeting at 10.", "text/plain", 200, [], [111105, 111103], digest=True)
case("uploaded text file: its content is FILES_CONTENT", "/guess/upload-text", mp("n.txt", "text/plain", SQ.encode()), "multipart/form-data; boundary=B", 403, [111104], regex="FILES_CONTENT:f")
case("uploaded file declared octet-stream with text content: FILES_CONTENT", "/guess/upload-octet", mp("n.bin", "application/octet-stream", SQ.encode()), "multipart/form-data; boundary=B", 403, [111104], regex="FILES_CONTENT:f")
p = png()
case("uploaded PNG (the payload in its bytes too): binary, not decoded, passes unchanged", "/guess/upload-png", mp("a.png", "image/png", p + SQ.encode()), "multipart/form-data; boundary=B", 200, [], [111104, 111103], digest=True)
case("text file beyond SecUploadTextLimit (1024): the payload past the limit is not seen", "/guess/upload-long", mp("long.txt", "text/plain", b"a" * 1100 + SQ.encode()), "multipart/form-data; boundary=B", 200, [], [111104], digest=True)
u16 = ('{"q":"%s"}' % SQ).encode("utf-16le")
case("JSON in UTF-16LE (charset=utf-16le): decoded for inspection", "/guess/utf16le", u16, "application/json; charset=utf-16le", 403, [111104])
case("JSON in UTF-16 with a byte order mark, no charset: decoded", "/guess/utf16-bom", ('{"q":"%s"}' % SQ).encode("utf-16"), "application/json", 403, [111104])
case("URL-encoded body in UTF-16BE (charset=utf-16be): decoded", "/guess/form-utf16be", ("q=%s" % SQ).encode("utf-16-be"), "application/x-www-form-urlencoded; charset=utf-16be", 403, [111104])
case("benign UTF-16 JSON passes, the bytes forwarded unchanged", "/guess/utf16-benign", '{"name":"Zoë"}'.encode("utf-16"), "application/json; charset=utf-16", 200, [], [111103, 111104], digest=True)
case("UTF-16 cut in the middle of a code unit: a body error", "/guess/utf16-odd", '{"a":1}'.encode("utf-16le")[:-1], "application/json; charset=utf-16le", 400, [111103], regex="UTF-16LE body")
case("JSON-shaped body without a type, beyond SecRequestBodyNoFilesLimit (4096 here): refused like a declared one", "/guess/json-big", b'{"a":"' + b"x" * 5000 + b'"}', None, 413)
case("a body of no text format beyond SecRequestBodyNoFilesLimit passes as without guessing", "/guess/raw-big", b"\x00\x01" * 2600, None, 200, [], [111103], digest=True)
case("text of no format beyond the limit passes too; REQUEST_BODY holds its first 4096 bytes", "/guess/raw-big-text", b"x" * 4100 + SQ.encode() + b"y" * 1000, None, 200, [], [111106], digest=True)
case("... and what is within them is still inspected", "/guess/raw-big-text2", SQ.encode() + b"y" * 5000, None, 403, [111106])
out = ["---", "meta:", "  author: \"bulwark\"",
       "  description: 'Bodies inspected as the backend reads them: SecRequestBodyProcessorGuess, SecUploadTextLimit (FILES_CONTENT), UTF-16/32 bodies decoded. Generated requests (encoded_request: the raw bytes, base64).'",
       "rule_id: 111101", "tests:"]
for i, c in enumerate(cases, 1):
    out += ["  - test_id: %d" % i, "    desc: '%s'" % c["desc"].replace("'", "''"), "    stages:", "      - input:",
            '          dest_addr: "127.0.0.1"', "          port: 80",
            "          encoded_request: '%s'" % base64.b64encode(c["raw"]).decode(), "        output:", "          status: %d" % c["status"]]
    if c["digest"]:
        out.append("          response_contains: '\"sha256\": \"%s\"'" % c["digest"])
    if c["expect"] or c["noexpect"] or c["regex"]:
        out.append("          log:")
        if c["expect"]: out.append("            expect_ids: [%s]" % ", ".join(map(str, c["expect"])))
        if c["noexpect"]: out.append("            no_expect_ids: [%s]" % ", ".join(map(str, c["noexpect"])))
        if c["regex"]: out.append("            match_regex: '%s'" % c["regex"].replace("'", "''"))
open(os.path.join(HERE, "guess.yaml"), "w").write("\n".join(out) + "\n")



# ---- SecRequestBodyProcessorGuess Off
def req_b64(path, body, ctype=None):
    return base64.b64encode(req(path, body, ctype)).decode()
off_cases = [
 ("guessing off: a JSON body without a Content-Type is not parsed (mod_security2 behaviour)", req_b64("/off/json-notype", ('{"q":"%s"}' % SQ).encode()), 200, [], [111204, 111205]),
 ("guessing off: nor is one declared text/plain", req_b64("/off/json-text", ('{"q":"%s"}' % SQ).encode(), "text/plain"), 200, [], [111204, 111205]),
 ("guessing off: a JSON body declared URL-encoded gives form arguments only", req_b64("/off/json-form", b'{"q":"x"}', "application/x-www-form-urlencoded"), 200, [111206], [111205]),
]
out = ["---", "meta:", '  author: "bulwark"', "  description: 'SecRequestBodyProcessorGuess Off (the engine default): bodies are parsed as mod_security2 parses them, by their Content-Type only.'", "rule_id: 111201", "tests:"]
for i,(d,r,st,ex,no) in enumerate(off_cases,1):
    out += ["  - test_id: %d" % i, "    desc: '%s'" % d, "    stages:", "      - input:", '          dest_addr: "127.0.0.1"', "          port: 80", "          encoded_request: '%s'" % r, "        output:", "          status: %d" % st, "          log:"]
    if ex: out.append("            expect_ids: [%s]" % ", ".join(map(str,ex)))
    out.append("            no_expect_ids: [%s]" % ", ".join(map(str,no)))
open(os.path.join(HERE, "guess-off.yaml"), "w").write("\n".join(out)+"\n")
