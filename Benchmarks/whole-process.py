#!/usr/bin/env python3
"""Whole-process times of `tape` against a baseline binary, with hyperfine, in one run.

Times `tape --help`, `tape ls` on a small project (10 clips, 20 versions) and
`tape clip set FILE CLIP --gain G` on 5,000 clips / 20,000 versions and on 100,000 clips /
1,000,000 versions (one-clip gain edits, as `tape-testing fixture` builds them through the
store's API), each command with every `--tape` binary side by side (hyperfine alternates
nothing: it runs each binary's command in turn, with warm-up runs first). Every binary edits its
own copy of each project; a `clip set` run always commits (hyperfine's --prepare sets another
gain first, untimed).

  Benchmarks/whole-process.py --tape NEW --tape BASE [--runs 30] [--large FILE]
      [--skip-large] [--testing PATH] [--order small-first|large-first]

`--large FILE` reuses a 100k/1M fixture built before (`tape-testing fixture FILE --clips
100000 --versions 1000000`: about 45 minutes on the project's 2-core machine, 241 MB; the
file format is the same for every binary here), otherwise it is built into the temporary
folder. Needs hyperfine (the Debian package). Not run by CI.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile


def fixture(testing, path, clips, versions):
    if not os.path.exists(path):
        subprocess.run(
            [testing, "fixture", path, "--clips", str(clips), "--versions", str(versions)],
            check=True)


def hyperfine(rows, runs, folder):
    """Runs hyperfine on [(name, command, prepare or None)] and returns name -> result."""
    out = os.path.join(folder, "hyperfine.json")
    arguments = ["hyperfine", "-N", "--warmup", "3", "--runs", str(runs), "--export-json", out]
    for name, command, prepare in rows:
        if prepare:
            arguments += ["--prepare", prepare]
        arguments += ["-n", name, command]
    # --prepare is given per command, in order: hyperfine takes one per command or one for all.
    if any(prepare for _, _, prepare in rows) and not all(prepare for _, _, prepare in rows):
        raise SystemExit("give every row a --prepare or none")
    subprocess.run(arguments, check=True, stdout=subprocess.DEVNULL)
    with open(out) as file:
        return {result["command"]: result for result in json.load(file)["results"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tape", action="append", required=True)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--large", default=None)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--testing", default=None)
    parser.add_argument("--order", choices=["small-first", "large-first"], default="small-first")
    options = parser.parse_args()
    binaries = [os.path.abspath(path) for path in options.tape]
    testing = options.testing or os.path.join(os.path.dirname(binaries[0]), "tape-testing")
    folder = tempfile.mkdtemp(prefix="tape-whole-process-")
    try:
        small = os.path.join(folder, "small.tape")
        medium = os.path.join(folder, "medium.tape")
        fixture(testing, small, 10, 20)
        fixture(testing, medium, 5_000, 20_000)
        projects = [("5k clips / 20k versions", medium, "c2500")]
        if not options.skip_large:
            large = options.large or os.path.join(folder, "large.tape")
            fixture(testing, large, 100_000, 1_000_000)
            projects.append(("100k clips / 1M versions", large, "c50000"))
        labels = [f"#{index + 1}" for index in range(len(binaries))]
        print(f"{options.runs} runs each (hyperfine -N, 3 warm-up runs), ms: "
              "median, mean ± sd, min, max of the wall time; mean user + system CPU time")
        for index, binary in enumerate(binaries):
            print(f"  {labels[index]} = {binary}")

        def report(title, results):
            print(title)
            for label in labels:
                result = results[label]
                print(f"  {label:4s} {result['median'] * 1000:7.2f}  "
                      f"{result['mean'] * 1000:7.2f} ± {result['stddev'] * 1000:5.2f}  "
                      f"{result['min'] * 1000:7.2f}  {result['max'] * 1000:7.2f}  "
                      f"cpu {(result['user'] + result['system']) * 1000:6.2f}")

        report("tape --help", hyperfine(
            [(label, f"{binary} --help", None) for label, binary in zip(labels, binaries)],
            options.runs, folder))
        report("tape ls, 10 clips / 20 versions", hyperfine(
            [(label, f"{binary} ls {small}", None) for label, binary in zip(labels, binaries)],
            options.runs, folder))
        for title, project, clip in (projects if options.order == "small-first"
                                     else list(reversed(projects))):
            rows = []
            for label, binary in zip(labels, binaries):
                copy = os.path.join(folder, f"copy-{label[1:]}.tape")
                shutil.copyfile(project, copy)
                rows.append((
                    label, f"{binary} clip set {copy} {clip} --gain -2",
                    f"{binary} clip set {copy} {clip} --gain -1"))
            # The copies' dirty pages (200 MB for the large project) are written back now, not
            # during the timed runs, whose fdatasyncs would wait for them.
            os.sync()
            report(f"tape clip set --gain, {title}", hyperfine(rows, options.runs, folder))
            for label in labels:
                os.remove(os.path.join(folder, f"copy-{label[1:]}.tape"))
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
