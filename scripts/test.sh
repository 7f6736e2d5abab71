#!/usr/bin/env bash
# The test command: installs what is needed, checks formatting and conventions, builds with
# warnings as errors, builds the API documentation with no DocC warning, and runs the whole
# test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

echo "test: swift format lint --strict" >&2
swift format lint --strict -r Sources Tests Package.swift Benchmarks/Package.swift Benchmarks/Benchmarks Benchmarks/Sources

echo "test: conventions (no try!, as!, fatalError or print in library sources)" >&2
if grep -rnE 'try!|as!|fatalError\(|^\s*print\(' Sources --include=*.swift | grep -v '^Sources/tape/'; then
  echo "test: the lines above break STYLE.md's rules for library sources" >&2
  exit 1
fi

echo "test: conventions (no file-scope static variable in a C shim header)" >&2
# One copy of such a variable per LLVM module: a release build makes one per Swift file, and
# state kept there by one file is unseen by another (Sources/CStandardOutput/shim.h).
if grep -nE '^static [^(]*(=|;)' Sources/C*/*.h Sources/C*/include/*.h; then
  echo "test: the lines above keep state in a header; keep it in Swift and pass it in" >&2
  exit 1
fi

echo "test: conventions (sox noise in tests is repeatable: sox -R)" >&2
# sox seeds its noise from the clock unless given -R: a test built on it hears another signal
# each run (an impulse response of noise once took a render example over its true-peak limit
# in CI only). A test's sox call that makes noise names -R within the 4 lines before.
if grep -rnE -B4 '"(white|pink|brown)noise"' Tests --include=*.swift \
  | awk '/"-R"/ { ok = 1 } /noise"/ { if (!ok) print; ok = 0 } /^--$/ { ok = 0 }' | grep .; then
  echo "test: the lines above make sox noise without -R; add \"-R\" to its arguments" >&2
  exit 1
fi

echo "test: swift build" >&2
swift build --build-tests

echo "test: swift build -c release --product tape (the tape the command-line tests run)" >&2
# The command-line tests run `tape` as users do, thousands of processes: the release build
# (what scripts/install.sh installs) does their work in a fraction of the debug build's CPU,
# and tests what ships (a release-only failure once passed every test of a debug build:
# Package.swift, "--export-dynamic"). TAPE_BINARY names it (Tests/TapeCLITests/TapeBinary.swift);
# `swift test` by hand, without it, runs the debug build next to the tests.
swift build -c release --product tape
TAPE_BINARY="$(swift build -c release --show-bin-path)/tape"
export TAPE_BINARY

echo "test: API documentation (DocC, no warnings)" >&2
# About 2 minutes on the 2-core machine while it builds other things (CONTRIBUTING.md).
scripts/docs.sh

echo "test: swift test" >&2
# The runner's own timings are kept (.build/test-results) and the slowest suites and tests are
# printed at the end, passed or not.
results=.build/test-results
rm -rf "$results"
mkdir -p "$results"
status=0
swift test --skip-build --xunit-output "$results/xunit.xml" 2>&1 | tee "$results/console.log" ||
  status=$?
scripts/test-times.py "$results/console.log" "$results"/xunit*.xml >&2 || true
exit "$status"
