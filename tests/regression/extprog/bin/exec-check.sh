#!/bin/sh
# @inspectFile used as a probe: $1 is a line exec-record.sh must have
# written. Found: "0 ..." (a match, the rule denies); not found: "1".
out="$(dirname "$0")/../modsec/data/exec.out"
if [ -r "$out" ] && grep -qxF -- "$1" "$out"; then
    echo "0 recorded: $1"
else
    echo "1 not recorded"
fi
