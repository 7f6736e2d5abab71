#!/usr/bin/env python3
"""How soon an edit is heard: from a commit returning to the first frame rendered from the new
plan, with `tape play` on a paced device (JACK's dummy driver, 256-frame periods at 48 kHz, or
--period's: JACK's cycle and the player's period both, its buffer four of them).

Three measurements in one run, each over N gain edits spaced 150 ms apart:
  - in-process: player and editor in one process (Benchmarks' PlaybackLatency executable);
  - across processes, as people use it: `tape play` in one process, `tape clip set` in
    another, the player woken by inotify on the project's write-ahead log;
  - the same with inotify off (TAPE_NO_INOTIFY=1): the store's 20 ms poll alone.
Both sides stamp CLOCK_MONOTONIC: the editor's store logs when its commit returned
(TAPE_LOG=debug), the player reports when it rendered each swap's first frame (--json).

    Benchmarks/playback-latency.py [--edits 50] [--period 256] [--work DIR] [--tape PATH]

With --tape, that binary plays and edits (the in-process figure is always this checkout's).
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(args, **kwargs):
    return subprocess.run(args, check=True, **kwargs)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def summary(name, delays):
    return (f"{name:<32} n={len(delays):3}  median {percentile(delays, 0.5):6.2f} ms  "
            f"p99 {percentile(delays, 0.99):6.2f} ms  min {min(delays):6.2f}  max {max(delays):6.2f}")


def across_processes(tape, project, env, edits, inotify, period):
    player_env = dict(env)
    if not inotify:
        player_env["TAPE_NO_INOTIFY"] = "1"
    player = subprocess.Popen([tape, "play", project, "--device", "jackout", "--loop", "--json",
                               "--period", str(period)],
                              env=player_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    returned = []
    for step in range(edits):
        edit = subprocess.run([tape, "clip", "set", project, "c1", "--gain", f"-{step % 20 + 1}dB"],
                              env=dict(env, TAPE_LOG="debug"), capture_output=True, text=True, check=True)
        stamp = re.findall(r"monotonic=(\d+)", edit.stderr)
        returned.append(int(stamp[-1]))
        time.sleep(0.15)
    time.sleep(0.3)
    player.send_signal(signal.SIGINT)
    out, err = player.communicate()
    report = json.loads(out)
    swaps = report["swaps"][1:]
    if len(swaps) != edits:
        print(f"warning: {len(swaps)} swaps for {edits} edits: {err.strip()}", file=sys.stderr)
    return [(s["renderedAt"] - r) / 1e6 for s, r in zip(swaps, returned)], report["xruns"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--period", type=int, default=256, help="JACK's cycle and the player's period, in frames")
    parser.add_argument("--tape", help="the tape binary that plays and edits across processes")
    parser.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tape-latency-bench"))
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    print("building tape and PlaybackLatency (release)", file=sys.stderr)
    run(["swift", "build", "-c", "release", "--product", "tape"], cwd=ROOT, stdout=subprocess.DEVNULL)
    tape = args.tape or os.path.join(run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT,
                                         capture_output=True, text=True).stdout.strip(), "tape")
    bench = os.path.join(ROOT, "Benchmarks")
    run(["swift", "build", "-c", "release", "--product", "PlaybackLatency"], cwd=bench, stdout=subprocess.DEVNULL)
    latency = os.path.join(run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=bench,
                               capture_output=True, text=True).stdout.strip(), "PlaybackLatency")

    sine = os.path.join(args.work, "sine.wav")
    if not os.path.exists(sine):
        run(["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", sine, "synth", "60", "sine", "100", "vol", "0.5"])
    project = os.path.join(args.work, "latency.tape")
    for leftover in (project, project + "-wal", project + "-shm"):
        if os.path.exists(leftover):
            os.remove(leftover)
    run([tape, "new", project])
    run([tape, "import", project, sine], stdout=subprocess.DEVNULL)
    run([tape, "track", "add", project, "Sine"], stdout=subprocess.DEVNULL)
    run([tape, "clip", "add", project, "t1", "s1", "--at", "0", "--length", "50s"], stdout=subprocess.DEVNULL)

    home = os.path.join(args.work, "home")
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, ".asoundrc"), "w") as conf:
        conf.write("pcm.jackout {\n  type jack\n  playback_ports { 0 system:playback_1 1 system:playback_2 }\n}\n")
    server = f"tape-latency-{os.getpid()}"
    env = dict(os.environ, HOME=home, JACK_DEFAULT_SERVER=server, JACK_NO_AUDIO_RESERVATION="1")
    jackd = subprocess.Popen(["jackd", "-R", "-P", "70", "-n", server, "-d", "dummy", "-r", "48000", "-p", str(args.period)],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        inproc = subprocess.run([latency, project, "jackout", str(args.edits), str(args.period)], env=env,
                                capture_output=True, text=True, check=True).stdout.strip()
        notified, xruns_a = across_processes(tape, project, env, args.edits, inotify=True, period=args.period)
        polled, xruns_b = across_processes(tape, project, env, args.edits, inotify=False, period=args.period)
    finally:
        jackd.send_signal(signal.SIGTERM)
        jackd.wait()
    print()
    print(inproc)
    print(summary("across processes, inotify:", notified) + f"  xruns {xruns_a}")
    print(summary("across processes, poll only:", polled) + f"  xruns {xruns_b}")
    print(f"(a period is {args.period / 48:.2f} ms; the device's buffer adds {4 * args.period / 48:.1f} ms before a frame is heard)")


if __name__ == "__main__":
    main()
