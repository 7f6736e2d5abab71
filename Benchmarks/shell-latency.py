#!/usr/bin/env python3
"""One edit in a running `tape shell`, against one `tape` process per edit.

Builds a project of 100,000 clips on 10 tracks with 10,000 versions of one-clip gain edits
(`tape-testing fixture`, through the store's API: about 10 s) and an EQ (x42's fil4) on t1,
then starts `tape shell FILE --json` and feeds it lines through a pipe, one at a time: the time
of a line is from writing it to reading its result (one JSON object), so it holds the pipe's
two hops as well as the parse and the commit (`synchronous=FULL`: one `fdatasync` each).
Two kinds of line, interleaved, each always a change (gains alternate):

  clip set cK --gain G      a one-clip edit (K spread over the 100,000 clips)
  fx set f1 --set gain=G    a one-parameter edit

Then the same two edits as one `tape` process each (`tape clip set FILE cK --gain G`,
`tape fx set FILE f1 --set gain=G`), and the shell driven at 100 lines a second for a few
seconds (what a live controller sends), with each line's time from when it was due. The
shell's CPU time per line (user + system, from /proc) is printed too: on this shared machine
the wall times wait for a core whenever other builds run.

  Benchmarks/shell-latency.py [--tape .build/release/tape] [--testing PATH] [--edits 1000]
      [--processes 30] [--clips 100000] [--versions 10000] [--fixture FILE]

Run from the repository root with a release build (`swift build -c release`). Prints median,
p90, p99 and max in ms. Not run by CI.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

EQ = "http://gareus.org/oss/lv2/fil4#stereo"


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def report(name, times):
    print(f"  {name:44s} n={len(times):5d}  median {statistics.median(times):7.3f}  "
          f"p90 {percentile(times, 0.9):7.3f}  p99 {percentile(times, 0.99):7.3f}  "
          f"max {max(times):7.3f}")


class Shell:
    """A `tape shell FILE --json` process, a line at a time."""

    def __init__(self, tape, project):
        self.process = subprocess.Popen(
            [tape, "shell", project, "--json"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, bufsize=0)
        self.reader = self.process.stdout

    def cpu_seconds(self):
        """The process's user + system CPU time so far (from /proc, in clock ticks)."""
        with open(f"/proc/{self.process.pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def send(self, line):
        self.process.stdin.write((line + "\n").encode())

    def result(self):
        text = self.reader.readline()
        if not text:
            raise SystemExit(f"tape shell ended: {self.process.stderr.read().decode()}")
        result = json.loads(text)
        if result["error"] is not None or not result["changed"]:
            raise SystemExit(f"an edit failed or changed nothing: {result}")
        return result

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)
        if self.process.returncode != 0:
            raise SystemExit(f"tape shell exited {self.process.returncode}: "
                             f"{self.process.stderr.read().decode()}")


def edit_line(index, clips):
    """The index-th edit: clip and effect edits in turn, each a change."""
    gain = -1 - (index // 2) % 12 - 0.25 * (index % 3)
    if index % 2 == 0:
        clip = 1 + (index * 7_919) % clips
        return "clip", f"clip set c{clip} --gain {gain}dB", ["clip", "set", f"c{clip}", "--gain",
                                                             f"{gain}dB"]
    return "fx", f"fx set f1 --set gain={gain}", ["fx", "set", "f1", "--set", f"gain={gain}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tape", default=".build/release/tape")
    parser.add_argument("--testing", default=None)
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=30)
    parser.add_argument("--clips", type=int, default=100_000)
    parser.add_argument("--versions", type=int, default=10_000)
    parser.add_argument("--fixture", default=None,
                        help="a project built before by this script (copied, not changed)")
    options = parser.parse_args()
    tape = os.path.abspath(options.tape)
    testing = options.testing or os.path.join(os.path.dirname(tape), "tape-testing")
    folder = tempfile.mkdtemp(prefix="tape-shell-latency-")
    try:
        project = os.path.join(folder, "large.tape")
        if options.fixture:
            shutil.copyfile(options.fixture, project)
        else:
            start = time.perf_counter()
            subprocess.run([testing, "fixture", project, "--clips", str(options.clips),
                            "--versions", str(options.versions)], check=True)
            subprocess.run([tape, "fx", "add", project, "t1", EQ], check=True,
                           stdout=subprocess.DEVNULL)
            print(f"fixture: {options.clips} clips, {options.versions} versions, an EQ on t1 "
                  f"({time.perf_counter() - start:.1f} s, {os.path.getsize(project) >> 20} MB)")
        os.sync()

        # One line at a time: write it, wait for its result.
        shell = Shell(tape, project)
        start = time.perf_counter()
        shell.send("clip set c1 --gain -0.5dB")
        shell.result()
        print(f"tape shell: opened and made its first edit in "
              f"{(time.perf_counter() - start) * 1000:.1f} ms")
        for index in range(50):  # warm-up
            shell.send(edit_line(index, options.clips)[1])
            shell.result()
        times = {"clip": [], "fx": []}
        versions = []
        cpu = shell.cpu_seconds()
        for index in range(options.edits * 2):
            kind, line, _ = edit_line(index + 1_000, options.clips)
            start = time.perf_counter()
            shell.send(line)
            result = shell.result()
            times[kind].append((time.perf_counter() - start) * 1000)
            versions.append(result["version"])
        cpu = (shell.cpu_seconds() - cpu) / (options.edits * 2) * 1000
        if versions != list(range(versions[0], versions[0] + len(versions))):
            raise SystemExit("the versions are not one a line, in order")

        # 100 lines a second, each line timed from when it was due.
        paced = []
        due = time.perf_counter()
        for index in range(500):
            due += 0.01
            while time.perf_counter() < due:
                pass
            shell.send(edit_line(index + 9_000, options.clips)[1])
            shell.result()
            paced.append((time.perf_counter() - due) * 1000)
        shell.close()

        def process(arguments):
            start = time.perf_counter()
            subprocess.run([tape] + arguments[:2] + [project] + arguments[2:], check=True,
                           stdout=subprocess.DEVNULL)
            return (time.perf_counter() - start) * 1000

        whole = {"clip": [], "fx": []}
        for index in range(options.processes * 2):
            kind, _, arguments = edit_line(index + 20_000, options.clips)
            whole[kind].append(process(arguments))

        print(f"ms per edit at {options.clips} clips (load average "
              f"{os.getloadavg()[0]:.2f}):")
        report("tape shell: clip set cK --gain G", times["clip"])
        report("tape shell: fx set f1 --set gain=G", times["fx"])
        print(f"  {'tape shell: CPU (user + system) per line':44s} {cpu:7.3f}")
        report("tape shell at 100 lines/s (from due)", paced)
        report("a process each: tape clip set", whole["clip"])
        report("a process each: tape fx set", whole["fx"])
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
