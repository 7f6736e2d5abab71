#!/usr/bin/env python3
"""What hosting one effect costs `tape render`, against an independent host, in one run.

One minute of mono 48 kHz pink noise (sox -R), on one track of a mono project, rendered by
`tape render --bits 32f --tail 0` three ways: dry; through x42's EQ (fil4, two sections on);
through x42's nodelay at 0 (an identity: what hosting any plugin costs beyond its DSP).
`lv2file` (Debian's, an independent LV2 host) runs the same two plugins over the same file in
blocks of 64 frames (the step at which Tape runs effects) and in its default block (512).
CPU is user + system of each whole process; each figure is the median of --runs, the runs
interleaved.

- Tape's cost of the EQ: its render with the EQ less its dry render.
- The EQ's own cost at 64-frame steps: lv2file's EQ run less its identity run (what lv2file
  spends reading and writing the file is in both).
- Tape's host overhead: the first less the second; its share of the first. The identity's
  cost in each host says the same from the other side (a plugin that does nothing).

The renders are checked against lv2file's output (the same samples to -100 dBFS: the same
plugin with the same settings ran).

    Benchmarks/effect-host.py [--runs 5] [--work DIR] [--tape PATH]
"""

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# render-vs-sox.py's helpers: running and timing a process, the median, sox's difference.
_spec = importlib.util.spec_from_file_location("render_vs_sox", os.path.join(ROOT, "Benchmarks", "render-vs-sox.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)
run, median, difference_dbfs = bench.run, bench.median, bench.difference_dbfs
RATE = 48_000
SECONDS = 60
EQ = "http://gareus.org/oss/lv2/fil4#mono"
IDENTITY = "http://gareus.org/oss/lv2/nodelay"
EQ_SETTINGS = [("sec1", "1"), ("freq1", "250"), ("gain1", "-4"), ("sec2", "1"), ("freq2", "3000"), ("gain2", "3")]
IDENTITY_SETTINGS = [("delay", "0")]


def cpu_seconds(args, env):
    """Runs a command (its output discarded); returns its CPU time, user + system."""
    _, usage = bench.timed_with_usage(args, env=env, quiet=True)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work")
    parser.add_argument("--tape")
    options = parser.parse_args()
    if options.tape:
        tape = options.tape
    else:
        print("building tape (release)", file=sys.stderr)
        run(["swift", "build", "-c", "release", "--product", "tape"], cwd=ROOT, stdout=subprocess.DEVNULL)
        tape = os.path.join(run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip(), "tape")
    work = options.work or tempfile.mkdtemp(prefix="tape-effect-host-")
    os.makedirs(work, exist_ok=True)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    source = os.path.join(work, "pink-mono.wav")
    if not os.path.exists(source):
        run(["sox", "-R", "-n", "-r", str(RATE), "-c", "1", "-b", "24", source,
             "synth", str(SECONDS), "pinknoise", "gain", "-14"])
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home)
    projects = {}
    for name, uri, settings in [("dry", None, []), ("EQ", EQ, EQ_SETTINGS), ("identity", IDENTITY, IDENTITY_SETTINGS)]:
        project = os.path.join(work, f"{name}.tape")
        for leftover in os.listdir(work):
            if leftover.startswith(f"{name}.tape"):
                path = os.path.join(work, leftover)
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        run([tape, "new", project, "--channels", "1"], stdout=subprocess.DEVNULL, env=env)
        run([tape, "import", project, source], stdout=subprocess.DEVNULL, env=env)
        run([tape, "track", "add", project, "Noise"], stdout=subprocess.DEVNULL, env=env)
        run([tape, "clip", "add", project, "t1", "s1", "--at", "0"], stdout=subprocess.DEVNULL, env=env)
        if uri:
            run([tape, "fx", "add", project, "t1", uri]
                + [word for symbol, value in settings for word in ("--set", f"{symbol}={value}")],
                stdout=subprocess.DEVNULL, env=env)
        projects[name] = project

    def lv2file(uri, settings, block, output):
        values = [word for symbol, value in settings for word in ("-p", f"{symbol}:{value}")]
        return ["lv2file", "-i", source, "-o", output, "--ignore-clipping"] + \
            (["-b", str(block)] if block else []) + values + [uri]

    out = os.path.join(work, "out")
    os.makedirs(out, exist_ok=True)
    setups = {
        "tape dry": lambda o: [tape, "render", projects["dry"], "-o", o, "--bits", "32f", "--tail", "0"],
        "tape EQ": lambda o: [tape, "render", projects["EQ"], "-o", o, "--bits", "32f", "--tail", "0"],
        "tape identity": lambda o: [tape, "render", projects["identity"], "-o", o, "--bits", "32f", "--tail", "0"],
        "lv2file EQ -b 64": lambda o: lv2file(EQ, EQ_SETTINGS, 64, o),
        "lv2file identity -b 64": lambda o: lv2file(IDENTITY, IDENTITY_SETTINGS, 64, o),
        "lv2file EQ": lambda o: lv2file(EQ, EQ_SETTINGS, None, o),
        "lv2file identity": lambda o: lv2file(IDENTITY, IDENTITY_SETTINGS, None, o),
    }
    # Once to warm (tape's cache, the file in the page cache) and to check the samples agree.
    outputs = {}
    for name, command in setups.items():
        outputs[name] = os.path.join(out, name.replace(" ", "-") + ".wav")
        if os.path.exists(outputs[name]):
            os.remove(outputs[name])
        run(command(outputs[name]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    agreement = difference_dbfs(outputs["tape EQ"], outputs["lv2file EQ -b 64"])
    if agreement > -100:
        sys.exit(f"tape's EQ render and lv2file's differ by {agreement} dBFS: not the same DSP")
    cpu = {name: [] for name in setups}
    for _ in range(options.runs):
        for name, command in setups.items():
            os.remove(outputs[name])
            cpu[name].append(cpu_seconds(command(outputs[name]), env=env))
    m = {name: median(values) for name, values in cpu.items()}
    for name in setups:
        print(f"{name:<24} CPU median {m[name]:.3f} s (runs {' '.join(f'{v:.3f}' for v in cpu[name])})")
    tape_eq = m["tape EQ"] - m["tape dry"]
    tape_identity = m["tape identity"] - m["tape dry"]
    dsp64 = m["lv2file EQ -b 64"] - m["lv2file identity -b 64"]
    dsp = m["lv2file EQ"] - m["lv2file identity"]
    print()
    print(f"{SECONDS} s of mono 48 kHz, median of {options.runs} (tape's render and lv2file's agree to {agreement:.1f} dBFS)")
    print(f"  tape's cost of the EQ (EQ render less dry):       {tape_eq:.3f} s")
    print(f"  the EQ's own cost, 64-frame blocks (lv2file):     {dsp64:.3f} s; in 512-frame blocks {dsp:.3f} s")
    print(f"  tape's host overhead:                             {tape_eq - dsp64:.3f} s "
          f"({(tape_eq - dsp64) / tape_eq * 100 if tape_eq > 0 else 0:.0f} % of its cost); tape / lv2file -b 64: "
          f"{tape_eq / dsp64 if dsp64 > 0 else float('nan'):.2f}x")
    print(f"  an identity plugin: in tape {tape_identity:.3f} s; lv2file -b 64 less its 512-frame run "
          f"{m['lv2file identity -b 64'] - m['lv2file identity']:.3f} s (its own per-block cost)")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
