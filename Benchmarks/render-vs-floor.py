#!/usr/bin/env python3
"""`tape render` against the render floor of issue 47, side by side in one run.

The floor (Benchmarks/c-mixer/floor.c, cc -O3 -march=native) reads pre-decoded float sources
with pread, mixes with the arithmetic of Tape's kernel, and writes a 32-bit float WAV with
pwrite: the least a renderer must do. It is timed in three setups, each run beside tape's:
one thread; two threads (this machine's two cores); two threads with an fsync before it ends,
which is what `tape render` promises of every file it writes (on tmpfs an fsync costs
nothing; on a disk it waits for the writeback); and that with the sources mapped whole
instead of read by pread (-m: no copy at all, the stronger floor where many tracks play the
same sources). Tape renders with
`--bits 32f` (no dither) and does what its summary needs on top: loudness, true peak, the
sample peak and the clip count. The ratio the issue sets a goal for (at most 1.0) is tape
against the comparable floor: two threads, durable, the faster of pread and mmap.

The projects are render-vs-sox.py's (N tracks x 8 clips cut at random from four 5-minute
48 kHz sources, fades, gains, pans), their cache warm; the floor's sources are the same audio
decoded by sox to raw float, so the outputs agree (checked: the difference's peak under -120
dBFS). Output goes to tmpfs (/dev/shm) and to the disk (the work folder), each file fresh.

    Benchmarks/render-vs-floor.py [--tracks 16,64] [--runs 5] [--work DIR] [--tape PATH]

The load average is printed at the start and the end: on a shared machine only ratios taken
in one run mean anything. Wall times are medians; CPU is user + system of the process (its
threads included), also medians.
"""

import argparse
import importlib.util
import math
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("render_vs_sox", os.path.join(ROOT, "Benchmarks", "render-vs-sox.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def build_floor(work):
    binary = os.path.join(work, "floor")
    source = os.path.join(ROOT, "Benchmarks", "c-mixer", "floor.c")
    bench.run(["cc", "-O3", "-march=native", "-pthread", "-o", binary, source])
    return binary


def raw_sources(sources):
    """Each source decoded by sox to raw interleaved float, beside it (not timed)."""
    raws = []
    for path, channels in sources:
        raw = path + ".f32"
        if not os.path.exists(raw):
            bench.run(["sox", "-D", path, "-t", "f32", raw])
        raws.append((raw, channels))
    return raws


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tracks", default="16,64")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tape-render-bench"))
    parser.add_argument("--tape", help="the tape binary (default: this checkout's release build)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.tape:
        tape = args.tape
    else:
        print("building tape (release)", file=sys.stderr)
        bench.run(["swift", "build", "-c", "release", "--product", "tape"], cwd=ROOT, stdout=subprocess.DEVNULL)
        tape = os.path.join(bench.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT,
                                      capture_output=True, text=True).stdout.strip(), "tape")
    sources = bench.make_sources(args.work)
    raws = raw_sources(sources)
    floor = build_floor(args.work)
    outputs = {"tmpfs": "/dev/shm/tape-render-floor", "disk": os.path.join(args.work, "out")}
    for folder in outputs.values():
        os.makedirs(folder, exist_ok=True)
    setups = {
        "tape": lambda project, edits, out: [tape, "render", project, "-o", out, "--bits", "32f"],
        "floor -j1": lambda project, edits, out: [floor, edits, out],
        "floor -j2": lambda project, edits, out: [floor, "-j", "2", edits, out],
        "floor -j2 -s": lambda project, edits, out: [floor, "-j", "2", "-s", edits, out],
        "floor -j2 -s -m": lambda project, edits, out: [floor, "-j", "2", "-s", "-m", edits, out],
    }
    rows = []
    for tracks in [int(t) for t in args.tracks.split(",")]:
        print(f"building the {tracks}-track project", file=sys.stderr)
        project, _, edit_list = bench.build_project(tape, args.work, sources, tracks, seed=tracks, layout="random")
        edits = os.path.join(args.work, f"floor-edits-{tracks}.txt")
        bench.c_edit_list(raws, edit_list, edits)
        for place, folder in outputs.items():
            # Warm: tape's cache and the raw sources in the page cache; the outputs agree.
            tape_out, floor_out = os.path.join(folder, "tape.wav"), os.path.join(folder, "floor.wav")
            for path in (tape_out, floor_out):
                if os.path.exists(path):
                    os.remove(path)
            bench.run(setups["tape"](project, edits, tape_out), stdout=subprocess.DEVNULL)
            difference = -math.inf
            for name in ("floor -j2", "floor -j2 -s -m"):
                bench.run(setups[name](project, edits, floor_out))
                difference = max(difference, bench.difference_dbfs(tape_out, floor_out))
                if difference >= -120:
                    sys.exit(f"tape and {name} disagree at {tracks} tracks: {difference} dBFS")
            for path in (tape_out, floor_out):
                os.remove(path)
            walls = {name: [] for name in setups}
            cpus = {name: [] for name in setups}
            for _ in range(args.runs):
                for name, command in setups.items():
                    out = os.path.join(folder, f"{name.replace(' ', '')}.wav")
                    # A fresh name each run: replacing a file costs the filesystem its blocks.
                    if os.path.exists(out):
                        os.remove(out)
                    wall, usage = bench.timed_with_usage(command(project, edits, out))
                    cpu = usage.ru_utime + usage.ru_stime
                    walls[name].append(wall)
                    cpus[name].append(cpu)
                    os.remove(out)
            medians = {name: (bench.median(walls[name]), bench.median(cpus[name])) for name in setups}
            for name in setups:
                print(f"{tracks} tracks, {place}: {name}: median {medians[name][0]:.3f} s, CPU "
                      f"{medians[name][1]:.3f} s (runs {' '.join(f'{w:.3f}' for w in walls[name])})")
            rows.append((tracks, place, medians, difference))
            print(f"load average after {tracks} tracks on {place}: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    print()
    print("tracks output   tape       floor -j1  floor -j2  -j2 -s     -j2 -s -m   tape/best durable floor  tape CPU / its CPU  |tape-floor|")
    for tracks, place, m, difference in rows:
        tape_wall, tape_cpu = m["tape"]
        best = min(("floor -j2 -s", "floor -j2 -s -m"), key=lambda name: m[name][0])
        print(f"{tracks:>6} {place:<6} {tape_wall:7.3f} s {m['floor -j1'][0]:7.3f} s {m['floor -j2'][0]:7.3f} s "
              f"{m['floor -j2 -s'][0]:7.3f} s {m['floor -j2 -s -m'][0]:7.3f} s   "
              f"{tape_wall / m[best][0]:6.2f}x ({best})   {tape_cpu:.3f} / {m[best][1]:.3f} s = "
              f"{tape_cpu / m[best][1]:.2f}x {difference:8.1f} dBFS")
    print("issue 47's goal: tape at most 1.0x the comparable floor (two threads, durable: the faster of pread and mmap)")
    shutil.rmtree(outputs["tmpfs"], ignore_errors=True)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
