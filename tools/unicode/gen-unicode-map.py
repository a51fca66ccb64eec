#!/usr/bin/env python3
"""Write Bulwark's unicode map (rules/unicode.mapping) from Unicode data.

SecUnicodeMapFile FILE CODEPAGE tells urlDecodeUni which byte a %uHHHH escape
becomes. Bulwark makes its own map instead of reading another package's:
code page 20127 (US-ASCII) maps a BMP code point to the printable ASCII
character (0x20-0x7E) that is left of it once it is reduced to its
compatibility form (NFKC) or, for a letter, stripped of its accents (NFKD
without combining marks), and only when exactly one such character is left:

  U+FF21 FULLWIDTH LATIN CAPITAL LETTER A   NFKC "A"            -> 41
  U+00C0 LATIN CAPITAL LETTER A WITH GRAVE  NFKD "A" + U+0300   -> 41
  U+2002 EN SPACE                           NFKC " "            -> 20
  U+00BD VULGAR FRACTION ONE HALF           NFKC "1/2"          -> (none)

Everything else stays unmapped and urlDecodeUni treats it as without a map
(full-width ASCII becomes ASCII, any other code point keeps its low byte);
code points below 0x80 are themselves.

The file format is what the loader (apache2/transformations/tfn_unicode_map.c)
and mod_security2 read: a header line "20127 (US-ASCII)", then lines of
space-separated "hhhh:hh" pairs, CRLF line ends.

  tools/unicode/gen-unicode-map.py [OUT]      (default rules/unicode.mapping)
  tools/unicode/gen-unicode-map.py --check    exit 1 when the file differs

The result depends on the Unicode version of the Python that runs it
(printed); the committed file was made with Debian 12's python3.
"""
import os
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "..", "rules", "unicode.mapping")
CODEPAGE_HEADER = "20127 (US-ASCII)"
PAIRS_PER_LINE = 16


def printable_ascii(s):
    """The byte of s when s is one printable ASCII character, else None."""
    return ord(s) if len(s) == 1 and 0x20 <= ord(s) <= 0x7E else None


def ascii_of(cp):
    """The one printable ASCII byte code point cp reduces to, or None: its
    compatibility form (NFKC), or for a letter its decomposition (NFKD) with
    the combining marks (accents) dropped. Spacing accents such as U+00A8
    are symbols, not letters, and stay unmapped."""
    ch = chr(cp)
    b = printable_ascii(unicodedata.normalize("NFKC", ch))
    if b is None and unicodedata.category(ch).startswith("L"):
        base = "".join(c for c in unicodedata.normalize("NFKD", ch)
                       if unicodedata.category(c) != "Mn")
        b = printable_ascii(base)
    return b


def mapping():
    """[(code point, byte)] for every BMP code point above ASCII that maps."""
    out = []
    for cp in range(0x80, 0x10000):
        if 0xD800 <= cp <= 0xDFFF:
            continue  # surrogates are no characters
        b = ascii_of(cp)
        if b is not None:
            out.append((cp, b))
    return out


def render(pairs):
    lines = [CODEPAGE_HEADER]
    for i in range(0, len(pairs), PAIRS_PER_LINE):
        lines.append(" ".join("%04x:%02x" % p for p in pairs[i:i + PAIRS_PER_LINE]))
    return "\r\n".join(lines) + "\r\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    out = args[0] if args else DEFAULT_OUT
    pairs = mapping()
    text = render(pairs)
    print("unicode map: %d code points (Unicode %s)" % (len(pairs), unicodedata.unidata_version),
          file=sys.stderr)
    if check:
        with open(out, newline="") as f:
            same = f.read() == text
        print("unicode map: %s %s" % (out, "is up to date" if same else "differs"), file=sys.stderr)
        return 0 if same else 1
    with open(out, "w", newline="") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
