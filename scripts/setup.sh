#!/usr/bin/env bash
# Installs what building, testing and playing Tape needs on Debian/Ubuntu: the C libraries
# (libsndfile, ALSA, libsoxr, SQLite, lilv), the reference tools the tests compare against (sox,
# ffmpeg), the ALSA/JACK pieces the real-playback tests use, rsvg-convert for PNG pictures,
# and, in a virtualenv (.venv at the top of the checkout), the OpenTimelineIO reference library
# the interchange tests read every export with and numpy for the tests' reference signals.
# Safe to run again.
set -euo pipefail

packages=(
  pkg-config
  libsndfile1-dev libasound2-dev libsoxr-dev libsqlite3-dev   # used by Tape
  libssl-dev                                                  # SHA-256 of sources (libcrypto)
  liblilv-dev lv2-dev                                         # LV2 plugin hosting (lilv)
  x42-plugins lsp-plugins-lv2 swh-lv2                         # the plugins the effects tests run
  lv2file jalv lilv-utils                                     # reference LV2 hosts in tests
  sox libsox-fmt-all ffmpeg xxhash                            # references in tests
  sqlite3                                                     # damages project files in tests
  alsa-utils jackd2 libasound2-plugins                        # real ALSA playback in tests
  tmux                                                        # drives tape scrub in a terminal in tests
  man-db groff-base                                           # renders the installed manual pages in tests
  strace                                                      # the audio thread's system calls in tests
  librsvg2-bin fonts-dejavu-core                              # tape draw -o x.png (rsvg-convert) and its font
  chromium                                                    # the browser the tape view tests drive (headless)
  python3 python3-venv                                        # the OTIO reference library's virtualenv
)

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: the Swift toolchain (6.2 or later) is not on PATH; install it from swift.org first" >&2
  exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "setup: not root and no sudo; install these packages yourself: ${packages[*]}" >&2
    exit 1
  fi
fi

echo "setup: installing ${packages[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null

# OpenTimelineIO 0.18.1 and its CMX3600 adapter from PyPI, which read what `tape export` writes
# in the interchange tests; numpy 2.4.6, which computes the punch test's reference splice; and
# pyebur128 0.1.1 (libebur128), the loudness tests' exact meter (Tests/Support/ebur128.py).
# Tests/TapeCLITests/InterchangeTests.swift finds .venv/bin/python, or TAPE_REFERENCE_PYTHON.
venv="$(cd "$(dirname "$0")/.." && pwd)/.venv"
check='import numpy, opentimelineio, otio_cmx3600_adapter, pyebur128
assert opentimelineio.__version__ == "0.18.1" and numpy.__version__ == "2.4.6"'
if ! "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "setup: installing opentimelineio 0.18.1, otio-cmx3600-adapter, numpy 2.4.6 and pyebur128 0.1.1 into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    opentimelineio==0.18.1 otio-cmx3600-adapter==1.0.0 numpy==2.4.6 pyebur128==0.1.1
  "$venv/bin/python" -c "$check"
fi
echo "setup: done" >&2
