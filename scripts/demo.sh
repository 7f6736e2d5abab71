#!/usr/bin/env bash
# The main job: installs what is needed, builds tape in release mode, and runs it.
# (The demo project arrives with the rendering and demo issues; until then this shows the help.)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
echo "demo: swift build -c release (the first build takes a few minutes)" >&2
swift build -c release --product tape
bin="$(swift build -c release --show-bin-path)/tape"
"$bin" --help
echo
echo "tape is at $bin"
