#!/usr/bin/env bash
# Kills a committing `tape` process with SIGKILL at random moments, KILLS times (default 200),
# and checks after each kill: PRAGMA integrity_check is ok, every acknowledged commit is present,
# the head is the last acknowledged version or the one in flight, undo back to version 1 works,
# and every history block equals the versions it stands for. It is the CI test
# `killingAWriterLosesNothingItAcknowledged` with more rounds.
#   Benchmarks/crash-test.sh [KILLS]
set -euo pipefail
cd "$(dirname "$0")/.."
kills="${1:-200}"
start=$(date +%s)
TAPE_CRASH_KILLS="$kills" swift test --filter 'killingAWriterLosesNothingItAcknowledged'
echo "crash test: $kills kills passed in $(( $(date +%s) - start )) s"
