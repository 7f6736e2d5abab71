#!/usr/bin/env bash
# The test command: installs what is needed, checks formatting and conventions, builds with
# warnings as errors, runs the whole test suite, builds the API documentation with no DocC
# warning, and builds and checks the example app (Examples/).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it starts, in seconds since the command began: where the time goes.
step() { echo "test: [${SECONDS} s] $*" >&2; }

scripts/setup.sh

step "swift format lint --strict"
swift format lint --strict -r Sources Tests Package.swift Benchmarks/Package.swift Benchmarks/Benchmarks Benchmarks/Sources \
  Examples/Package.swift Examples/Sources

step "conventions (no try!, as!, fatalError or print in library sources)"
if grep -rnE 'try!|as!|fatalError\(|^\s*print\(' Sources --include=*.swift | grep -v '^Sources/tape/'; then
  echo "test: the lines above break STYLE.md's rules for library sources" >&2
  exit 1
fi

step "conventions (no file-scope static variable in a C shim header)"
# One copy of such a variable per LLVM module: a release build makes one per Swift file, and
# state kept there by one file is unseen by another (Sources/CStandardOutput/shim.h).
if grep -nE '^static [^(]*(=|;)' Sources/C*/*.h Sources/C*/include/*.h; then
  echo "test: the lines above keep state in a header; keep it in Swift and pass it in" >&2
  exit 1
fi

step "conventions (sox noise in tests is repeatable: sox -R)"
# sox seeds its noise from the clock unless given -R: a test built on it hears another signal
# each run (an impulse response of noise once took a render example over its true-peak limit
# in CI only). A test's sox call that makes noise names -R within the 4 lines before.
if grep -rnE -B4 '"(white|pink|brown)noise"' Tests --include=*.swift \
  | awk '/"-R"/ { ok = 1 } /noise"/ { if (!ok) print; ok = 0 } /^--$/ { ok = 0 }' | grep .; then
  echo "test: the lines above make sox noise without -R; add \"-R\" to its arguments" >&2
  exit 1
fi

step "swift build"
swift build --build-tests

step "swift build -c release --product tape (the tape the command-line tests run)"
# The command-line tests run `tape` as users do, thousands of processes: the release build
# (what scripts/install.sh installs) does their work in a fraction of the debug build's CPU,
# and tests what ships (a release-only failure once passed every test of a debug build:
# Package.swift, "--export-dynamic"). TAPE_BINARY names it (Tests/TapeCLITests/TapeBinary.swift);
# `swift test` by hand, without it, runs the debug build next to the tests.
swift build -c release --product tape
TAPE_BINARY="$(swift build -c release --show-bin-path)/tape"
export TAPE_BINARY

step "swift test, in two test processes: the paced JACK suites, and all the others beside them"
# What `swift test --skip-build` runs (the test bundle, Swift Testing, NO_COLOR=1 as it sets
# when its output is not a terminal), as two processes side by side: SwiftPM holds a lock on
# .build while it runs, so two `swift test` cannot. Each process has its own cooperative pool:
# the serialized paced suites (ProcessHeavyTests, and ClockAtAnotherRateTests in another
# target), most of the run's time in real time, start at once instead of queueing behind
# every other test for a pool thread, and never share the pool with the others
# (Tests/TapeCLITests/DataSafetyTests.swift). They still run one after another, so two paced
# JACK servers never run side by side (docs/testing.md).
# The runner's own timings are kept (.build/test-results) and the slowest suites and tests are
# printed at the end, passed or not.
if grep -rlE 'XCTestCase' Tests --include=*.swift; then
  echo "test: the files above hold XCTest tests, which this command does not run; write them with Swift Testing" >&2
  exit 1
fi
bundle="$(swift build --show-bin-path)/TapePackageTests.xctest"
paced='ProcessHeavyTests|ClockAtAnotherRateTests'
example='ExampleHostTests'
results=.build/test-results
rm -rf "$results"
mkdir -p "$results"
# In the background, its lines prefixed `paced: ` as they come (a run cut short still shows
# them). A job started with `&` by a shell without job control ignores SIGINT and SIGQUIT, and
# so would every program the tests start (jackd, tape): `env --default-signal` gives them
# back their default, as `swift test` by hand has them.
(
  env --default-signal=INT,QUIT NO_COLOR=1 "$bundle" --testing-library swift-testing \
    --filter "$paced" --xunit-output "$results/xunit-paced.xml" 2>&1 |
    sed -u 's/^/paced: /' | tee "$results/paced.log"
) &
paced_pid=$!
# Stopped early (a failure, Ctrl-C): the paced process goes too, with the subshell.
# (Each command of the trap ends true: under `set -e` a failing one, pkill finding nothing,
# would make the command's status 1 whatever the tests said.)
trap 'pkill -P "$paced_pid" 2>/dev/null || true; kill "$paced_pid" 2>/dev/null || true' EXIT
status=0
NO_COLOR=1 "$bundle" --testing-library swift-testing --skip "$paced|$example" \
  --xunit-output "$results/xunit-others.xml" 2>&1 | tee "$results/console.log" || status=$?

# The paced suites wait in real time for most of their run: what follows is built meanwhile,
# on the cores they leave idle, as the other tests' processes loaded them before.
# At a lower priority than the tests' own processes.
step "API documentation (DocC, no warnings), beside the paced suites"
# About 2 minutes on the 2-core machine (CONTRIBUTING.md).
nice -n 10 scripts/docs.sh || status=$?

step "the example app (Examples/): build, then its test, beside the paced suites"
# A package of its own that depends on Tape by path, as an app would: its own build of the
# libraries. ExampleHostTests runs it and judges what it did.
# SwiftPM plans a path dependency's files once: a file added to a library since the last
# build of Examples/ is not seen (its types "cannot be found") until the plan is made again.
rm -f Examples/.build/debug.yaml
nice -n 10 swift build --package-path Examples || status=$?
NO_COLOR=1 "$bundle" --testing-library swift-testing --filter "$example" \
  --xunit-output "$results/xunit-example.xml" 2>&1 | tee -a "$results/console.log" || status=$?

step "waiting for the paced suites' process (its lines are those that start with paced:)"
paced_status=0
wait "$paced_pid" || paced_status=$?
cat "$results/paced.log" >>"$results/console.log"
if [ "$status" -eq 0 ]; then status=$paced_status; fi
scripts/test-times.py "$results/console.log" "$results"/xunit*.xml >&2 || true
step "done (status $status)"
exit "$status"
