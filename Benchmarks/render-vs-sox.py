#!/usr/bin/env python3
"""Renders one reference project with `tape render` and with sox, in the same run, checks that
the two agree, and prints both wall times and their ratio.

The project: N tracks (default 4, 16 and 64) x 8 clips, each clip cut at a random place from one
of four 5-minute 48 kHz sources (mono and stereo, 16- and 24-bit), fades of 10-500 ms, clip
gains -6...+3 dB, track gains and pans; the clips of a track tile the 5 minutes with small
overlaps. sox renders the same edit list as one `sox -m` whose inputs are `sox` pipelines
(trim, fade, remix with the gains and pan law, pad): a plain sum, no dither, float output.

Import (decode into the cache) is timed separately; the render times are whole processes, the
cache warm. Peak memory is tape's maximum resident set (wait4), minus nothing: the mapped cache
pages it touched are part of it, so the script prints the cache size beside it.

    Benchmarks/render-vs-sox.py [--tracks 4,16,64] [--runs 5] [--work DIR] [--tape PATH ...]
                                [--layout random|sequential]

With --tape (repeatable), those binaries are timed instead of this checkout's release build,
side by side on the same project and cache: how one change of tape compares with another.
"""

import argparse
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATE = 48_000
MINUTES_5 = 300 * RATE
CLIPS_PER_TRACK = 8

SOURCES = [
    # name, channels, bits, sox synth arguments (sox -R makes them reproducible)
    ("brown-mono-16.wav", 1, 16, ["synth", "300", "brownnoise", "tremolo", "2", "80", "gain", "-8"]),
    ("pink-stereo-24.wav", 2, 24, ["synth", "300", "pinknoise", "pinknoise", "gain", "-14"]),
    ("sweeps-stereo-16.wav", 2, 16, ["synth", "300", "sine", "200-4000", "sine", "300-3000", "gain", "-12"]),
    ("tone-mono-24.wav", 1, 24, ["synth", "300", "sine", "440", "tremolo", "5", "50", "gain", "-12"]),
]


def run(args, **kwargs):
    return subprocess.run(args, check=True, **kwargs)


