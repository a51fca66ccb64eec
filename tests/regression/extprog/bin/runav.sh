#!/bin/sh
# A stand-in for ModSecurity's runav approver script (written for these
# tests, no scanner needed): $1 is the stored upload. The first line is the
# verdict: "1 ..." clean, anything else rejects the file.
if [ ! -r "$1" ]; then
    echo "0 cannot read $1"
elif grep -q 'BULWARK-TEST-MARKER' "$1"; then
    echo "0 BULWARK-TEST-MARKER found"
else
    echo "1 clean"
fi
