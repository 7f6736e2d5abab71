#!/usr/bin/env python3
"""History size and edit time under ripple edits (issue 23, item 2).

Builds a 10-minute project of 4 tracks, 75 clips of 8 s each per track (300 clips), each track
with a 20-point envelope (a 4-second fade up from -20 dB, then ten plateaus joined by 8-second
ramps in dB), then runs 1,000 ripple cuts of 0.3 s at seeded random places across all tracks,
one `tape cut --ripple` process each. At 0, 250, 500 and 1,000 cuts it prints the project
file's size, the median and p90 whole-process time of the cuts since the last mark and their
median CPU time (user + system: steadier than wall-clock time on a shared machine), the
envelope points per track and the bytes of the last version's stored history. At the end,
the length of the line `tape undo` prints (and of `undo --json`), undone and redone.

Then a 5,000-clip track (clips of 1 s, back to back), ripple-cut 10 times near its start: the
history bytes each cut stores, per clip it moved, and the file's size before and after.

  Benchmarks/ripple-history.py [--tape .build/release/tape]... [--cuts 1000] [--seed 1]

Several --tape binaries run side by side (each on its own copy, the same cuts in turn), so
that a shared machine's load affects them alike.

Goals (issue 23): the file under 5 MB after 1,000 cuts, edit time flat, at most ~20 bytes of
history per moved clip, a bounded undo line.
"""
import argparse
import json
import os
import random
import resource
import sqlite3
import statistics
import struct
import subprocess
import tempfile
import time
import wave

RATE = 48_000


def run(command, stdin=None):
    result = subprocess.run(
        command, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}): {result.stderr}")
    return result.stdout


