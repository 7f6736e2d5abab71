#!/usr/bin/env python3
"""Renders one reference project with `tape render`, with sox and with a plain C mixer
(Benchmarks/c-mixer/mix.c: libsndfile in, float mix, libsndfile out), in the same run, checks
that they agree, and prints the wall times and their ratios.

The project: N tracks (default 4, 16 and 64) x 8 clips, each clip cut at a random place from one
of four 5-minute 48 kHz sources (mono and stereo, 16- and 24-bit), fades of 10-500 ms, clip
gains -6...+3 dB, track gains and pans; the clips of a track tile the 5 minutes with small
overlaps. sox renders the same edit list as one `sox -m` whose inputs are `sox` pipelines
(trim, fade, remix with the gains and pan law, pad): a plain sum, no dither, float output.

Import (decode into the cache) is timed separately; the render times are whole processes, the
cache warm. Peak memory is tape's maximum resident set (wait4), minus nothing: the mapped cache
pages it touched are part of it, so the script prints the cache size beside it.

    Benchmarks/render-vs-sox.py [--tracks 4,16,64] [--runs 5] [--work DIR] [--tape PATH ...]
                                [--layout random|sequential] [--no-slow-sox]

With --tape (repeatable), those binaries are timed instead of this checkout's release build,
side by side on the same project and cache: how one change of tape compares with another (the
summary tables are of the first; the per-binary lines and the goals cover each).
Each binary also renders 16-bit with its default TPDF dither in the same rotation (the issue's
goal: within 1.2x of 32-bit float). --no-slow-sox leaves out the per-clip sox setup (minutes at
64 tracks); the fast sox setup is always timed. The load average is printed at the start and
the end: on a shared machine only ratios taken in one run mean anything.
"""

import argparse
import math
import os
import random
import re
import shlex
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


