#!/usr/bin/env python3
"""Writes the benchmark's recorded requests into tools/perf/requests/.

Each workload is one raw HTTP/1.1 request (`NAME.http`, CRLF line ends,
Content-Length filled in), the format `bulwark eval --request` reads:

    get.http          GET with the headers a desktop browser sends
    json-1k.http      POST of a ~1 KB JSON order (~35 values)
    json-27k.http     POST of a ~27.5 KB JSON document (~1,000 values: the size
                      of the Wallarm API Firewall benchmark body)
    form-1k.http      POST of a ~1 KB application/x-www-form-urlencoded form

and the hostile shapes, sized to the default body limits of
rules/bulwark.conf-recommended (SecRequestBodyNoFilesLimit 128 KB,
SecArgumentsLimit 1000, SecRequestBodyJsonDepthLimit 512), to show the worst
case the engine must bound (issue "Speed II", bounded worst case):

    hostile-quote-value.http   one 64 KB form value of repeated "a' or "
    hostile-quote-args.http    20 form arguments of 4 KB quote runs
    hostile-quote-json.http    one 64 KB JSON string of repeated "a' or "
    hostile-json-keys.http     a JSON object of 10,000 keys (only 1,000 become
                               ARGS under the default SecArgumentsLimit)
    hostile-json-deep.http     JSON nested 500 deep (under the depth limit)
    hostile-multipart.http     1,000 multipart/form-data parts
    hostile-lt-run.http        one 64 KB form value of '<'
    hostile-paren-run.http     one 64 KB form value of '('
    hostile-percent-run.http   one 64 KB form value of '%'
    hostile-backslash-run.http one 64 KB form value of '\\'

With --hostile-scale N they are N times larger (N x the bytes, keys, parts;
depth stays under N x 512), for the "10x the limits" measurement; they are
then written only with --out, never over the committed ones.

The benign content is deterministic (fixed seed) and benign even for CRS at
paranoia level 4, which is strict about characters: values use letters,
digits, '_', '.' and ',' only (920273 refuses spaces, '@', '+', '%' in
arguments and urlencoded bodies at PL4; 942432 counts '-', ':' and the like),
and the JSON documents use objects keyed by id instead of arrays: CRS
3.3.4's 921180 (HTTP parameter pollution, PL3+) counts every element of a
JSON array of objects as a repeated argument name (items.items.sku...) and
blocks it, with mod_security2 as with Bulwark.
`tools/perf/run` checks that every variant answers 200 anyway.

    tools/perf/gen-requests.py [--out DIR]
"""

import argparse
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))

BROWSER_UA = ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")

WORDS = ("garden lamp table chair shelf kettle blanket pillow candle mirror basket "
         "vase clock rug towel mug plate bowl spoon knife fork glass bottle jar box "
         "bag hat scarf glove sock shirt jacket boot shoe belt wallet watch ring "
         "necklace bracelet book pen pencil paper notebook folder stapler").split()
COLOURS = "red green blue black white grey yellow orange purple brown".split()
CITIES = "Berlin Lyon Porto Turku Bergen Gdansk Graz Ghent Bilbao Brno".split()


def http_request(method, path, headers, body=b""):
    """A raw request: request line, headers, Content-Length when there is a body."""
    lines = ["%s %s HTTP/1.1" % (method, path)]
    lines += ["%s: %s" % kv for kv in headers]
    if body:
        lines.append("Content-Length: %d" % len(body))
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body


def common_headers(accept):
    return [
        ("Host", "shop.example.com"),
        ("User-Agent", BROWSER_UA),
        ("Accept", accept),
        ("Accept-Language", "en-GB,en;q=0.7,de;q=0.3"),
        ("Accept-Encoding", "gzip, deflate, br"),
        ("Referer", "https://shop.example.com/catalog/garden?page=1"),
        ("Cookie", "sessionid=3f9a0c2e7b1d4a6f8e5c01d2; theme=light; lang=en_GB"),
    ]


