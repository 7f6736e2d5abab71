#!/usr/bin/env python3
"""`tape log` on a long history (issue 27): < 100 ms whole process for a clip touched 1,000 times
in a 100,000-version history.

Builds the fixture through the store's API (`tape-testing fixture`: one commit for 100 clips
on 10 tracks, then one-clip gain edits, each clip in turn, up to --versions versions: with 100
clips and 100,000 versions every clip is touched about 1,000 times), timing the build; then
times whole `tape log FILE c1` processes (and `--json`, `--all`, and `tape history` with its
default limit), median and p90 of --runs runs, and checks the count of versions listed.

  Benchmarks/log-history.py [--tape .build/release/tape]
      [--testing .build/release/tape-testing] [--versions 100000] [--clips 100] [--runs 21]
      [--keep FIXTURE.tape]

Not run by CI (building the fixture takes minutes). Build both products first:
  swift build -c release --product tape && swift build -c release --product tape-testing
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}): {result.stderr}")
    return result.stdout


def timed(command, runs):
    """Milliseconds of `runs` whole processes: wall-clock median and p90, the median CPU time
    (user + system: steadier than wall-clock time on a shared machine), the last output."""
    samples = []
    cpu = []
    output = ""
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        output = run(command)
        samples.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9)], statistics.median(cpu), output


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tape", default=".build/release/tape")
    parser.add_argument("--testing", default=".build/release/tape-testing")
    parser.add_argument("--versions", type=int, default=100_000)
    parser.add_argument("--clips", type=int, default=100)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--keep", help="build the fixture here (and reuse it if it exists)")
    arguments = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="tape-log-")
    path = arguments.keep or os.path.join(folder, "history.tape")
    if not os.path.exists(path):
        start = time.perf_counter()
        run([arguments.testing, "fixture", path, "--clips", str(arguments.clips),
             "--versions", str(arguments.versions)])
        built = time.perf_counter() - start
        print(f"fixture: {arguments.versions:,} versions, {arguments.clips} clips, built in "
              f"{built:.1f} s through the store's API; {os.path.getsize(path) / 1e6:.1f} MB")
    else:
        print(f"fixture: {path} (reused)")
    tape = arguments.tape

    listed = json.loads(run([tape, "log", path, "c1", "--json"]))
    count = len(listed["versions"])
    print(f"c1 was changed by {count:,} versions (the head's line)")
    for label, command in [
        ("tape log FILE c1", [tape, "log", path, "c1"]),
        ("tape log FILE c1 --json", [tape, "log", path, "c1", "--json"]),
        ("tape log FILE c1 --all", [tape, "log", path, "c1", "--all"]),
        ("tape log FILE t1 (a track nobody edited after the first commit)",
         [tape, "log", path, "t1"]),
        ("tape history FILE (last 30)", [tape, "history", path]),
        ("tape ls FILE (for scale: open and list)", [tape, "ls", path]),
    ]:
        median, p90, cpu, output = timed(command, arguments.runs)
        lines = output.count("\n")
        print(f"{label}: median {median:.1f} ms, p90 {p90:.1f} ms, CPU {cpu:.1f} ms "
              f"({lines:,} lines)")


if __name__ == "__main__":
    main()
