#!/usr/bin/env bash
# Regenerates every file in TestAudio/ from Debian packages. The files are committed; run this
# only to change them. Needs: sox libsox-fmt-all espeak-ng fluidsynth fluid-soundfont-gm
# alsa-utils python3 (all from apt).
set -euo pipefail
cd "$(dirname "$0")"
SF2=/usr/share/sounds/sf2/FluidR3_GM.sf2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Speech: espeak-ng, resampled to 48 kHz 16-bit mono.
espeak-ng -v en-gb -s 150 -w "$tmp/speech.wav" \
  "Tape cuts, mixes and renders audio. Every edit can be undone, even after a crash."
sox -R "$tmp/speech.wav" -r 48000 -b 16 -c 1 speech-mono-48k-16.wav rate -v gain -n -3

# Instruments: a small MIDI file written by midi.py, rendered by fluidsynth with FluidR3 GM
# (reverb and chorus off so the render is repeatable).
python3 midi.py piano "$tmp/piano.mid"
python3 midi.py strings "$tmp/strings.mid"
fluidsynth -q -ni -R 0 -C 0 -g 0.6 -r 44100 -F "$tmp/piano-raw.wav" "$SF2" "$tmp/piano.mid"
fluidsynth -q -ni -R 0 -C 0 -g 0.6 -r 48000 -F "$tmp/strings-raw.wav" "$SF2" "$tmp/strings.mid"
sox -R "$tmp/piano-raw.wav" -b 24 piano-stereo-44k-24.wav trim 0 4 gain -n -1
sox -R "$tmp/strings-raw.wav" -e floating-point -b 32 strings-stereo-48k-float.wav trim 0 3 gain -n -2

# Noise bed: repeatable (-R) noise, pink on the left and brown on the right (so a channel swap
# shows), FLAC.
sox -R -n -r 48000 -b 16 -c 2 noise-stereo-48k-16.flac synth 4 pinknoise brownnoise gain -n -18 fade t 0.05 4 0.05

# A tone in AIFF: 440 Hz, 44.1 kHz 24-bit mono.
sox -R -n -r 44100 -b 24 -c 1 tone-mono-44k-24.aiff synth 2 sine 440 gain -6

# A real recording from alsa-utils (48 kHz 16-bit mono).
cp /usr/share/sounds/alsa/Front_Center.wav front-center-mono-48k-16.wav

# Bad inputs for error-path tests.
sox -R -n -r 48000 -b 16 -c 6 bad-six-channels.wav synth 0.1 whitenoise gain -20
sox -R -n -r 48000 -b 16 -c 2 "$tmp/full.wav" synth 1 whitenoise gain -20
head -c 100000 "$tmp/full.wav" > bad-truncated.wav   # header promises 192 000 bytes of data
printf 'This is a text file with a .wav name, not audio.\n' > bad-not-audio.wav
sox -R -n -r 48000 -b 16 -c 1 bad-empty.wav trim 0 0                     # a valid header, no frames
ls -l
