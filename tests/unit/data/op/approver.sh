#!/bin/sh
# A stand-in for a virus scanner's approver script (tests/unit/test_op.c):
# the first line says "1 ..." for a clean value, anything else to reject.
case "$1" in
    *MARKER*) echo "0 marker found"; echo "second line" ;;
    silent) ;;
    crlf) printf '0 with CR\r\nrest\n' ;;
    *) echo "1 clean: $1" ;;
esac
