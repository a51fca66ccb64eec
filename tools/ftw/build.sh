#!/usr/bin/env bash
# Builds the pinned CRS test tools (go-ftw v2.5.0, albedo v0.3.0) from the Go
# module proxy into ${BW_TOOLS:-<repo>/.tools}/bin. go.mod/go.sum in this
# folder pin every module; a stamp next to the binaries records the hash of
# those inputs so a second call is a no-op.
#
#   tools/ftw/build.sh              go-ftw and albedo
#   tools/ftw/build.sh crs-export   only tools/crs/export (its own go.mod and
#                                   go.sum), which writes the CRS v4 data the
#                                   Go module coraza-coreruleset embeds
set -euo pipefail
what=${1:-ftw}
case $what in ftw|crs-export) ;; *) echo "tools/ftw/build.sh: unknown target $what" >&2; exit 2 ;; esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
tools=${BW_TOOLS:-$repo/.tools}
bin=$tools/bin
stamp=$bin/.ftw-stamp
FTW_VERSION=v2.5.0
ALBEDO_VERSION=v0.3.0

log() { printf 'tools/ftw: %s\n' "$*" >&2; }

# Everything that decides what gets built: when its hash matches the stamp
# and both binaries exist, there is nothing to do.
inputs_hash() {
    (cd "$here" && cat go.mod go.sum $(find wait4x-stub -type f | LC_ALL=C sort) \
        && echo "$FTW_VERSION $ALBEDO_VERSION") | sha256sum | cut -d' ' -f1
}

export_dir=$repo/tools/crs/export
export_stamp=$bin/.crs-export-stamp
export_hash() {
    (cd "$export_dir" && cat go.mod go.sum *.go) | sha256sum | cut -d' ' -f1
}
if [[ $what == crs-export ]]; then
    want=$(export_hash)
    if [[ -x $bin/crs-export && -f $export_stamp && $(cat "$export_stamp") == "$want" ]]; then
        log "crs-export already built in $bin"
        exit 0
    fi
else
    want=$(inputs_hash)
fi
if [[ $what == ftw && -x $bin/go-ftw && -x $bin/albedo && -f $stamp && $(cat "$stamp") == "$want" ]]; then
    log "go-ftw $FTW_VERSION and albedo $ALBEDO_VERSION already built in $bin"
    exit 0
fi

# go_version_ok BIN: true when BIN is a go command of version >= 1.21, the
# first release that can fetch the newer toolchain go.mod asks for (1.25).
go_version_ok() {
    local v
    v=$("$1" env GOVERSION 2>/dev/null) || return 1
    v=${v#go}
    local major=${v%%.*} rest=${v#*.}
    local minor=${rest%%[.a-z]*}
    [[ $major -gt 1 || ( $major -eq 1 && $minor -ge 21 ) ]]
}

find_go() {
    local g
    for g in "${GO:-}" "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go /usr/lib/go/bin/go; do
        [[ -n $g && -x $g ]] && go_version_ok "$g" && { echo "$g"; return 0; }
    done
    return 1
}

# An old go (Debian 12's golang is 1.19) cannot switch toolchains itself:
# fetch the Go toolchain module (the one go >= 1.21 fetches when switching)
# from the module proxy with it, and unpack it under $tools.
GO_BOOTSTRAP=go1.25.0
bootstrap_go() {
    local old dir dest=$tools/$GO_BOOTSTRAP tmpd
    local toolchain=golang.org/toolchain@v0.0.1-$GO_BOOTSTRAP.linux-amd64
    if [[ -x $dest/bin/go ]]; then echo "$dest/bin/go"; return 0; fi
    old=${GO:-$(command -v go 2>/dev/null || echo /usr/lib/go/bin/go)}
    [[ -x $old ]] || { log "no go command found (apt-get install golang, or put Go >= 1.21 on PATH)"; return 1; }
    log "$old is older than Go 1.21: fetching $toolchain from the module proxy"
    tmpd=$(mktemp -d)
    dir=$(cd "$tmpd" && GOFLAGS= GO111MODULE=on "$old" mod download -json "$toolchain" \
          | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    rm -rf "$tmpd"
    [[ -n $dir && -f $dir/bin/go ]] || { log "could not fetch $toolchain"; return 1; }
    # Module files are unpacked read-only and without execute bits.
    mkdir -p "$tools"
    rm -rf "$dest.tmp"
    cp -r "$dir" "$dest.tmp"
    chmod -R u+w "$dest.tmp"
    chmod +x "$dest.tmp"/bin/* "$dest.tmp"/pkg/tool/*/*
    mv "$dest.tmp" "$dest"
    echo "$dest/bin/go"
}

if [[ ${BW_FORCE_GO_BOOTSTRAP:-0} == 1 ]]; then
    gocmd=$(bootstrap_go)
else
    gocmd=$(find_go || bootstrap_go)
fi
log "building with $gocmd ($("$gocmd" env GOVERSION))"

mkdir -p "$bin"
tmp=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [[ $what == crs-export ]]; then
    # go.sum pins the module and so the CRS files it embeds.
    (cd "$export_dir" && GOTOOLCHAIN=auto GOFLAGS=-mod=readonly \
        "$gocmd" build -trimpath -ldflags "-s -w" -o "$tmp/crs-export" .)
    mv -f "$tmp/crs-export" "$bin/"
    echo "$want" > "$export_stamp"
    log "built crs-export in $bin"
    exit 0
fi

cd "$here"
# GOTOOLCHAIN=auto lets go >= 1.21 fetch the toolchain go.mod requires even
# where the distribution's go.env says "local". GONOSUMDB: albedo is not in
# the checksum database seen from here; go.sum still pins its hash.
export GOTOOLCHAIN=auto GONOSUMDB=github.com/coreruleset GOFLAGS=-mod=readonly
"$gocmd" build -trimpath -ldflags "-s -w -X main.version=$FTW_VERSION" \
    -o "$tmp/go-ftw" github.com/coreruleset/go-ftw/v2
"$gocmd" build -trimpath -ldflags "-s -w" -o "$tmp/albedo" github.com/coreruleset/albedo
mv -f "$tmp/go-ftw" "$tmp/albedo" "$bin/"
echo "$want" > "$stamp"
log "built go-ftw $FTW_VERSION and albedo $ALBEDO_VERSION in $bin"
