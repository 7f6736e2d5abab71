#!/usr/bin/env python3
"""What routing costs: 64 tracks, 8 buses and 16 sends, beside the same project without them.

The project: 64 tracks, each a 60 s clip (one of four sox-made 48 kHz sources, mono and
stereo), at -18 dB. Three versions of it, in one file (checked out in turn):

- flat: the 64 tracks to the master, no effects (the plain mix);
- buses: 8 more tracks (clip-less), each with an identity effect (x42's nodelay at 0 frames,
  "no delay, do not report latency"), nothing routed: the plugins' own cost and the graph's
  buses, without routing;
- routed: the same, with every track's output into one of the 8 buses (8 each) and 16
  post-fader sends from tracks to other buses.

For each: `tape render --bits 32f` as a whole process (wall time, the cache warm), and `tape
play --device null --period 256 --json` (ALSA's null PCM, unpaced: the audio thread, plans and
kernel of a real play), whose `cpuMean` is a period's mix time: printed in microseconds per
256-frame period. Routing's own cost is routed minus buses (the plugins and buses being in
both); the issue's goals: under 1 % of a period (53 us) beside the plugins' own cost, and a
routed render at most 1.2x the flat one.

    Benchmarks/routing-cost.py [--runs 3] [--work DIR] [--tape PATH]

Without --tape, this checkout's release build is used (built first). On a shared machine only
ratios taken in one run mean anything: the load average is printed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATE = 48_000
SECONDS = 60
PERIOD = 256
TRACKS = 64
BUSES = 8
SENDS = 16
IDENTITY = "http://gareus.org/oss/lv2/nodelay"
SOURCES = [
    ("pink-stereo.wav", 2, ["synth", str(SECONDS), "pinknoise", "pinknoise", "gain", "-14"]),
    ("brown-mono.wav", 1, ["synth", str(SECONDS), "brownnoise", "gain", "-10"]),
    ("sweep-stereo.wav", 2, ["synth", str(SECONDS), "sine", "200-4000", "sine", "300-3000", "gain", "-12"]),
    ("tone-mono.wav", 1, ["synth", str(SECONDS), "sine", "440", "gain", "-12"]),
]


def run(args, **kwargs):
    return subprocess.run(args, check=True, **kwargs)


def quiet(args):
    return run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def tape_binary(given):
    if given:
        return given
    print("building tape (release)", file=sys.stderr)
    run(["swift", "build", "-c", "release", "--product", "tape"], cwd=ROOT, stdout=subprocess.DEVNULL)
    path = run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT,
               capture_output=True, text=True).stdout.strip()
    return os.path.join(path, "tape")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work")
    parser.add_argument("--tape")
    options = parser.parse_args()
    tape = tape_binary(options.tape)
    work = options.work or tempfile.mkdtemp(prefix="tape-routing-cost-")
    os.makedirs(work, exist_ok=True)
    for name, channels, synth in SOURCES:
        path = os.path.join(work, name)
        if not os.path.exists(path):
            run(["sox", "-R", "-n", "-r", str(RATE), "-c", str(channels), "-b", "24", path] + synth)
    project = os.path.join(work, "routing.tape")
    for name in os.listdir(work):
        if name.startswith("routing.tape"):
            path = os.path.join(work, name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    quiet([tape, "new", project])
    quiet([tape, "import", project] + [os.path.join(work, name) for name, _, _ in SOURCES])
    # One batch per version: the flat project, the buses, the routing.
    flat = [f"track add T{i} --gain -18" for i in range(1, TRACKS + 1)]
    flat += [f"clip add t{i} s{(i - 1) % len(SOURCES) + 1} --at 0" for i in range(1, TRACKS + 1)]
    buses = [f"track add Bus{b}" for b in range(1, BUSES + 1)]
    buses += [f"fx add t{TRACKS + b} {IDENTITY} --set delay=0 --set report_latency=3"
              for b in range(1, BUSES + 1)]
    routed = [f"track set t{i} --output t{TRACKS + (i - 1) % BUSES + 1}" for i in range(1, TRACKS + 1)]
    sends = [["send", "add", project, f"t{i * 4}", f"t{TRACKS + (i % BUSES) + 1}", "--gain", "-12"]
             for i in range(1, SENDS + 1)]
    versions = {}
    for name, lines in [("flat", flat), ("buses", buses), ("routed", routed)]:
        run([tape, "batch", project], input="\n".join(lines) + "\n", text=True,
            stdout=subprocess.DEVNULL)
        if name == "routed":
            # One process each (a batch takes sends too, but not every build of tape did).
            for words in sends:
                quiet([tape] + words)
        versions[name] = json.loads(run([tape, "ls", project, "--json"], capture_output=True,
                                        text=True).stdout)["version"]
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home)
    print(f"load average at start: {os.getloadavg()}")
    out = os.path.join(work, "out.wav")
    results = {name: {"render": [], "period": []} for name in versions}
    for _ in range(options.runs):
        for name, version in versions.items():
            start = time.perf_counter()
            quiet([tape, "render", project, "--version", str(version), "-o", out, "--bits", "32f"])
            results[name]["render"].append(time.perf_counter() - start)
            quiet([tape, "checkout", project, str(version)])
            report = json.loads(run([tape, "play", project, "--device", "null", "--period",
                                     str(PERIOD), "--json", "--to", "20s"],
                                    capture_output=True, text=True, env=env).stdout)
            results[name]["period"].append(report["cpuMean"] * PERIOD / RATE * 1e6)
    print(f"load average at end: {os.getloadavg()}")
    best = {name: {k: min(v) for k, v in values.items()} for name, values in results.items()}
    for name, values in results.items():
        renders = ", ".join(f"{t:.2f}" for t in values["render"])
        periods = ", ".join(f"{p:.0f}" for p in values["period"])
        print(f"{name:7} render {renders} s (best {best[name]['render']:.2f}); "
              f"play {periods} us/period (best {best[name]['period']:.0f})")
    routing = best["routed"]["period"] - best["buses"]["period"]
    plugins = best["buses"]["period"] - best["flat"]["period"]
    budget = PERIOD / RATE * 1e6
    print(f"routing's own cost: {routing:.0f} us/period ({routing / budget * 100:.2f} % of a "
          f"{budget:.0f} us period; goal under 1 %), beside the buses and identity plugins' "
          f"{plugins:.0f} us")
    ratio = best["routed"]["render"] / best["flat"]["render"]
    print(f"routed render / flat render: {ratio:.2f}x (goal at most 1.2x); "
          f"routed / buses: {best['routed']['render'] / best['buses']['render']:.2f}x")


if __name__ == "__main__":
    main()
