#!/bin/sh
# exec: record what the program was given (arguments, environment) where
# exec-check.sh can read it; the output goes to the debug log.
out="$(dirname "$0")/../modsec/data/exec.out"
{
    echo "ARGC=$#"
    env
} > "$out.tmp" && mv "$out.tmp" "$out"
echo "recorded"
