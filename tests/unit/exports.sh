#!/bin/sh
# mod_bulwark.so shares httpd's global symbol namespace with every other
# module: it must export exactly one symbol, the module struct
# bulwark_module, and nothing of the engine (bw_*, pf_*, ...). Run by
# `make check` in the build directory; an argument names another .so.
so=${1:-.libs/mod_bulwark.so}
if [ ! -f "$so" ]; then
    echo "exports: $so not built" >&2
    exit 1
fi
exported=$(nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' | sort)
if [ "$exported" = bulwark_module ]; then
    echo "exports: $so exports only bulwark_module"
    exit 0
fi
count=$(printf '%s\n' "$exported" | grep -c .)
echo "exports: $so exports $count symbols, expected only bulwark_module:" >&2
printf '%s\n' "$exported" | head -n 20 >&2
exit 1
