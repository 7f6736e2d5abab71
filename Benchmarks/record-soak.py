#!/usr/bin/env python3
"""An hour's recording at 48 kHz stereo on JACK's paced dummy driver (issue 48, "Shown by"):
0 overruns, the take's length exact, every frame of a known signal captured once and in order,
no allocation on the capture thread, and what the capture path costs in CPU.

A jackd dummy server (timer-paced, realtime, --jack-period frames) carries a known signal:
`aplay` (SCHED_FIFO) plays a 16-bit ramp into it (left: frame n as (n mod 65536) - 32768,
right: its bitwise complement), and its output ports are joined to the input ports of
`tape record FILE Voice --at 0 --duration MINUTESm --device jackcap --json` with jack_connect.
The ramp makes any dropped, repeated or reordered frame visible: from the first frame the ramp
arrived to the last, consecutive left samples must step by exactly 1 (mod 65536) and every
right sample must be the left's complement.

Judged (PASS/FAIL):
- the command's own overrun count (device and ring) is 0;
- the clip is exactly MINUTES × 60 × 48,000 frames long, and so is the take file's data;
- the ramp is unbroken from its first frame to the end of the take (or to the end of aplay's
  file), and aplay reported no underrun of its own (else the ramp's breaks are aplay's);
- the capture thread made no allocation (the LD_PRELOAD counter of the player's tests);
- `tape verify` passes.
Reported: the process's CPU time over the hour (user + system) as a percentage of one core,
and each thread's (the capture thread is the SCHED_FIFO one), sampled just before the end;
jackd's xruns.

    Benchmarks/record-soak.py [--tape .build/release/tape] [--minutes 60]
        [--jack-period 1024] [--work DIR]

Needs jackd, jack_connect/jack_lsp (jackd2, jack-tools), aplay (alsa-utils), libasound2-plugins
(the jack PCM), numpy, cc; root or rtprio limits for SCHED_FIFO. Not run by CI.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATE = 48_000
failures = []


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def player_soak():
    """The jackd wrapper of player-soak.py (one definition of it)."""
    spec = importlib.util.spec_from_file_location(
        "player_soak", os.path.join(ROOT, "Benchmarks", "player-soak.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_ramp(path, frames):
    """The 16-bit ramp, raw interleaved stereo, written a minute at a time."""
    with open(path, "wb") as out:
        step = RATE * 60
        for start in range(0, frames, step):
            n = np.arange(start, min(frames, start + step), dtype=np.int64)
            left = ((n % 65536) - 32768).astype("<i2")
            block = np.empty((len(n), 2), dtype="<i2")
            block[:, 0] = left
            block[:, 1] = ~left
            out.write(block.tobytes())


def thread_times():
    """Each thread of `pid`: (utime + stime in seconds, its scheduling policy)."""
    ticks = os.sysconf("SC_CLK_TCK")

    def read(pid):
        result = {}
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                fields = open(f"/proc/{pid}/task/{task}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # After the name: state is field 3; utime 14, stime 15, policy 41 (1-based).
            utime, stime, policy = int(fields[11]), int(fields[12]), int(fields[38])
            result[task] = ((utime + stime) / ticks, policy)
        return result

    return read


def join_ports(jack, stop, joined, seen):
    """Joins aplay's two output ports to tape's two input ports once all four exist."""
    while not stop.is_set():
        time.sleep(0.05)
        listed = subprocess.run(["jack_lsp"], env=jack.env, capture_output=True, text=True)
        ports = listed.stdout.split("\n")
        seen[:] = ports
        # ALSA's jack PCM names a client after its program (`tape.C.PID.0`, or the name of a
        # copy of the binary), C for capture and P for playback.
        inputs = sorted(p for p in ports if ".C." in p.split(":")[0])
        outputs = sorted(p for p in ports if p.startswith("aplay.P."))
        if len(inputs) == 2 and len(outputs) == 2:
            for source, target in zip(outputs, inputs):
                subprocess.run(["jack_connect", source, target], env=jack.env)
            joined.append(time.time())
            return


def judge_ramp(take, frames):
    """From the ramp's first frame in the take: breaks in the left's step and right ≠ ~left."""
    data = np.memmap(take, dtype="<f4", mode="r", offset=44)
    data = data[:len(data) // 2 * 2].reshape(-1, 2)
    check(len(data) == frames, f"the take file holds {len(data):,} frames of data "
                               f"(expected {frames:,})")
    # From the first frame both channels carry (jack_connect joins one port, then the other).
    nonzero = np.flatnonzero(np.all(data[: RATE * 30] != 0, axis=1))
    if len(nonzero) == 0:
        check(False, "the ramp arrived within the take's first 30 s")
        return
    first = int(nonzero[0])
    breaks = mismatches = 0
    previous = None
    step = RATE * 60
    for start in range(first, len(data), step):
        block = np.rint(np.asarray(data[start:start + step], dtype=np.float64) * 32768)
        left = block[:, 0].astype(np.int64)
        right = block[:, 1].astype(np.int64)
        if previous is not None:
            left_with = np.concatenate([[previous], left])
        else:
            left_with = left
        steps = np.diff(left_with) % 65536
        for at in np.flatnonzero(steps != 1)[:5]:
            print(f"  break at take frame {start + at - (previous is not None):,} "
                  f"({(start + at) / RATE:.3f} s): the ramp jumps by {steps[at]} frames", flush=True)
        breaks += int(np.count_nonzero(steps != 1))
        mismatches += int(np.count_nonzero(right != -left - 1))
        previous = left[-1]
    print(f"ramp: first frame {first} ({first / RATE:.3f} s after the take began), "
          f"{len(data) - first:,} frames judged", flush=True)
    check(breaks == 0, f"the ramp's left channel steps by 1 at every frame ({breaks} breaks)")
    check(mismatches == 0, f"every right sample is the left's complement ({mismatches} not)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tape", default=os.path.join(ROOT, ".build", "release", "tape"))
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--jack-period", type=int, default=1024)
    parser.add_argument("--work")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="record-soak-")
    os.makedirs(work, exist_ok=True)
    tape = os.path.abspath(args.tape)
    frames = int(round(args.minutes * 60 * RATE))

    soak = player_soak()
    soak.PERIOD = args.jack_period
    jack = soak.Jack(work, "record", f"""