def timed_with_usage(args, env=None, quiet=False):
    """Runs a command (`env`, or this process's environment), its stdout discarded (and its
    stderr, `quiet`); returns (wall seconds, its own resource usage: ru_maxrss in KiB,
    ru_utime and ru_stime). Render-vs-floor.py and effect-host.py time with it too."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        if quiet:
            os.dup2(devnull, 2)
        os.execvpe(args[0], args, env if env is not None else os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(args)}")
    return wall, usage


def timed_with_rusage(args):
    """Runs a command, its stdout discarded; returns (wall seconds, its own peak RSS in KiB)."""
    wall, usage = timed_with_usage(args)
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


def clip_pipeline(sources, clip, pad):
    """One clip as a sox pipeline: trimmed, faded, remixed to stereo with its gains and Tape's
    pan law, `pad` frames of silence before it."""
    path, channels = sources[clip["source"]]
    gain = 10 ** (clip["gain"] / 20)
    theta = (clip["pan"] + 1) * math.pi / 4
    if channels == 1:
        remix = [f"1v{gain * math.cos(theta)!r}", f"1v{gain * math.sin(theta)!r}"]
    else:
        remix = [f"1v{gain * min(1, math.sqrt(2) * math.cos(theta))!r}",
                 f"2v{gain * min(1, math.sqrt(2) * math.sin(theta))!r}"]
    return " ".join([
        "sox", "-D", shlex.quote(path), "-p", "trim", f"{clip['crop']}s", f"{clip['length']}s",
        "fade", "t", f"{clip['fade_in']}s", f"{clip['length']}s", f"{clip['fade_out']}s",
        "remix", "-m", *remix, "pad", f"{pad}s"])


def fast_sox_command(sources, edit_list, output):
    """The fastest sox setup we could write: per track, its clips spliced in order with silence
    for the gaps, in two streams (even and odd clips: neighbours overlap, every other one never
    does), then one `sox -m` of those streams. Two 5-minute streams a track instead of one padded
    stream a clip."""
    inputs = []
    for first in range(0, len(edit_list), CLIPS_PER_TRACK):
        track = edit_list[first:first + CLIPS_PER_TRACK]
        for parity in (0, 1):
            pieces, end = [], 0
            for clip in track[parity::2]:
                pieces.append(shlex.quote("|" + clip_pipeline(sources, clip, clip["start"] - end)))
                end = clip["start"] + clip["length"]
            inputs += ["-v", "1", "|sox -D " + " ".join(pieces) + " -p"]
    return ["sox", "-D", "-m"] + inputs + ["-e", "floating-point", "-b", "32", output]


def build_c_mixer(work):
    """Benchmarks/c-mixer/mix.c, built as an expert would build it (-O3 -march=native)."""
    binary = os.path.join(work, "c-mix")
    source = os.path.join(ROOT, "Benchmarks", "c-mixer", "mix.c")
    run(["cc", "-O3", "-march=native", "-o", binary, source, "-lsndfile"])
    return binary


def c_edit_list(sources, edit_list, path):
    """The edit list as mix.c reads it: per clip its left and right gains (clip x track gain x
    Tape's pan law), as the sox pipelines use them."""
    with open(path, "w") as out:
        out.write(f"{RATE} 2 {MINUTES_5}\n")
        for source_path, channels in sources:
            out.write(f"S {source_path} {channels}\n")
        for clip in edit_list:
            _, channels = sources[clip["source"]]
            gain = 10 ** (clip["gain"] / 20)
            theta = (clip["pan"] + 1) * math.pi / 4
            if channels == 1:
                left, right = gain * math.cos(theta), gain * math.sin(theta)
            else:
                left = gain * min(1, math.sqrt(2) * math.cos(theta))
                right = gain * min(1, math.sqrt(2) * math.sin(theta))
            out.write(f"C {clip['source']} {clip['crop']} {clip['length']} {clip['start']} "
                      f"{clip['fade_in']} {clip['fade_out']} {left!r} {right!r}\n")


def difference_dbfs(a, b):
    """The peak of a minus b in dBFS, measured by sox's `stats` (its 32-bit path)."""
    stats = subprocess.run(["sox", "-D", "-m", "-v", "1", a, "-v", "-1", b, "-n", "stats"],
                           capture_output=True, text=True, check=True).stderr
    peak = re.search(r"^Pk lev dB\s+(\S+)", stats, re.M).group(1)
    return float(peak)  # "-inf" parses too


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def timed_sox(name, command, out, tracks, warn_clipped=False):
    """Runs one sox setup into `out` (removed first) and returns its wall time."""
    print(f"{name} render of {tracks} tracks", file=sys.stderr)
    if os.path.exists(out):
        os.remove(out)
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if run.returncode != 0:
        sys.exit(f"{name} failed: {run.stderr}")
    if warn_clipped and "clipped" in run.stderr:
        print(f"warning: {name} clipped: {run.stderr.strip()}", file=sys.stderr)
    return wall


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tracks", default="4,16,64")
    parser.add_argument("--runs", type=int, default=5, help="tape renders per size (the median is reported)")
    parser.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tape-render-bench"))
    parser.add_argument("--tape", action="append", help="a tape binary to time (repeatable)")
    parser.add_argument("--no-slow-sox", action="store_true",
                        help="do not time the per-clip sox setup (the fast one is always timed)")
    parser.add_argument("--layout", choices=["random", "sequential"], default="random",
                        help="clips cut at random from the sources (the default), or each track "
                             "playing one source in order, as a multitrack recording does")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

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
    mixer = build_c_mixer(args.work)

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
        edits = os.path.join(args.work, f"edits-{tracks}.txt")
        c_edit_list(sources, edit_list, edits)
        c_out = os.path.join(args.work, f"c-{tracks}.wav")
        run([mixer, edits, c_out])  # the sources warm in the page cache too
        c_walls, c_rss = [], []
        walls = {binary: [] for binary in tapes}
        rss = {binary: [] for binary in tapes}
        walls16 = {binary: [] for binary in tapes}
        rss16 = {binary: [] for binary in tapes}
        tape_out16 = os.path.join(args.work, f"tape-{tracks}-16.wav")
        for _ in range(args.runs):
            # The C mixer takes its turn with the tape binaries, run by run.
            if os.path.exists(c_out):
                os.remove(c_out)
            wall, maxrss = timed_with_rusage([mixer, edits, c_out])
            c_walls.append(wall)
            c_rss.append(maxrss)
            for binary in tapes:
                # 32-bit float, then 16-bit with the default TPDF dither, in the same rotation.
                for out, bits, w, r in ((tape_out, "32f", walls, rss),
                                        (tape_out16, "16", walls16, rss16)):
                    # Replacing an existing output costs the filesystem time (freeing its
                    # blocks) that is not rendering: every run writes to a fresh name.
                    if os.path.exists(out):
                        os.remove(out)
                    wall, maxrss = timed_with_rusage(
                        [binary, "render", projects[binary], "-o", out, "--bits", bits])
                    w[binary].append(wall)
                    r[binary].append(maxrss)
        c_median = median(c_walls)
        for binary in tapes:
            med, med16 = median(walls[binary]), median(walls16[binary])
            print(f"{tracks} tracks: {binary}: 32f median {med:.3f} s (best {min(walls[binary]):.3f}, "
                  f"runs {' '.join(f'{w:.3f}' for w in walls[binary])}), peak RSS "
                  f"{max(rss[binary]) / 1024:.0f} MiB; 16-bit dithered median {med16:.3f} s "
                  f"({med16 / med:.2f}x of 32f), peak RSS {max(rss16[binary]) / 1024:.0f} MiB; "
                  f"tape/C {med / c_median:.2f}x (C median {c_median:.3f} s, runs "
                  f"{' '.join(f'{w:.3f}' for w in c_walls)})")
        print(f"load average after {tracks} tracks: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if args.no_slow_sox:
            sox_wall, sox_out = math.nan, None
        else:
            sox_wall = timed_sox("sox", sox_command(sources, edit_list, sox_out), sox_out,
                                 tracks, warn_clipped=True)
        fast_out = os.path.join(args.work, f"sox-fast-{tracks}.wav")
        fast_wall = timed_sox("fast sox", fast_sox_command(sources, edit_list, fast_out),
                              fast_out, tracks)
        diff = difference_dbfs(tape_out, sox_out) if sox_out else -math.inf
        c_diff = difference_dbfs(tape_out, c_out)
        fast_diff = difference_dbfs(tape_out, fast_out)
        clip_seconds = sum(c["length"] for c in edit_list) / RATE
        rows.append((tracks, len(edit_list), clip_seconds, import_seconds, median(walls[tape]),
                     min(walls[tape]), sox_wall, max(rss[tape]) / 1024, cache_bytes / 2**20, diff,
                     median(c_walls), max(c_rss) / 1024, c_diff, fast_wall, fast_diff,
                     median(walls16[tape]), max(rss16[tape]) / 1024,
                     {b: (median(walls[b]), median(walls16[b]), max(rss[b]) / 1024) for b in tapes}))

    print()
    print("tracks clips clip-audio  import   tape(median/best)     sox     ratio   tape-RSS  cache  RSS-cache  max |tape-sox|")
    for (tracks, clips, clip_seconds, imp, med, best, sox_wall, rss_mib, cache_mib, diff, *_) in rows:
        print(f"{tracks:>6} {clips:>5} {clip_seconds / 60:7.1f} min {imp:6.2f} s "
              f"{med:7.3f} s / {best:6.3f} s {sox_wall:7.2f} s {sox_wall / med:6.1f}x "
              f"{rss_mib:6.0f} MiB {cache_mib:4.0f} MiB {rss_mib - cache_mib:6.0f} MiB {diff:9.1f} dBFS")
    print()
    print("tracks   tape(median)  C mixer(median)  tape/C   C RSS    max |tape-C|   (C: Benchmarks/c-mixer/mix.c, -O3 -march=native)")
    for (tracks, _, _, _, med, _, _, _, _, _, c_med, c_rss_mib, c_diff, *_) in rows:
        print(f"{tracks:>6} {med:10.3f} s {c_med:12.3f} s {med / c_med:9.2f}x {c_rss_mib:5.0f} MiB "
              f"{c_diff:9.1f} dBFS")
    print()
    print("tracks   tape(median)  sox, fast setup  sox/tape   max |tape-sox|   (one stream per track parity, see fast_sox_command)")
    for (tracks, _, _, _, med, _, _, _, _, _, _, _, _, fast_wall, fast_diff, *_) in rows:
        print(f"{tracks:>6} {med:10.3f} s {fast_wall:12.2f} s {fast_wall / med:9.1f}x {fast_diff:11.1f} dBFS")
    print()
    print("tracks   tape 32f   tape 16-bit dithered   16/32f   32f RSS   16-bit RSS   (goal: 16-bit within 1.2x)")
    for (tracks, _, _, _, med, _, _, rss_mib, _, _, _, _, _, _, _, med16, rss16_mib, _) in rows:
        print(f"{tracks:>6} {med:8.3f} s {med16:14.3f} s {med16 / med:14.2f}x {rss_mib:6.0f} MiB "
              f"{rss16_mib:8.0f} MiB")
    print()
    print("issue 25's goals (this run), for each tape binary:")
    for (tracks, _, _, _, _, _, _, _, _, _, c_med, _, _, fast_wall, _, _, _, per_binary) in rows:
        sox_goal = 60 if tracks >= 64 else 30
        for binary, (med, med16, rss_mib) in per_binary.items():
            print(f"  {tracks:>3} tracks, {binary}: tape/C {med / c_med:.2f}x (goal <= 1.0: "
                  f"{'met' if med <= c_med else 'not met'}); 16-bit/32f {med16 / med:.2f}x "
                  f"(goal <= 1.2: {'met' if med16 <= 1.2 * med else 'not met'}); fast sox/tape "
                  f"{fast_wall / med:.1f}x (goal >= {sox_goal}: "
                  f"{'met' if fast_wall >= sox_goal * med else 'not met'}); peak RSS {rss_mib:.0f} MiB")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    failed = [r for r in rows if r[9] >= -120 or r[12] >= -120 or r[14] >= -120]
    if failed:
        sys.exit(f"renders disagree beyond -120 dBFS: {failed}")


if __name__ == "__main__":
    main()
