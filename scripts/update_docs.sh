#!/usr/bin/env bash
# Regenerates the documentation pages that are generated from the code (the docs-in-sync tests
# fail when they are out of date): docs/advice-rules.md from the advice rule table.
#
#   scripts/update_docs.sh [BUILD_DIR]      (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
"$build/bin/hpcprof" rules --format md > "$here/docs/advice-rules.md"
echo "updated docs/advice-rules.md" >&2