def timed_with_rusage(args):
    """Runs a command, its stdout discarded; returns (wall seconds, its own peak RSS in KiB)."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(args[0], args)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(args)}")
    return wall, usage.ru_maxrss


def make_sources(work):
    paths = []
    for name, channels, bits, synth in SOURCES:
        path = os.path.join(work, name)
        if not os.path.exists(path):
            print(f"generating {name} (5 minutes)", file=sys.stderr)
            run(["sox", "-R", "-n", "-r", str(RATE), "-c", str(channels), "-b", str(bits), path] + synth)
        paths.append((path, channels))
    return paths


def tape_cmd(tape, *args):
    return run([tape] + list(args), capture_output=True, text=True).stdout.strip()


def build_project(tape, work, sources, tracks, seed, layout):
    rng = random.Random(seed)
    project = os.path.join(work, f"bench-{layout}-{tracks}.tape")
    for leftover in (project, project + "-wal", project + "-shm"):
        if os.path.exists(leftover):
            os.remove(leftover)
    tape_cmd(tape, "new", project)
    import_start = time.perf_counter()
    ids = tape_cmd(tape, "import", project, *[p for p, _ in sources]).split()
    import_seconds = time.perf_counter() - import_start
    edit_list = []
    slot = MINUTES_5 // CLIPS_PER_TRACK
    track_gain_base = -10 * math.log10(tracks) - 3
    for t in range(tracks):
        gain = round(track_gain_base + rng.uniform(-3, 3), 2)
        pan = round(rng.uniform(-1, 1), 3)
        track = tape_cmd(tape, "track", "add", project, f"Track {t + 1}", "--gain", f"{gain}", "--pan", f"{pan}")
        for k in range(CLIPS_PER_TRACK):
            start = k * slot
            overlap = rng.randint(0, RATE // 2) if k < CLIPS_PER_TRACK - 1 else 0
            length = min(slot + overlap, MINUTES_5 - start)
            if layout == "random":
                s = rng.randrange(len(sources))
                crop = rng.randrange(0, MINUTES_5 - length)
            else:
                # Each track plays one source in order, as a multitrack recording does.
                s = t % len(sources)
                crop = start
            fade_in = rng.randint(RATE // 100, RATE // 2)
            fade_out = rng.randint(RATE // 100, RATE // 2)
            clip_gain = round(rng.uniform(-6, 3), 2)
            tape_cmd(
                tape, "clip", "add", project, track, ids[s], "--at", f"{start}f", "--from", f"{crop}f",
                "--length", f"{length}f", "--fade-in", f"{fade_in}f", "--fade-out", f"{fade_out}f",
                "--gain", f"{clip_gain}")
            edit_list.append(dict(source=s, start=start, crop=crop, length=length, fade_in=fade_in,
                                  fade_out=fade_out, gain=clip_gain + gain, pan=pan))
    return project, import_seconds, edit_list


def sox_command(sources, edit_list, output):
    """One sox -m whose inputs are sox pipelines, one per clip."""
    inputs = []
    for clip in edit_list:
        path, channels = sources[clip["source"]]
        gain = 10 ** (clip["gain"] / 20)
        theta = (clip["pan"] + 1) * math.pi / 4
        if channels == 1:
            remix = [f"1v{gain * math.cos(theta)!r}", f"1v{gain * math.sin(theta)!r}"]
        else:
            remix = [f"1v{gain * min(1, math.sqrt(2) * math.cos(theta))!r}",
                     f"2v{gain * min(1, math.sqrt(2) * math.sin(theta))!r}"]
        pipeline = " ".join([
            "sox", "-D", path, "-p", "trim", f"{clip['crop']}s", f"{clip['length']}s",
            "fade", "t", f"{clip['fade_in']}s", f"{clip['length']}s", f"{clip['fade_out']}s",
            "remix", "-m", *remix, "pad", f"{clip['start']}s"])
        inputs += ["-v", "1", f"|{pipeline}"]
    return ["sox", "-D", "-m"] + inputs + ["-e", "floating-point", "-b", "32", output]


def difference_dbfs(a, b):
    """The peak of a minus b in dBFS, measured by sox's `stats` (its 32-bit path)."""
    stats = subprocess.run(["sox", "-D", "-m", "-v", "1", a, "-v", "-1", b, "-n", "stats"],
                           capture_output=True, text=True, check=True).stderr
    peak = re.search(r"^Pk lev dB\s+(\S+)", stats, re.M).group(1)
    return float(peak)  # "-inf" parses too


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tracks", default="4,16,64")
    parser.add_argument("--runs", type=int, default=5, help="tape renders per size (the median is reported)")
    parser.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tape-render-bench"))
    parser.add_argument("--tape", action="append", help="a tape binary to time (repeatable)")
    parser.add_argument("--layout", choices=["random", "sequential"], default="random",
                        help="clips cut at random from the sources (the default), or each track "
                             "playing one source in order, as a multitrack recording does")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    if args.tape:
        tapes = args.tape
    else:
        print("building tape (release)", file=sys.stderr)
        run(["swift", "build", "-c", "release", "--product", "tape"], cwd=ROOT, stdout=subprocess.DEVNULL)
        bin_path = run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT,
                       capture_output=True, text=True).stdout.strip()
        tapes = [os.path.join(bin_path, "tape")]
    tape = tapes[0]
    sources = make_sources(args.work)

    rows = []
    for tracks in [int(t) for t in args.tracks.split(",")]:
        print(f"building the {tracks}-track project", file=sys.stderr)
        project, import_seconds, edit_list = build_project(
            tape, args.work, sources, tracks, seed=tracks, layout=args.layout)
        cache_bytes = sum(os.path.getsize(os.path.join(project + "-cache", f))
                          for f in os.listdir(project + "-cache"))
        tape_out = os.path.join(args.work, f"tape-{tracks}.wav")
        sox_out = os.path.join(args.work, f"sox-{tracks}.wav")
        # Each binary gets its own copy of the project, so its own cache (their formats may
        # differ), and renders once first so the timed runs find that cache warm. Then the
        # binaries take turns, run by run.
        projects = {tapes[0]: project}
        for index, binary in enumerate(tapes[1:], start=1):
            copy = project.replace(".tape", f"-{index}.tape")
            shutil.copyfile(project, copy)
            projects[binary] = copy
        for binary in tapes:
            run([binary, "render", projects[binary], "-o", tape_out, "--bits", "32f"],
                stdout=subprocess.DEVNULL)
        walls = {binary: [] for binary in tapes}
        rss = {binary: [] for binary in tapes}
        for _ in range(args.runs):
            for binary in tapes:
                # Replacing an existing output costs the filesystem time (freeing its blocks)
                # that is not rendering: every run writes to a fresh name.
                if os.path.exists(tape_out):
                    os.remove(tape_out)
                wall, maxrss = timed_with_rusage(
                    [binary, "render", projects[binary], "-o", tape_out, "--bits", "32f"])
                walls[binary].append(wall)
                rss[binary].append(maxrss)
        if len(tapes) > 1:
            for binary in tapes:
                print(f"{tracks} tracks: {binary}: median {median(walls[binary]):.3f} s, "
                      f"best {min(walls[binary]):.3f} s, peak RSS {max(rss[binary]) / 1024:.0f} MiB")
        print(f"sox render of {tracks} tracks", file=sys.stderr)
        if os.path.exists(sox_out):
            os.remove(sox_out)
        sox_start = time.perf_counter()
        sox = subprocess.run(sox_command(sources, edit_list, sox_out), capture_output=True, text=True)
        sox_wall = time.perf_counter() - sox_start
        if sox.returncode != 0:
            sys.exit(f"sox failed: {sox.stderr}")
        if "clipped" in sox.stderr:
            print(f"warning: sox clipped: {sox.stderr.strip()}", file=sys.stderr)
        diff = difference_dbfs(tape_out, sox_out)
        clip_seconds = sum(c["length"] for c in edit_list) / RATE
        rows.append((tracks, len(edit_list), clip_seconds, import_seconds, median(walls[tape]),
                     min(walls[tape]), sox_wall, max(rss[tape]) / 1024, cache_bytes / 2**20, diff))

    print()
    print("tracks clips clip-audio  import   tape(median/best)     sox     ratio   tape-RSS  cache  RSS-cache  max |tape-sox|")
    for (tracks, clips, clip_seconds, imp, med, best, sox_wall, rss_mib, cache_mib, diff) in rows:
        print(f"{tracks:>6} {clips:>5} {clip_seconds / 60:7.1f} min {imp:6.2f} s "
              f"{med:7.3f} s / {best:6.3f} s {sox_wall:7.2f} s {sox_wall / med:6.1f}x "
              f"{rss_mib:6.0f} MiB {cache_mib:4.0f} MiB {rss_mib - cache_mib:6.0f} MiB {diff:9.1f} dBFS")
    failed = [r for r in rows if r[-1] >= -120]
    if failed:
        sys.exit(f"renders disagree beyond -120 dBFS: {failed}")


if __name__ == "__main__":
    main()