def timed(command):
    """Wall-clock and CPU (user + system) milliseconds of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run(command)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def write_source(path, seconds):
    """A quiet 48 kHz mono 16-bit noise file."""
    rng = random.Random(7)
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        block = struct.pack("<4800h", *(rng.randint(-300, 300) for _ in range(4800)))
        for _ in range(seconds * 10):
            out.writeframes(block)


def file_size(path):
    """The project file (each `tape` process checkpoints its WAL into it when it exits)."""
    return os.path.getsize(path)


def last_version_bytes(path):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        (size,) = db.execute(
            "SELECT length(changeset) FROM version ORDER BY id DESC LIMIT 1").fetchone()
    return size


def envelope_points(tape, path):
    listing = json.loads(run([tape, "ls", path, "--json"]))
    return [len(track["envelope"] or []) for track in listing["tracks"]]


def clip_count(tape, path):
    listing = json.loads(run([tape, "ls", path, "--json"]))
    return sum(len(track["clips"]) for track in listing["tracks"])


def envelope_text():
    gains = [-2, -6, -3, -9, -4, -1, -7, -5, -8, -3]
    points = ["0s:-20dB"]
    for i, gain in enumerate(gains):
        points.append(f"{60 * i + 4}s:{gain}dB")
        points.append(f"{60 * i + 56}s:{gain}dB")
    return ",".join(points[:20])


def build_project(tape, folder, tracks, clips_per_track, clip_seconds, envelope):
    source = os.path.join(folder, "noise.wav")
    if not os.path.exists(source):
        write_source(source, 10)
    path = os.path.join(folder, f"ripple-{tracks}x{clips_per_track}.tape")
    run([tape, "new", path])
    run([tape, "import", path, source])
    lines = []
    for t in range(1, tracks + 1):
        lines.append(f"track add T{t}")
        for c in range(clips_per_track):
            lines.append(
                f"clip add t{t} s1 --at {c * clip_seconds}s --from 0s --length {clip_seconds}s")
        if envelope:
            lines.append(f"track envelope t{t} --set {envelope}")
    run([tape, "batch", path, "-", "-m", "Build"], stdin="\n".join(lines) + "\n")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tape", action="append",
                        help="a tape binary (default .build/release/tape); give several to "
                             "run them side by side, cut by cut")
    parser.add_argument("--cuts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-large", action="store_true", help="skip the 5,000-clip part")
    options = parser.parse_args()
    tapes = [os.path.abspath(t) for t in (options.tape or [".build/release/tape"])]
    folder = tempfile.mkdtemp(prefix="tape-ripple-history-")
    paths = []
    for index, tape in enumerate(tapes):
        own = os.path.join(folder, str(index))
        os.mkdir(own)
        paths.append(build_project(tape, own, 4, 75, 8, envelope_text()))
    rng = random.Random(options.seed)
    marks = [m for m in (0, 250, 500, 1000) if m <= options.cuts]
    if options.cuts not in marks:
        marks.append(options.cuts)
    print(f"10-minute project, 4 tracks, {clip_count(tapes[0], paths[0])} clips, 20-point "
          f"envelopes; {options.cuts} ripple cuts of 0.3 s (seed {options.seed})")
    header = (f"{'cuts':>5} {'file':>10} {'edit ms (median, p90)':>22} {'cpu ms':>7}"
              f" {'envelope points':>22} {'last version':>13} {'clips':>6}")
    times = [[] for _ in tapes]
    rows = [[] for _ in tapes]
    length = 600.0
    done = 0
    for mark in marks:
        while done < mark:
            start = rng.uniform(0, length - 0.3)
            for index, tape in enumerate(tapes):
                times[index].append(timed([
                    tape, "cut", paths[index], "--from", f"{start:.6f}s",
                    "--to", f"{start + 0.3:.6f}s", "--ripple"]))
            length -= 0.3
            done += 1
        for index, tape in enumerate(tapes):
            window = [wall for wall, _ in times[index][-250:]]
            cpu = [cpu for _, cpu in times[index][-250:]]
            edit = (f"{statistics.median(window):7.1f} "
                    f"{sorted(window)[int(len(window) * 0.9)]:7.1f}"
                    if window else f"{'-':>7} {'-':>7}")
            cpu_ms = f"{statistics.median(cpu):7.1f}" if cpu else f"{'-':>7}"
            points = ",".join(str(n) for n in envelope_points(tape, paths[index]))
            rows[index].append(
                f"{mark:5d} {file_size(paths[index]) / 1e6:8.2f} MB {edit:>22} {cpu_ms}"
                f" {points:>22} {last_version_bytes(paths[index]):11d} B"
                f" {clip_count(tape, paths[index]):6d}")
    for index, tape in enumerate(tapes):
        print(f"\n{tape}\n{header}")
        print("\n".join(rows[index]))
        path = paths[index]
        undo = run([tape, "undo", path])
        run([tape, "redo", path])
        undo_json = run([tape, "undo", path, "--json"])
        run([tape, "redo", path])
        print(f"undo line: {len(undo.encode())} bytes; undo --json: "
              f"{len(undo_json.encode())} bytes")
        print(f"  {undo.strip()[:400]}")

    if options.skip_large:
        return
    print("\n5,000 clips of 1 s on one track; 10 ripple cuts of 0.3 s in its first 10 s")
    for index, tape in enumerate(tapes):
        own = os.path.join(folder, str(index))
        large = build_project(tape, own, 1, 5000, 1, None)
        first = file_size(large)
        per_clip = []
        for i in range(10):
            start = 0.5 + i * 0.7
            run([tape, "cut", large, "--from", f"{start:.3f}s", "--to", f"{start + 0.3:.3f}s",
                 "--ripple"])
            moved = 5000 - int(start) - 1
            per_clip.append(last_version_bytes(large) / moved)
        print(f"  {tape}: {statistics.median(per_clip) * 4995:.0f} B of history per cut, "
              f"{statistics.median(per_clip):.1f} B per moved clip (median of 10); "
              f"file {first / 1e6:.2f} MB before, {file_size(large) / 1e6:.2f} MB after")


if __name__ == "__main__":
    main()