pcm.jackcap {{
    type jack
    capture_ports {{ 0 system:capture_1 1 system:capture_2 }}
}}
pcm.jackraw {{
    type jack
    playback_ports {{ 0 system:playback_1 1 system:playback_2 }}
}}
pcm.jackout {{ type plug slave.pcm "jackraw" }}
""")
    counter = os.path.join(work, "audio-thread-mallocs.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", counter,
                    os.path.join(ROOT, "Tests", "Support", "audio-thread-mallocs.c")], check=True)
    allocations = os.path.join(work, "allocations")
    ramp = os.path.join(work, "ramp.s16")
    write_ramp(ramp, frames + RATE * 60)
    song = os.path.join(work, "song.tape")
    if os.path.exists(song):
        os.remove(song)
    for command in (["new", song, "--rate", "48000", "--channels", "2"],
                    ["track", "add", song, "Voice"]):
        subprocess.run([tape, *command], check=True, capture_output=True)

    stop, joined, seen = threading.Event(), [], []
    joiner = threading.Thread(target=join_ports, args=(jack, stop, joined, seen))
    env = dict(jack.env, LD_PRELOAD=counter, TAPE_ALLOC_REPORT=allocations)
    print(f"== recording {args.minutes:g} min at 48 kHz stereo, JACK period {args.jack_period}, "
          f"work {work}", flush=True)
    began = time.time()
    record = subprocess.Popen(
        [tape, "record", song, "Voice", "--at", "0", "--duration", f"{args.minutes * 60:g}s",
         "--device", "jackcap", "--json"], env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=open(os.path.join(work, "record.log"), "w"), text=True)
    time.sleep(1)
    aplay_log = os.path.join(work, "aplay.log")
    aplay = subprocess.Popen(
        ["chrt", "-f", "65", "aplay", "-q", "-D", "jackout", "-t", "raw", "-f", "S16_LE", "-r",
         str(RATE), "-c", "2", "--period-size", str(args.jack_period), "--buffer-size",
         str(args.jack_period * 4), ramp], env=jack.env, stderr=open(aplay_log, "w"))
    joiner.start()
    read = thread_times()
    last = {}
    while record.poll() is None:
        try:
            last = read(record.pid)
        except OSError:
            pass
        elapsed = time.time() - began
        if int(elapsed) % 300 < 2:
            print(f"  {elapsed / 60:5.1f} min", flush=True)
        time.sleep(1 if args.minutes * 60 - elapsed < 20 else 2)
    stop.set()
    joiner.join()
    output = record.stdout.read()
    aplay.terminate()
    aplay.wait()
    jackd_xruns = jack.xruns()
    jack.stop()
    said = open(os.path.join(work, "record.log")).read()
    print(said.strip())
    check(record.returncode == 0, f"tape record exited 0 (status {record.returncode})")
    check(bool(joined), f"the ramp's ports were joined to the recorder's (ports: {seen})")
    summary = [line for line in said.split("\n") if line.startswith("tape record: recorded")]
    overruns = int(summary[0].rsplit(",", 1)[1].split()[0]) if summary else -1
    check(overruns == 0, f"tape record counted {overruns} overruns")
    listing = json.loads(subprocess.run([tape, "ls", song, "--json"], check=True,
                                        capture_output=True, text=True).stdout)
    clips = [c for t in listing["tracks"] for c in t.get("clips", [])]
    check(len(clips) == 1 and clips[0]["length"] == frames,
          f"one clip of {frames:,} frames ({[c['length'] for c in clips]})")
    path = listing["sources"][0]["path"]
    take = path if os.path.isabs(path) else os.path.join(os.path.dirname(song), path)
    aplay_said = open(aplay_log).read()
    check("underrun" not in aplay_said, f"aplay reported no underrun ({aplay_said.strip()!r})")
    judge_ramp(take, frames)
    counts = open(allocations).read().split() if os.path.exists(allocations) else []
    check(counts == ["0", "0"], f"the capture thread allocated and freed nothing ({counts})")
    verify = subprocess.run([tape, "verify", song], capture_output=True, text=True)
    check(verify.returncode == 0, f"tape verify passes ({verify.stderr.strip() or 'exit 0'})")
    seconds = args.minutes * 60
    total = sum(t for t, _ in last.values())
    print(f"CPU over {seconds:g} s: {total:.2f} s in all ({100 * total / seconds:.3f} % of a "
          f"core); per thread (s, policy 1 = SCHED_FIFO):")
    for task, (cpu, policy) in sorted(last.items(), key=lambda item: -item[1][0])[:6]:
        print(f"  thread {task}: {cpu:.2f} s ({100 * cpu / seconds:.3f} %), policy {policy}")
    print(f"jackd logged {jackd_xruns} xrun lines; stdout: {output.strip()}")
    print("FAILED: " + "; ".join(failures) if failures else "ALL PASS", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