def get_request():
    headers = common_headers("text/html,application/xhtml+xml,application/xml;q=0.9,"
                             "image/avif,image/webp,*/*;q=0.8")
    headers += [
        ("Upgrade-Insecure-Requests", "1"),
        ("Sec-Fetch-Dest", "document"),
        ("Sec-Fetch-Mode", "navigate"),
        ("Sec-Fetch-Site", "same-origin"),
        ("Sec-Fetch-User", "?1"),
        ("Priority", "u=0, i"),
    ]
    return http_request("GET", "/catalog/garden?page=2&sort=price_asc&view=grid&per_page=24",
                        headers)


def item(rng, n):
    """One order line: 8 values."""
    return {
        "sku": "SKU%06d" % rng.randrange(10 ** 6),
        "name": "%s_%s" % (rng.choice(COLOURS), rng.choice(WORDS)),
        "quantity": rng.randrange(1, 9),
        "unit_price": round(rng.uniform(1, 300), 2),
        "currency": "EUR",
        "gift_wrap": rng.random() < 0.2,
        "warehouse": "%s_%d" % (rng.choice(CITIES), rng.randrange(1, 20)),
        "line": n,
    }


def order(rng, lines):
    return {
        "order_id": "ORD%08d" % rng.randrange(10 ** 8),
        "customer": {"id": rng.randrange(10 ** 6), "first_name": "Alice", "last_name": "Martin",
                     "tier": "gold", "newsletter": False},
        "shipping": {"street": "Hauptstrasse", "house_number": 12, "city": "Berlin",
                     "postcode": "10115", "country": "DE", "method": "standard"},
        "items": {"line_%03d" % i: item(rng, i) for i in range(lines)},
        "payment": {"method": "card", "card_brand": "visa", "installments": 1,
                    "save_card": False},
        "note": "leave_at_door",
    }


def count_values(doc):
    """Leaf values in a JSON document (what becomes ARGS)."""
    if isinstance(doc, dict):
        return sum(count_values(v) for v in doc.values())
    if isinstance(doc, list):
        return sum(count_values(v) for v in doc)
    return 1


def json_request(doc, path):
    body = json.dumps(doc, separators=(",", ":")).encode()
    headers = common_headers("application/json")
    headers += [("Content-Type", "application/json"), ("Origin", "https://shop.example.com")]
    return http_request("POST", path, headers, body), count_values(doc), len(body)


def big_json(rng, target_bytes, max_values):
    """A catalogue sync document: as many 8-value records as fit under both
    limits (the values stay below SecArgumentsLimit 1000 of the engine file)."""
    records = {}
    doc = {"batch": "B%06d" % rng.randrange(10 ** 6), "source": "erp_export", "records": records}
    while True:
        key = "rec_%04d" % len(records)
        rec = item(rng, len(records))
        rec["warehouse_location"] = rec.pop("warehouse") + "_aisle_%02d" % rng.randrange(40)
        rec["description_short"] = "_".join(rng.choice(WORDS) for _ in range(12))
        records[key] = rec
        size = len(json.dumps(doc, separators=(",", ":")))
        if size > target_bytes or count_values(doc) > max_values:
            del records[key]
            return doc


def form_request(rng, target_bytes):
    fields = [("form_id", "checkout_address"), ("csrf_token", "a81f0c3e9b7d4e21a6c5f0b8d3e7a912")]
    n = 0
    while True:
        name = "%s_%d" % (rng.choice(WORDS), n)
        value = "%s_%s_%d" % (rng.choice(COLOURS), rng.choice(WORDS), rng.randrange(1000))
        cand = fields + [(name, value)]
        if len("&".join("%s=%s" % kv for kv in cand)) > target_bytes:
            break
        fields = cand
        n += 1
    body = "&".join("%s=%s" % kv for kv in fields).encode()
    headers = common_headers("text/html,application/xhtml+xml,*/*;q=0.8")
    headers += [("Content-Type", "application/x-www-form-urlencoded"),
                ("Origin", "https://shop.example.com")]
    return http_request("POST", "/checkout/address", headers, body), len(fields), len(body)


def form_post(path, fields):
    """A urlencoded POST of (name, raw value) pairs; values are sent as they
    are (the hostile bytes are what the shape is about)."""
    body = "&".join("%s=%s" % kv for kv in fields).encode("latin-1")
    headers = common_headers("text/html,application/xhtml+xml,*/*;q=0.8")
    headers += [("Content-Type", "application/x-www-form-urlencoded"),
                ("Origin", "https://shop.example.com")]
    return http_request("POST", path, headers, body)


