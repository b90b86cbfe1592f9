#!/usr/bin/env bash
# Rewrites the expected reports of the report golden test (tests/golden/reports) from this
# build: each fixed capture in tests/golden/raw is converted and analysed, the Kineto test traces
# imported. Run it when a change is meant to move report numbers, and review the diff.
#
#   scripts/update_golden.sh [BUILD_DIR]      (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
hpcprof=$build/bin/hpcprof
reports=$here/tests/golden/reports
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

report() { # NAME TRACE: the JSON report with the temporary folder's path replaced
    "$hpcprof" report "$2" --format json | sed "s#$work#TRACE_DIR#g" > "$reports/$1.json"
    echo "updated tests/golden/reports/$1.json" >&2
}

for tarball in "$here"/tests/golden/raw/*.tar.gz; do
    name=$(basename "$tarball" .tar.gz)
    rm -rf "${work:?}"/*
    tar -xzf "$tarball" -C "$work"
    "$hpcprof" merge "$work/$name.hpcprof.raw" -o "$work/t.hpcprof" 2>/dev/null
    report "$name" "$work/t.hpcprof"
done
rm -rf "${work:?}"/*
"$hpcprof" import "$here/tests/data/kineto/sampled_rank-0.json.gz" \
    "$here/tests/data/kineto/sampled_rank-1.json.gz" -o "$work/t.hpcprof" 2>/dev/null
report kineto_sampled "$work/t.hpcprof"
