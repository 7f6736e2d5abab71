#!/usr/bin/env python3
"""Whole-process time of one edit, the unit of every script that drives tape.

Runs `tape clip set FILE c1 --gain G` (a new process each time, alternating gains so every run
commits) on the demo project and on a 1,000-clip project with 10,000 versions, and prints the
medians beside `tape --help` (starting the binary and parsing) and `/bin/true` (starting any
process). Goals (issue 13): under 10 ms on the demo project, under 15 ms on the large one.

  Benchmarks/edit-latency.py [--tape .build/release/tape] [--testing PATH] [--runs 20]

Run from the repository root (the demo reads TestAudio/). The large project is built once by
`tape-testing fixture` into the temporary folder.
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time


def timed(command):
    start = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {result.stderr.decode()}")
    return elapsed


def median_of(runs, command_for):
    times = [timed(command_for(i)) for i in range(runs)]
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tape", default=".build/release/tape")
    parser.add_argument("--testing", default=None)
    parser.add_argument("--runs", type=int, default=20)
    options = parser.parse_args()
    tape = os.path.abspath(options.tape)
    testing = options.testing or os.path.join(os.path.dirname(tape), "tape-testing")
    if not os.path.exists(testing):
        testing = ".build/debug/tape-testing"
    folder = tempfile.mkdtemp(prefix="tape-edit-latency-")
    demo = os.path.join(folder, "demo")
    subprocess.run([tape, "demo", demo, "--no-play"], check=True, stdout=subprocess.DEVNULL)
    large = os.path.join(folder, "large.tape")
    subprocess.run(
        [testing, "fixture", large, "--clips", "1000", "--versions", "10000"], check=True)
    rows = [
        ("/bin/true", lambda i: ["/bin/true"]),
        ("tape --help", lambda i: [tape, "--help"]),
        ("clip set, demo project",
         lambda i: [tape, "clip", "set", f"{demo}/demo.tape", "c1", "--gain", f"-{i % 7}"]),
        ("clip set, 1,000 clips, 10,000 versions",
         lambda i: [tape, "clip", "set", large, "c500", "--gain", f"-{i % 7}"]),
    ]
    print(f"{options.runs} runs each, whole process, ms (median, min, max)")
    for name, command_for in rows:
        median, low, high = median_of(options.runs, command_for)
        print(f"  {name:42s} {median:7.2f}  {low:7.2f}  {high:7.2f}")


if __name__ == "__main__":
    main()
