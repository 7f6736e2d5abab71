#!/usr/bin/env bash
# The main job: installs what is needed, builds tape in release mode, and runs its demo: a real
# project cut, mixed, undone, rendered to tape-demo/mix.wav, and played where a device exists.
#   scripts/demo.sh [DIR]      (default ./tape-demo)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
echo "demo: swift build -c release (the first build takes a few minutes)" >&2
# A release tape has the Swift runtime and Foundation linked in, as a position-dependent
# executable (Package.swift): one edit is a whole process, and this halves its start (see
# docs/performance.md, "One edit, one process").
release=(-c release)
swift build "${release[@]}" --product tape
bin="$(swift build "${release[@]}" --show-bin-path)/tape"
"$bin" demo "${1:-tape-demo}" --audio TestAudio
echo
echo "tape is at $bin (add it to PATH: export PATH=\"$(dirname "$bin"):\$PATH\")"
echo "to install it with its manual pages and completions: sudo scripts/install.sh (or scripts/install.sh --prefix \$HOME/.local)"
