#!/usr/bin/env python3
"""`tape compare` costs what changed, not the project (issue 27).

Builds a long many-track project (default: 64 tracks, one hour, a clip of 30 s every 30 s on
each track, all from one noise source), then makes version B by changing the gain of one
2-second clip (on track 10, at 30:00). Times whole processes: `tape compare FILE A B --json`
(it should render about 2 s of each version) against a full `tape render` of the project (to
/dev/null, 24-bit WAV stream), after one render that fills the decoded-audio cache. Also a
compare of two versions whose diff cannot sound (a rename: nothing rendered).

  Benchmarks/compare-cost.py [--tape .build/release/tape] [--tracks 64] [--minutes 60]
      [--runs 3]

Not run by CI (the full render takes a while).
"""
import argparse
import json
import os
import random
import statistics
import struct
import subprocess
import tempfile
import time
import wave

RATE = 48_000
CLIP = 30


def run(command, stdin=None):
    result = subprocess.run(
        command, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}): {result.stderr}")
    return result.stdout


def timed(command, runs):
    samples = []
    output = ""
    for _ in range(runs):
        start = time.perf_counter()
        output = run(command)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), output


def write_source(path, seconds):
    """Quiet 48 kHz stereo 16-bit noise."""
    rng = random.Random(7)
    with wave.open(path, "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(RATE)
        block = struct.pack("<9600h", *(rng.randint(-300, 300) for _ in range(9600)))
        for _ in range(seconds * 10):
            out.writeframes(block)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tape", default=".build/release/tape")
    parser.add_argument("--tracks", type=int, default=64)
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    tape = arguments.tape

    folder = tempfile.mkdtemp(prefix="tape-compare-")
    source = os.path.join(folder, "noise.wav")
    write_source(source, CLIP + 2)
    path = os.path.join(folder, "long.tape")
    run([tape, "new", path])
    run([tape, "import", path, source])
    seconds = arguments.minutes * 60
    lines = []
    for track in range(1, arguments.tracks + 1):
        lines.append(f"track add T{track}")
        for at in range(0, seconds, CLIP):
            if track == 10 and at == seconds // 2:
                # The clip that will change: 2 s, then the rest of the slot.
                lines.append(f"clip add t{track} s1 --at {at}s --length 2s")
                lines.append(f"clip add t{track} s1 --at {at + 2}s --from 2s --length {CLIP - 2}s")
            else:
                lines.append(f"clip add t{track} s1 --at {at}s --length {CLIP}s")
    start = time.perf_counter()
    run([tape, "batch", path, "-", "-m", "Build"], stdin="\n".join(lines) + "\n")
    print(f"project: {arguments.tracks} tracks × {arguments.minutes} min, "
          f"{len(lines) - arguments.tracks:,} clips, built in {time.perf_counter() - start:.1f} s")
    listing = json.loads(run([tape, "ls", path, "--json"]))
    track10 = next(track for track in listing["tracks"] if track["id"] == "t10")
    changed = next(clip for clip in track10["clips"]
                   if clip["timelineStart"] == (seconds // 2) * RATE)
    before = json.loads(run([tape, "history", path, "--json"]))["head"]
    run([tape, "clip", "set", path, changed["id"], "--gain", "-3dB"])
    after = before + 1
    run([tape, "track", "set", path, "t1", "--name", "Renamed"])

    # Fill the decoded-audio cache once (both commands read it).
    run([tape, "render", path, "-o", "/dev/null", "--format", "wav", "--to", "1s"])
    compare, output = timed([tape, "compare", path, str(before), str(after), "--json"],
                            arguments.runs)
    report = json.loads(output)
    rendered = report["renderedFrames"] / RATE
    print(f"tape compare v{before} v{after} ({changed['id']} −3 dB): {compare:.2f} s whole process, "
          f"rendered {rendered:.2f} s of each version of {report['projectFrames'] / RATE:.0f} s; "
          f"{len(report['ranges'])} range(s): "
          + ", ".join(f"{r['start'] / RATE:.3f}–{r['end'] / RATE:.3f} s peak {r['peakDBFS']:.1f} dBFS "
                      f"blame {','.join(r['blame'])}" for r in report["ranges"]))
    rename, output = timed([tape, "compare", path, str(after), str(after + 1), "--json"],
                           arguments.runs)
    print(f"tape compare v{after} v{after + 1} (a rename): {rename:.2f} s, "
          f"rendered {json.loads(output)['renderedFrames']} frames")
    render, _ = timed([tape, "render", path, "-o", "/dev/null", "--format", "wav"], 1)
    print(f"tape render (whole project, one version): {render:.2f} s; "
          f"compare took {compare / render * 100:.1f}% of one full render "
          f"(a null test by two full renders: {2 * render:.1f} s)")


if __name__ == "__main__":
    main()
