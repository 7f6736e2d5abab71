#!/usr/bin/env python3
"""`tape batch` of 10,000 `clip add` lines beside 125 one-clip `tape clip add` processes, side
by side with hyperfine in one run (issue 47: a batch of 10,000 under 1 s, and under the time of
125 one-clip edits).

Builds `tape` in release mode first (unless --no-build), makes a project (one 3 s source, tracks
t1 and t2), and times, each run on a fresh copy of it:

- batch:            `tape batch FILE edits.txt`, 10,000 lines `clip add t1 s1 --at Ts --length
                    0.5s`, each line read by the batch language's own parser;
- batch, argparser: the same with `TAPE_BATCH_PARSER=argument-parser` (every line through
                    swift-argument-parser, as before the batch had a parser of its own);
- batch, large:     the same batch on a project that already has --large clips on t2 (a
                    line's cost must not grow with the project);
- 125 processes:    125 `tape clip add FILE t1 s1 --at Ts --length 0.5s` one after another (a
                    `sh` loop).

  Benchmarks/batch-cost.py [--tape .build/release/tape] [--runs 10] [--lines 10000]
      [--processes 125] [--large 100000] [--no-build]

Prints median, mean ± sd, min and max wall time and the mean CPU time (s), and the ratios the
issue asks about. Needs hyperfine (the Debian package). Not run by CI.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "TestAudio",
                      "speech-mono-48k-16.wav")


def run(arguments, **kwargs):
    subprocess.run(arguments, check=True, stdout=subprocess.DEVNULL, **kwargs)


def clip_adds(count, track, step_ms=1000):
    return "".join(f"clip add {track} s1 --at {i * step_ms}ms --length 0.5s\n"
                   for i in range(count))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tape", default=".build/release/tape")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--processes", type=int, default=125)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--no-build", action="store_true")
    options = parser.parse_args()
    if not options.no_build:
        run(["swift", "build", "-c", "release", "--product", "tape"])
    tape = os.path.abspath(options.tape)
    folder = tempfile.mkdtemp(prefix="tape-batch-cost-")
    try:
        base = os.path.join(folder, "base.tape")
        run([tape, "new", base])
        run([tape, "import", base, os.path.abspath(SOURCE)])
        run([tape, "track", "add", base, "A"])
        run([tape, "track", "add", base, "B"])
        large = os.path.join(folder, "large.tape")
        shutil.copyfile(base, large)
        filler = os.path.join(folder, "filler.txt")
        with open(filler, "w") as file:
            file.write(clip_adds(options.large, "t2"))
        run([tape, "batch", large, filler])
        edits = os.path.join(folder, "edits.txt")
        with open(edits, "w") as file:
            file.write(clip_adds(options.lines, "t1"))
        loop = os.path.join(folder, "loop.sh")
        with open(loop, "w") as file:
            file.write("".join(
                f'"$1" clip add "$2" t1 s1 --at {i}s --length 0.5s >/dev/null\n'
                for i in range(options.processes)))
        work = os.path.join(folder, "work.tape")
        fresh = f"sh -c 'rm -rf {work}*; cp {base} {work}'"
        rows = [
            ("batch", f"{tape} batch {work} {edits}", fresh),
            ("batch, argparser",
             f"env TAPE_BATCH_PARSER=argument-parser {tape} batch {work} {edits}", fresh),
            ("batch, large", f"{tape} batch {work} {edits}",
             f"sh -c 'rm -rf {work}*; cp {large} {work}'"),
            (f"{options.processes} processes", f"sh {loop} {tape} {work}", fresh),
        ]
        out = os.path.join(folder, "hyperfine.json")
        arguments = ["hyperfine", "-N", "--warmup", "1", "--runs", str(options.runs),
                     "--export-json", out]
        for name, command, prepare in rows:
            arguments += ["--prepare", prepare, "-n", name, command]
        subprocess.run(arguments, check=True, stdout=subprocess.DEVNULL)
        with open(out) as file:
            results = {result["command"]: result for result in json.load(file)["results"]}
        with open("/proc/loadavg") as file:
            load = file.read().split()[0]
        print(f"{options.lines:,} clip add lines; {options.processes} processes; large: "
              f"{options.large:,} clips already; {options.runs} runs each (hyperfine -N), s: "
              f"median, mean ± sd, min, max of the wall time; mean user + system CPU; "
              f"load average {load} after")
        for name, result in results.items():
            print(f"  {name:18s} {result['median']:7.3f}  {result['mean']:7.3f} ± "
                  f"{result['stddev']:5.3f}  {result['min']:7.3f}  {result['max']:7.3f}  "
                  f"cpu {result['user'] + result['system']:7.3f}")
        median = {name: result["median"] for name, result in results.items()}
        processes = f"{options.processes} processes"
        print(f"batch / {processes}: {median['batch'] / median[processes]:.2f} "
              f"(goal: under 1)")
        print(f"batch, argparser / batch: {median['batch, argparser'] / median['batch']:.2f}")
        print(f"batch, large / batch: {median['batch, large'] / median['batch']:.2f}")
        print(f"per line: {median['batch'] / options.lines * 1e6:.0f} us "
              f"(argparser {median['batch, argparser'] / options.lines * 1e6:.0f} us); "
              f"per process: {median[processes] / options.processes * 1e3:.1f} ms")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
