#!/usr/bin/env python3
"""The engine's layers, checked: every #include under apache2/ points down.

Layers, bottom up (docs/design-notes.md says why each sits where it does):

    base        strings, the PCRE2 helper (and bw_engine.h, the vocabulary)
    kinds       transformations, operators, body, detect, prefilter, matcher,
                openapi, variables, actions: each may use base and the kinds listed
                before it in KINDS, never one after it
    lang        configuration text -> rule definitions
    program     rule definitions -> compiled programs
    run         executing a transaction over a program
    audit       audit records over a finished transaction
    httpd       the glue: the only place httpd's own headers are included

A file may include its own folder, any layer below its own and, inside the
kinds, an earlier kind. The same holds for symbols: given a build directory
(default: the current one, as `make check` runs it), every undefined symbol of
an object file must be defined in an allowed folder — bw_engine.h declares
functions of several layers, so includes alone would not show a call that
runs back up. Prints one line per violation and exits 1 if any.
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "apache2")

KINDS = ["transformations", "prefilter", "detect", "operators", "matcher", "body",
         "openapi", "variables", "actions"]
RANK = {"base": 0, "lang": 2, "program": 3, "run": 4, "audit": 5, "httpd": 6}
for k in KINDS:
    RANK[k] = 1

HTTPD_HEADERS = re.compile(r'^(httpd|http_[a-z_]+|ap_[a-z_]+|util_[a-z_]+|mod_[a-z_]+|unixd|'
                           r'scoreboard|mpm_common)\.h$')
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]', re.M)


def folder_of(path):
    rel = os.path.relpath(path, SRC)
    return rel.split(os.sep)[0] if os.sep in rel else ""


def target_folder(inc, src_folder):
    """The layer folder an include names, or None for a system header."""
    if inc == "bw_engine.h":
        return "base"
    if "/" in inc:
        top = inc.split("/")[0]
        return top if top in RANK else None
    if os.path.exists(os.path.join(SRC, src_folder, inc)):
        return src_folder          # a header beside the file
    return None


def allowed(src, dst):
    if src == dst:
        return True
    if RANK[dst] < RANK[src]:
        return True
    if RANK[src] == RANK[dst] == 1:
        return KINDS.index(dst) < KINDS.index(src)
    return False


def symbol_problems(build):
    """Undefined symbols of apache2/**/*.o resolved in a folder not allowed."""
    defined, wanted = {}, []
    top = os.path.join(build, "apache2")
    for root, _, files in os.walk(top):
        for name in sorted(files):
            if not name.endswith(".o"):
                continue
            path = os.path.join(root, name)
            folder = os.path.relpath(path, top).split(os.sep)[0]
            if folder not in RANK:
                continue
            # an object whose source moved away is a leftover of an older build
            if not os.path.exists(os.path.join(SRC, folder, name[:-2] + ".c")):
                continue
            out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[1] in "TDRB":
                    defined[parts[2]] = folder
                elif len(parts) == 2 and parts[0] == "U":
                    wanted.append((folder, name, parts[1]))
    problems = []
    for folder, name, sym in wanted:
        dst = defined.get(sym)
        if dst and not allowed(folder, dst):
            problems.append("%s/%s: uses %s of %s/: the arrow points up" % (folder, name, sym, dst))
    return sorted(set(problems)), len(wanted)


def main():
    problems = []
    checked = 0
    for root, _, files in os.walk(SRC):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            src = folder_of(path)
            if path == os.path.join(SRC, "bw_engine.h"):
                src = "base"
            rel = os.path.relpath(path, os.path.join(SRC, ".."))
            if src not in RANK:
                problems.append("%s: not in a layer folder" % rel)
                continue
            with open(path, errors="replace") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                checked += 1
                base = os.path.basename(inc)
                if HTTPD_HEADERS.match(base) and src != "httpd":
                    problems.append("%s: includes httpd's %s outside httpd/" % (rel, inc))
                    continue
                dst = target_folder(inc, src)
                if dst is None:
                    continue
                if not allowed(src, dst):
                    problems.append("%s: %s (%s) includes %s (%s): the arrow points up"
                                    % (rel, src, RANK[src], inc, dst))
    build = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    syms, nsyms = symbol_problems(build)
    problems += syms
    for p in problems:
        print("layers: " + p)
    print("layers: %d includes and %d symbol uses checked, %d violations"
          % (checked, nsyms, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
