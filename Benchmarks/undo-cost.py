#!/usr/bin/env python3
"""Whole-process `tape undo` and `tape redo` by project size, both ways side by side, with
hyperfine, in one run (issue 47: an undo read every row of the project).

For each fixture (`tape-testing fixture`: one-clip gain edits through the store's API), times
`tape undo FILE` (each run undoes one one-clip edit; hyperfine's untimed --prepare redoes it
first) and `tape redo FILE` (the prepare undoes), each two ways:

- scoped: the default, reading what the move changes (ScopedEditor);
- whole:  `TAPE_SCOPED_EDITS=0`, the whole project read first, as before (through `env`, whose
          exec adds about 0.5 ms; the scoped row gets the same `env` so the two compare).

  Benchmarks/undo-cost.py [--tape .build/release/tape] [--runs 30]
      [--sizes 1000:20000,50000:20000,100000:100000]

Prints median, mean ± sd, min and max wall time and the mean CPU time (ms), and the ratio of
each size's median to the smallest size's. Needs hyperfine (the Debian package). Not run by CI.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile


def hyperfine(rows, runs, folder):
    """Runs hyperfine on [(name, command, prepare)] and returns name -> result."""
    out = os.path.join(folder, "hyperfine.json")
    arguments = ["hyperfine", "-N", "--warmup", "3", "--runs", str(runs), "--export-json", out]
    for name, command, prepare in rows:
        arguments += ["--prepare", prepare, "-n", name, command]
    subprocess.run(arguments, check=True, stdout=subprocess.DEVNULL)
    with open(out) as file:
        return {result["command"]: result for result in json.load(file)["results"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tape", default=".build/release/tape")
    parser.add_argument("--testing", default=None)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--sizes", default="1000:20000,50000:20000,100000:100000")
    options = parser.parse_args()
    tape = os.path.abspath(options.tape)
    testing = options.testing or os.path.join(os.path.dirname(tape), "tape-testing")
    sizes = [tuple(int(n) for n in size.split(":")) for size in options.sizes.split(",")]
    folder = tempfile.mkdtemp(prefix="tape-undo-cost-")
    try:
        print(f"{options.runs} runs each (hyperfine -N, 3 warm-up runs), ms: "
              "median, mean ± sd, min, max of the wall time; mean user + system CPU time")
        medians = {}
        for clips, versions in sizes:
            base = os.path.join(folder, f"{clips}.tape")
            subprocess.run(
                [testing, "fixture", base, "--clips", str(clips), "--versions", str(versions)],
                check=True, stdout=subprocess.DEVNULL)
            rows = []
            for way, variable in (("scoped", "TAPE_SCOPED_EDITS=1"), ("whole", "TAPE_SCOPED_EDITS=0")):
                for verb, back in (("undo", "redo"), ("redo", "undo")):
                    copy = os.path.join(folder, f"{clips}-{way}-{verb}.tape")
                    shutil.copyfile(base, copy)
                    if verb == "redo":
                        subprocess.run([tape, "undo", copy], check=True, stdout=subprocess.DEVNULL)
                    rows.append((
                        f"{verb} {way}", f"env {variable} {tape} {verb} {copy}",
                        f"sh -c '{tape} {back} {copy} >/dev/null 2>&1; true'"))
            os.sync()
            results = hyperfine(rows, options.runs, folder)
            print(f"{clips:,} clips / {versions:,} versions")
            for name, result in results.items():
                medians[(clips, name)] = result["median"]
                print(f"  {name:12s} {result['median'] * 1000:7.2f}  "
                      f"{result['mean'] * 1000:7.2f} ± {result['stddev'] * 1000:5.2f}  "
                      f"{result['min'] * 1000:7.2f}  {result['max'] * 1000:7.2f}  "
                      f"cpu {(result['user'] + result['system']) * 1000:6.2f}")
        smallest = sizes[0][0]
        print(f"median against {smallest:,} clips:")
        for clips, _ in sizes[1:]:
            shown = ", ".join(
                f"{name} {medians[(clips, name)] / medians[(smallest, name)]:.2f}"
                for name in ("undo scoped", "redo scoped", "undo whole", "redo whole"))
            print(f"  {clips:,} clips: {shown}")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
