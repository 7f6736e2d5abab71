#!/usr/bin/env bash
# The API documentation: DocC for every library product (and SafeFiles, which their APIs use),
# built as one combined archive, so that a page links to the libraries it depends on
# (``/Timeline/Project`` from Mixing). Fails on any DocC warning: a broken symbol link, a
# parameter documented that the function does not have, a catalog page missing.
#
#   scripts/docs.sh [OUTPUT]     default .build/documentation/Tape.doccarchive
#
# Read the result with any static web server (DocC's pages load their JSON by URL, not from
# file://): python3 -m http.server -d .build/documentation/Tape.doccarchive 8000, then
# http://127.0.0.1:8000/documentation/ (each library at /documentation/timeline and so on).
set -euo pipefail
cd "$(dirname "$0")/.."

output=${1:-.build/documentation/Tape.doccarchive}

# Every library product's targets, from Package.swift, and SafeFiles.
targets=$(swift package dump-package | python3 -c '
import json, sys
package = json.load(sys.stdin)
names = {t for p in package["products"] if "library" in p["type"] for t in p["targets"]}
print(" ".join(sorted(names | {"SafeFiles"})))')

arguments=()
for target in $targets; do
  if [ ! -f "Sources/$target/$target.docc/$target.md" ]; then
    echo "docs: Sources/$target/$target.docc/$target.md is missing: give $target a landing page" >&2
    exit 1
  fi
  arguments+=(--target "$target")
done

# DocC copies its page template (the toolchain's share/docc/render) into every archive, and as
# a user who does not own the toolchain that copy fails ("The operation could not be completed.
# The file doesn't exist.", from `docc convert` on any catalog): it reads a copy of the template
# that whoever runs this owns (DOCC_HTML_DIR, unless it is set already).
if [ -z "${DOCC_HTML_DIR:-}" ]; then
  template="$(dirname "$(readlink -f "$(command -v swift)")")/../share/docc/render"
  if [ -d "$template" ]; then
    rm -rf .build/docc-render
    mkdir -p .build
    cp -R "$template" .build/docc-render
    export DOCC_HTML_DIR="$PWD/.build/docc-render"
  fi
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
mkdir -p "$(dirname "$output")"
echo "docs: swift package generate-documentation ($targets)" >&2
if ! swift package --disable-sandbox generate-documentation \
  --enable-experimental-combined-documentation "${arguments[@]}" \
  --output-path "$output" >"$log" 2>&1; then
  cat "$log" >&2
  echo "docs: DocC failed (above)" >&2
  exit 1
fi
# SwiftPM's note on a dependency's own files (swift-distributed-tracing, under Hummingbird, has
# a file it does not declare) is not ours to fix, nor DocC's: left out of the count.
dependency="^warning: '[A-Za-z0-9._-]*': found [0-9]* file(s) which are unhandled"
grep -v "$dependency" "$log" >"$log.ours" || true
mv "$log.ours" "$log"
warnings=$(grep -c '^warning:' "$log" || true)
if [ "$warnings" -ne 0 ]; then
  # Each warning with its place and the lines around it, as DocC printed them.
  sed -n '/^warning:/,/^$/p' "$log" >&2
  echo "docs: $warnings DocC warnings (above); fix the links or comments they name" >&2
  exit 1
fi
echo "docs: no warnings; the documentation is in $output" >&2
