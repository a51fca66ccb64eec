#!/bin/sh
# Standalone build of the prefilter tests (the automake build uses
# apache2/prefilter/sources.am): build.sh [OUTDIR] [extra CFLAGS...]
# Builds OUTDIR/pfcli, OUTDIR/diff and OUTDIR/test_prefilter with ASan+UBSan
# unless CFLAGS_SAN is set (e.g. CFLAGS_SAN=-O2 for a fast run).
set -e
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-/tmp/bw-prefilter}
[ $# -gt 0 ] && shift
mkdir -p "$out"
san=${CFLAGS_SAN--g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all}
warn="-std=c99 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror"
inc="-I$top/apache2 $(apr-1-config --includes --cppflags) $(pcre2-config --cflags)"
libs="$(apr-1-config --link-ld --libs) $(pcre2-config --libs8)"
core="$top/apache2/base/bw_str.c $top/apache2/prefilter/bw_prefilter.c $top/apache2/prefilter/pf_parse.c \
      $top/apache2/prefilter/pf_info.c $top/apache2/prefilter/pf_set.c"
gcc $warn $san "$@" $inc $core "$here/pfcli.c" $libs -o "$out/pfcli"
tests="$here/corpus.c $here/yaml_payloads.c $here/gen.c $here/diffcore.c $here/fuzz.c"
gcc $warn $san "$@" $inc -I"$here" -DBW_SRCDIR="\"$top\"" $core $tests "$here/diff.c" $libs \
    -o "$out/diff"
if [ -f "$top/tests/unit/test_prefilter.c" ]; then
    gcc $warn $san "$@" $inc -I"$here" -DBW_SRCDIR="\"$top\"" $(pkg-config --cflags check) $core \
        $tests "$top/tests/unit/test_prefilter.c" $libs $(pkg-config --libs check) \
        -o "$out/test_prefilter"
fi
