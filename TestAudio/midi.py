#!/usr/bin/env python3
"""Writes a small standard MIDI file (format 0) for make-test-audio.sh: `midi.py piano|strings OUT`."""
import struct
import sys

TICKS = 480  # per quarter note; tempo 120 bpm, so a quarter is 0.5 s


def varlen(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.insert(0, (n & 0x7F) | 0x80)
        n >>= 7
    return bytes(out)


def track(program, notes):
    """notes: list of (start_tick, length_ticks, [pitches], velocity)."""
    events = [(0, bytes([0xC0, program]))]
    for start, length, pitches, velocity in notes:
        for p in pitches:
            events.append((start, bytes([0x90, p, velocity])))
            events.append((start + length, bytes([0x80, p, 0])))
    events.sort(key=lambda e: (e[0], e[1][0] == 0x90))
    data = b"\x00\xff\x51\x03" + (500000).to_bytes(3, "big")
    now = 0
    for tick, ev in events:
        data += varlen(tick - now) + ev
        now = tick
    data += b"\x00\xff\x2f\x00"
    return data


def main():
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "piano":  # a C-major arpeggio and melody, acoustic grand piano
        melody = [60, 64, 67, 72, 71, 67, 64, 62]
        notes = [(i * TICKS // 2, TICKS // 2, [p], 90) for i, p in enumerate(melody)]
        data = track(0, notes)
    else:  # sustained chords, string ensemble
        chords = [[48, 55, 64], [45, 52, 60], [41, 48, 57]]
        notes = [(i * TICKS * 2, TICKS * 2, c, 80) for i, c in enumerate(chords)]
        data = track(48, notes)
    header = b"MThd" + struct.pack(">IHHH", 6, 0, 1, TICKS)
    with open(path, "wb") as f:
        f.write(header + b"MTrk" + struct.pack(">I", len(data)) + data)


main()
