#!/usr/bin/env python3
"""The engine's CPU per period with effects, next to the plugins' own cost, in the same run.

The project: 16 tracks, each a 60 s stereo 48 kHz clip (pink noise made by sox) through an EQ
(x42's fil4, two sections on) and a compressor (x42's darc), summed to the master.

- The engine: `tape play --device null --period 256 --json` (ALSA's null PCM, unpaced: the
  player renders as fast as it can, through the same audio thread, plans and kernel as a real
  play). Its report's `cpuMean` and `cpuPeak` are a period's mix time (clips, effects, delays,
  master) as a share of the period (5.33 ms): printed as microseconds per period.
- The plugins alone: `lv2file` (Debian's lv2file, an independent host) runs each plugin over
  the same 60 s file in blocks of 256, its CPU time (user + system) measured; the same with
  swh's amp (nearly free) gives lv2file's own file reading and writing, which is taken off.
  16 x (EQ + compressor) per period is what the plugins cost whoever hosts them.

The ratio of the two is the engine's cost over the plugins': clip mixing, the 64-frame FIFOs,
the buses and their delays, on top of the DSP itself.

    Benchmarks/effects-cpu.py [--tracks 16] [--runs 3] [--work DIR] [--tape PATH]

Without --tape, this checkout's release build is used (built first).
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATE = 48_000
SECONDS = 60
PERIOD = 256
EQ = "http://gareus.org/oss/lv2/fil4#stereo"
COMPRESSOR = "http://gareus.org/oss/lv2/darc#stereo"
AMP = "http://plugin.org.uk/swh-plugins/amp"
EQ_SETTINGS = ["sec1=on", "freq1=250", "gain1=-4", "sec2=on", "freq2=3000", "gain2=3"]
COMPRESSOR_SETTINGS = ["threshold=-30", "Ratio=0.5"]


def run(args, **kwargs):
    return subprocess.run(args, check=True, **kwargs)


def cpu_seconds(args):
    """Runs a command (stdout and stderr discarded); returns its CPU time, user + system."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


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
    parser.add_argument("--tracks", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work")
    parser.add_argument("--tape")
    options = parser.parse_args()
    tape = tape_binary(options.tape)
    work = options.work or tempfile.mkdtemp(prefix="tape-effects-cpu-")
    os.makedirs(work, exist_ok=True)
    source = os.path.join(work, "pink.wav")
    if not os.path.exists(source):
        run(["sox", "-R", "-n", "-r", str(RATE), "-c", "2", "-b", "24", source,
             "synth", str(SECONDS), "pinknoise", "pinknoise", "gain", "-14"])
    project = os.path.join(work, "effects.tape")
    for name in os.listdir(work):
        if name.startswith("effects.tape"):
            path = os.path.join(work, name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    run([tape, "new", project], stdout=subprocess.DEVNULL)
    run([tape, "import", project, source], stdout=subprocess.DEVNULL)
    for track in range(1, options.tracks + 1):
        run([tape, "track", "add", project, f"T{track}", "--gain", "-12"], stdout=subprocess.DEVNULL)
        run([tape, "clip", "add", project, f"t{track}", "s1", "--at", "0"], stdout=subprocess.DEVNULL)
        run([tape, "fx", "add", project, f"t{track}", EQ]
            + [word for setting in EQ_SETTINGS for word in ("--set", setting)], stdout=subprocess.DEVNULL)
        run([tape, "fx", "add", project, f"t{track}", COMPRESSOR]
            + [word for setting in COMPRESSOR_SETTINGS for word in ("--set", setting)],
            stdout=subprocess.DEVNULL)
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home)

    periods = SECONDS * RATE / PERIOD
    engine_mean, engine_peak = [], []
    plugins = {EQ: [], COMPRESSOR: [], AMP: []}
    for attempt in range(options.runs):
        out = run([tape, "play", project, "--device", "null", "--period", str(PERIOD), "--json"],
                  capture_output=True, text=True, env=env).stdout
        report = json.loads(out)
        engine_mean.append(report["cpuMean"] * PERIOD / RATE * 1e6)
        engine_peak.append(report["cpuPeak"] * PERIOD / RATE * 1e6)
        for uri, settings in [(EQ, EQ_SETTINGS), (COMPRESSOR, COMPRESSOR_SETTINGS), (AMP, [])]:
            values = []
            for setting in settings:
                symbol, value = setting.split("=")
                values += ["-p", f"{symbol}:{1 if value == 'on' else value}"]
            output = os.path.join(work, "lv2file.wav")
            cpu = cpu_seconds(["lv2file", "-i", source, "-o", output, "-b", str(PERIOD),
                               "--ignore-clipping"] + values + [uri])
            plugins[uri].append(cpu / periods * 1e6)

    best = min
    io = best(plugins[AMP])
    eq = max(best(plugins[EQ]) - io, 0)
    compressor = max(best(plugins[COMPRESSOR]) - io, 0)
    dsp = options.tracks * (eq + compressor)
    engine = best(engine_mean)
    print(f"{options.tracks} tracks x (EQ + compressor), {SECONDS} s at {RATE} Hz, period {PERIOD}"
          f" ({PERIOD / RATE * 1e6:.0f} us), best of {options.runs}")
    print(f"  engine (tape play, null device): mean {engine:.0f} us/period"
          f" ({engine / (PERIOD / RATE * 1e6) * 100:.1f}% of the period), peak {best(engine_peak):.0f} us")
    print(f"  plugins alone (lv2file, less its file I/O {io:.1f} us): EQ {eq:.1f} us,"
          f" compressor {compressor:.1f} us per period and track; x{options.tracks}: {dsp:.0f} us")
    print(f"  engine / plugins alone: {engine / dsp:.2f}" if dsp > 0 else "  plugins alone: too small to measure")


if __name__ == "__main__":
    main()
