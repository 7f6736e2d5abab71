#!/usr/bin/env bash
# Runs the README's test command (scripts/test.sh) on fresh clones of this repository's HEAD in
# the setups where new users found it failing, one after another:
#   1. as you: a clone in a folder only you may enter (mktemp -d, mode 700), on a path with a
#      space and non-ASCII letters, made and run under umask 077, with TMPDIR a private folder;
#   2. where this runs as root: the same as a throwaway user who is not root, with sudo (as the
#      README offers), the clone in that user's mode-700 home. The user, its sudoers entry and
#      its files are removed afterwards.
# Not part of the default test run (it builds the package from scratch once per setup: about
# 20 minutes in all on a 2-core machine). Run it before a change that touches the tests'
# fixtures, the way they run other programs, or the scripts lands.
#
# Usage: scripts/test-anywhere.sh [--only-me | --only-user]
# Each setup's whole output goes to a log whose path is printed; the summary names each setup,
# its time and its test runner's closing lines. Exit 0 when every setup passed.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
only=${1:-}
case "$only" in "" | --only-me | --only-user) ;; *)
  echo "usage: scripts/test-anywhere.sh [--only-me | --only-user]" >&2
  exit 64
  ;;
esac
logs=$(mktemp -d "${TMPDIR:-/tmp}/tape-anywhere-logs.XXXXXX")
chmod 755 "$logs"
summary=()
failed=0
user=""
work=""

cleanup() {
  if [ -n "$user" ]; then
    pkill -KILL -u "$user" 2>/dev/null || true
    userdel -r "$user" 2>/dev/null || true
    rm -f "/etc/sudoers.d/$user"
  fi
  if [ -n "$work" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

# The closing lines of both test runners, or the last lines when there are none.
closing() {
  grep -E "^(Test Suite 'All tests'|Executed [0-9]+ tests|✔ Test run|✘ Test run|test: )" "$1" \
    | tail -n 4 || tail -n 3 "$1"
}

record() { # name, log, seconds, status
  summary+=("$1: $([ "$4" -eq 0 ] && echo passed || echo "FAILED (exit $4)") in $3 s; log $2")
  summary+=("$(closing "$2" | sed 's/^/    /')")
  [ "$4" -eq 0 ] || failed=1
}

# 1. As whoever runs this.
if [ "$only" != --only-user ]; then
  log="$logs/as-$(id -un).log"
  work=$(umask 077 && mktemp -d "${TMPDIR:-/tmp}/tape-anywhere.XXXXXX")
  place="$work/my songs/Tapé ñ"
  started=$(date +%s)
  status=0
  (
    umask 077
    mkdir -p "$place" "$work/tmp"
    git clone -q "$repo" "$place/clone"
    cd "$place/clone"
    TMPDIR="$work/tmp" bash scripts/test.sh
  ) >"$log" 2>&1 || status=$?
  record "as $(id -un) in '$place/clone' (mode 700, umask 077, private TMPDIR)" "$log" \
    $(($(date +%s) - started)) "$status"
  rm -rf "$work"
  work=""
fi

# 2. As a throwaway user with sudo.
if [ "$only" != --only-me ]; then
  if [ "$(id -u)" -ne 0 ]; then
    summary+=("as a throwaway user: skipped (making one needs root)")
  elif ! command -v useradd >/dev/null; then
    summary+=("as a throwaway user: skipped (no useradd here)")
  else
    if ! command -v sudo >/dev/null; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends sudo >/dev/null
    fi
    user="tape-any-$$"
    useradd --create-home --shell /bin/bash "$user"
    home=$(getent passwd "$user" | cut -d: -f6)
    chmod 700 "$home"
    echo "$user ALL=(ALL) NOPASSWD: ALL" >"/etc/sudoers.d/$user"
    chmod 440 "/etc/sudoers.d/$user"
    log="$logs/as-$user.log"
    place="$home/my songs/Tapé ñ"
    started=$(date +%s)
    status=0
    # Root owns this repository and the Swift package mirror: the user's git must accept them.
    runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" LANG=C.UTF-8 \
      PATH="$(dirname "$(command -v swift)"):/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" \
      REPO="$repo" PLACE="$place" bash -c '
        set -euo pipefail
        umask 077
        git config --global --add safe.directory "*"
        mkdir -p "$PLACE"
        git clone -q "$REPO" "$PLACE/clone"
        cd "$PLACE/clone"
        bash scripts/test.sh
      ' >"$log" 2>&1 || status=$?
    record "as $user (not root, with sudo) in '$place/clone' (home mode 700, umask 077)" \
      "$log" $(($(date +%s) - started)) "$status"
  fi
fi

printf '%s\n' "${summary[@]}"
exit "$failed"