def json_post(path, body):
    headers = common_headers("application/json")
    headers += [("Content-Type", "application/json"), ("Origin", "https://shop.example.com")]
    return http_request("POST", path, headers, body.encode("latin-1"))


def repeat_to(unit, size):
    return (unit * (size // len(unit) + 1))[:size]


def multipart_post(path, parts):
    boundary = "----bulwarkbench7d1f"
    chunks = []
    for name, value in parts:
        chunks.append("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                      % (boundary, name, value))
    body = ("".join(chunks) + "--%s--\r\n" % boundary).encode("latin-1")
    headers = common_headers("text/html,application/xhtml+xml,*/*;q=0.8")
    headers += [("Content-Type", "multipart/form-data; boundary=%s" % boundary),
                ("Origin", "https://shop.example.com")]
    return http_request("POST", path, headers, body)


def hostile_requests(scale):
    """The hostile shapes, each at most scale x the default body limits."""
    big = 65536 * scale
    keys = 10000 * scale
    depth = min(500 * scale, 512 * scale - 12)
    deep = '{"a":' * depth + '"x"' + "}" * depth
    return {
        "hostile-quote-value.http": form_post("/search", [("q", repeat_to("a' or ", big))]),
        "hostile-quote-args.http": form_post(
            "/search", [("q%d" % i, "'" * 4096) for i in range(20 * scale)]),
        "hostile-quote-json.http": json_post(
            "/api/v1/search", '{"q":"%s"}' % repeat_to("a' or ", big)),
        "hostile-json-keys.http": json_post(
            "/api/v1/catalog/sync",
            "{" + ",".join('"k%d":%d' % (i, i % 10) for i in range(keys)) + "}"),
        "hostile-json-deep.http": json_post("/api/v1/catalog/sync", deep),
        "hostile-multipart.http": multipart_post(
            "/upload", [("f%d" % i, "v%d" % i) for i in range(1000 * scale)]),
        "hostile-lt-run.http": form_post("/search", [("q", "<" * big)]),
        "hostile-paren-run.http": form_post("/search", [("q", "(" * big)]),
        "hostile-percent-run.http": form_post("/search", [("q", "%" * big)]),
        "hostile-backslash-run.http": form_post("/search", [("q", "\\" * big)]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--hostile-scale", type=int, default=1,
                    help="write only the hostile shapes, N times larger (needs --out)")
    a = ap.parse_args()
    if a.hostile_scale != 1:
        if a.out is None:
            ap.error("--hostile-scale needs --out: the committed requests stay at scale 1")
        os.makedirs(a.out, exist_ok=True)
        for name, raw in hostile_requests(a.hostile_scale).items():
            with open(os.path.join(a.out, name), "wb") as f:
                f.write(raw)
            print("%-28s %8d bytes" % (name, len(raw)))
        return
    a.out = a.out or os.path.join(HERE, "requests")
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(20240611)

    small, small_values, small_len = None, 0, 0
    for lines in range(1, 10):
        req, vals, blen = json_request(order(random.Random(7), lines), "/api/v1/orders")
        if blen > 1024:
            break
        small, small_values, small_len = req, vals, blen
    big, big_values, big_len = json_request(big_json(rng, 28160, 999), "/api/v1/catalog/sync")
    form, form_values, form_len = form_request(rng, 1024)
    out = {
        "get.http": (get_request(), 4, 0),
        "json-1k.http": (small, small_values, small_len),
        "json-27k.http": (big, big_values, big_len),
        "form-1k.http": (form, form_values, form_len),
    }
    for name, (raw, vals, blen) in out.items():
        with open(os.path.join(a.out, name), "wb") as f:
            f.write(raw)
        print("%-14s body %6d bytes, %4d values" % (name, blen, vals))
    for name, raw in hostile_requests(1).items():
        with open(os.path.join(a.out, name), "wb") as f:
            f.write(raw)
        print("%-28s %8d bytes" % (name, len(raw)))


if __name__ == "__main__":
    main()
