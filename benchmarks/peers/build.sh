#!/usr/bin/env bash
# Build the Go peers of benchmarks/compat_peers.py from the Go module proxy and print the
# folder holding them:
#
#     bash benchmarks/peers/build.sh           # -> ~/.cache/compatfuzz/peers/<hash>
#     bash benchmarks/peers/build.sh --check   # the folder if already built, else exit 1
#
# Each peer is a Go module of its own (crdify/go.mod, oasdiff/go.mod beside this file, each
# with a `tool` line and a go.sum), so each is built with exactly the dependency versions
# its own release requires, as `go install MODULE@VERSION` would: sigs.k8s.io/crdify
# v0.5.0 and github.com/oasdiff/oasdiff v1.37.0. The binaries go to
# ${COMPATFUZZ_PEERS_CACHE:-${XDG_CACHE_HOME:-~/.cache}/compatfuzz/peers}/<hash of both
# go.mod and go.sum files>, outside the repository; a second run with the same pins only
# prints the folder. The first build takes about 2.5 minutes on 2 cores (crdify pulls in
# the Kubernetes API machinery). Exit status 2 with a message when Go is missing or a
# build fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
go="${GO:-$(command -v go || true)}"
if [[ -z "$go" ]]; then
    echo "benchmarks/peers/build.sh: Go is not on PATH (or \$GO); install Go >= 1.26 (the go.mod minimum)" >&2
    exit 2
fi
tools=(crdify oasdiff)
digest="$(cd "$here" && cat crdify/go.mod crdify/go.sum oasdiff/go.mod oasdiff/go.sum | sha256sum | cut -c1-12)"
root="${COMPATFUZZ_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/compatfuzz/peers}"
out="$root/$digest"

ready=1
for tool in "${tools[@]}"; do
    [[ -x "$out/$tool" ]] || ready=0
done
if [[ $ready == 1 ]]; then
    echo "$out"
    exit 0
fi
if [[ "${1:-}" == "--check" ]]; then
    echo "benchmarks/peers/build.sh: the peers are not built; run bash benchmarks/peers/build.sh" >&2
    exit 1
fi

mkdir -p "$root"
partial="$out.partial.$$"
rm -rf "$partial"
mkdir -p "$partial"
trap 'rm -rf "$partial"' EXIT
for tool in "${tools[@]}"; do
    echo "benchmarks/peers/build.sh: go build $tool (module $here/$tool; cached after the first time)" >&2
    if ! (cd "$here/$tool" && CGO_ENABLED=0 GOFLAGS=-mod=readonly "$go" build -trimpath -o "$partial/" tool >&2); then
        echo "benchmarks/peers/build.sh: go build $tool failed; see above" >&2
        exit 2
    fi
done
rm -rf "$out"
mv "$partial" "$out"
echo "$out"
