#!/usr/bin/python3
"""Bulwark's view of h2 requests beside mod_security2's.

Reads two observation files of tests/fronts/cases.py (the same cases, one
front, Bulwark then mod_security2 2.9.7) and compares them key by key. A key
listed in KNOWN with its reason is a difference found and documented (README,
*TLS and HTTP/2 fronts*): printed, not failed. Anything else that differs
fails; so does a known difference that is gone (the list must stay true).

    compare.py --front tls|plain BULWARK.json MODSEC2.json

Closing line `fronts-compare: N passed, M failed`.
"""

import argparse
import json
import sys

# (case, key): why Bulwark differs from mod_security2 there, on purpose.
KNOWN = {
    ("body limit", "statuses"):
        "mod_security2 refuses a body of exactly SecRequestBodyLimit bytes (413), over h2 and "
        "over HTTP/1.1 chunked alike; Bulwark accepts the limit itself and refuses one byte more",
    ("body limit", "HTTP/1.1 chunked, exactly the limit"):
        "the same off-by-one of mod_security2, over HTTP/1.1",
}


def flatten(obs):
    for case in sorted(obs):
        if not isinstance(obs[case], dict):
            yield (case, "result"), obs[case]
            continue
        for key in sorted(obs[case]):
            yield (case, key), obs[case][key]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--front", required=True)
    p.add_argument("bulwark")
    p.add_argument("modsec2")
    a = p.parse_args(argv)
    with open(a.bulwark) as f:
        bw = dict(flatten(json.load(f)))
    with open(a.modsec2) as f:
        ms = dict(flatten(json.load(f)))
    passed = failed = 0
    for k in sorted(set(bw) | set(ms)):
        same = bw.get(k) == ms.get(k)
        name = "%s / %s" % k
        if k in KNOWN:
            if same:
                failed += 1
                print("  FAIL  %s: listed as a known difference, but both engines agree now" % name)
            else:
                passed += 1
                print("  PASS  %s: known difference: %s (Bulwark %s, mod_security2 %s)"
                      % (name, KNOWN[k], json.dumps(bw.get(k)), json.dumps(ms.get(k))))
        elif same:
            passed += 1
            print("  PASS  %s: same as mod_security2" % name)
        else:
            failed += 1
            print("  FAIL  %s: Bulwark %s, mod_security2 %s"
                  % (name, json.dumps(bw.get(k))[:400], json.dumps(ms.get(k))[:400]))
    print("fronts-compare: front %s (%s)" % (a.front, "h2" if a.front == "tls" else "h2c"))
    print("fronts-compare: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
