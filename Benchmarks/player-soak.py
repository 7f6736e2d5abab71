#!/usr/bin/env python3
"""The player's two heavy demonstrations (issue 21, "Shown by tests"), on JACK's paced dummy
driver (docs/alsa-testing.md, recipe 2), driven from the keys in tmux. Not part of the test run.

seeks: a 10-minute project of 32 FLAC sources (4 tracks of 8 clips of hashed noise on the
    16-bit grid), its decoded cache removed and the page cache dropped (root; dropped again
    once it plays, so seeks read the decoded cache from the disk), played by
    `tape play --json` in tmux with 20 seeks from the keys: single ←/→ (5 s) and bursts of
    2-24 of them (the player adds up quick seeks; it has no key for an arbitrary place, so a
    burst is how a key reaches a random place). The capture is compared with
    `tape render --bits 32f` period by period: each stretch between seeks must equal the
    render exactly at some position (found by content: the noise never repeats), which gives
    every landing; fails on any run of 64+ silent frames where the render has sound (the
    render has none), on a seek that did not land, on player xruns, missing frames or major
    page faults on the audio thread.
scrub: 200 sources (10 s stereo sines made by sox), 1,000 versions that each replace one of
    4 clips with the next source (each source used by 5 versions), `tape scrub` in tmux
    listening (space) while ←/→ step through the versions back and forth, 5 steps a second,
    with a pause and a resume every minute, for --minutes of wall time (30). VmRSS sampled
    every 2 s; fails when resident memory grows past the first minute by more than --rss-slack
    MB (every source decoded and kept would be about 770 MB) or the process dies.

    Benchmarks/player-soak.py [seeks|scrub|all] [--tape .build-release/release/tape]
        [--minutes 30] [--work DIR] [--seed 21]
    Benchmarks/player-soak.py analyse --work DIR     # judge DIR/seeks's play again

Exit status 1 when a criterion fails (each is printed as PASS or FAIL).
"""

import argparse
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import wave

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATE = 48_000
PERIOD = 256
failures = []


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def run(args, **kwargs):
    return subprocess.run(args, check=True, **kwargs)


def tape_out(tape, *args, stdin=None):
    return subprocess.run([tape, *args], check=True, input=stdin, capture_output=True,
                          text=True).stdout


class Jack:
    """A jackd dummy server (timer-paced, realtime) of its own name, and an ~/.asoundrc."""

    def __init__(self, work, name, asoundrc):
        self.name = f"{name}-{os.getpid()}"
        self.home = os.path.join(work, f"home-{name}")
        os.makedirs(self.home, exist_ok=True)
        with open(os.path.join(self.home, ".asoundrc"), "w") as f:
            f.write(asoundrc)
        self.env = dict(os.environ, HOME=self.home, JACK_DEFAULT_SERVER=self.name,
                        JACK_NO_AUDIO_RESERVATION="1", NO_COLOR="1")
        self.log = os.path.join(work, f"jackd-{name}.log")
        self.server = subprocess.Popen(
            ["jackd", "-R", "-P", "70", "-n", self.name, "-d", "dummy", "-r", str(RATE), "-p",
             str(PERIOD)], env=self.env, stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        for _ in range(100):
            time.sleep(0.1)
            probe = subprocess.run(["jack_lsp"], env=self.env, capture_output=True, text=True)
            if probe.returncode == 0 and "system:capture_1" in probe.stdout:
                return
        raise SystemExit(f"jackd did not start:\n{open(self.log).read()}")

    def xruns(self):
        return sum("xrun" in line.lower() for line in open(self.log, errors="replace"))

    def stop(self):
        if self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(3)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        for entry in os.listdir("/dev/shm"):
            if self.name in entry:
                try:
                    os.remove(os.path.join("/dev/shm", entry))
                except OSError:
                    pass


class Tmux:
    """A tmux server of our own (its own socket), one window."""

    def __init__(self, name, command, width=120, height=30):
        self.socket = f"{name}-{os.getpid()}"
        run(["tmux", "-L", self.socket, "new-session", "-d", "-s", "soak", "-x", str(width), "-y",
             str(height), command])

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True).stdout

    def send(self, *keys):
        self.tmux("send-keys", "-t", "soak", *keys)

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "soak")

    def pane_pid(self):
        return int(self.tmux("display-message", "-p", "-t", "soak", "#{pane_pid}").strip())

    def wait_for(self, predicate, seconds=60):
        deadline = time.time() + seconds
        while time.time() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(0.1)
        raise SystemExit(f"tmux: timed out; the screen:\n{self.screen()}")

    def kill(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def read_wav_float(path):
    """Interleaved stereo float64 from a WAV (integer PCM or float, plain or extensible);
    the data runs to the end of the file when its size field was never written."""
    data = open(path, "rb").read()
    position = 12
    tag = bits = channels = None
    while position + 8 <= len(data):
        chunk, size = data[position:position + 4], struct.unpack("<I", data[position + 4:position + 8])[0]
        body = position + 8
        if chunk == b"fmt ":
            tag, channels = struct.unpack("<HH", data[body:body + 4])
            bits = struct.unpack("<H", data[body + 14:body + 16])[0]
            if tag == 0xFFFE:
                tag = struct.unpack("<H", data[body + 24:body + 26])[0]
        elif chunk == b"data":
            end = len(data) if size in (0, 0xFFFFFFFF) or body + size > len(data) else body + size
            raw = data[body:end]
            break
        position = body + size + (size & 1)
    if tag == 3 and bits == 32:
        samples = np.frombuffer(raw[:len(raw) // 4 * 4], dtype="<f4").astype(np.float64)
    elif tag == 1 and bits == 32:
        samples = np.frombuffer(raw[:len(raw) // 4 * 4], dtype="<i4").astype(np.float64) / 2**31
    elif tag == 1 and bits == 16:
        samples = np.frombuffer(raw[:len(raw) // 2 * 2], dtype="<i2").astype(np.float64) / 2**15
    else:
        raise SystemExit(f"{path}: WAV format {tag}/{bits} not read here")
    return samples[:len(samples) // channels * channels].reshape(-1, channels)


def write_wav16(path, frames):
    with wave.open(path, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(frames.astype("<i2").tobytes())


# MARK: seeks


def seeks(args, tape, work):
    print("== seeks: 10-minute project, 32 sources, cold cache, 20 seeks from the keys", flush=True)
    rng = np.random.default_rng(args.seed)
    space = os.path.join(work, "seeks")
    os.makedirs(space, exist_ok=True)
    source_seconds, tracks, per_track = 75, 4, 8
    sources = []
    for index in range(tracks * per_track):
        # Hashed noise on the 16-bit grid, never 0, |k| <= 3000: four tracks sum exactly.
        values = rng.integers(1, 3001, size=(source_seconds * RATE, 2)) * rng.choice([-1, 1], size=(source_seconds * RATE, 2))
        wav = os.path.join(space, f"n{index + 1:02}.wav")
        write_wav16(wav, values)
        flac = wav[:-4] + ".flac"
        run(["sox", wav, flac])
        os.remove(wav)
        sources.append(flac)
    project = os.path.join(space, "seeks.tape")
    tape_out(tape, "new", project)
    tape_out(tape, "import", project, *sources)
    lines = [f"track add T{t + 1}" for t in range(tracks)]
    for t in range(tracks):
        for i in range(per_track):
            lines.append(f"clip add t{t + 1} s{t * per_track + i + 1} --at {i * source_seconds}s "
                         f"--length {source_seconds}s")
    tape_out(tape, "batch", project, "-", "-m", "32 sources", stdin="\n".join(lines) + "\n")
    render_path = os.path.join(space, "render.wav")
    tape_out(tape, "render", project, "-o", render_path, "--bits", "32f")
    end = per_track * source_seconds * RATE
    # Cold: no decoded cache, no page cache.
    shutil.rmtree(project + "-cache", ignore_errors=True)
    run(["sync"])
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")
    print("cold: removed the decoded cache, dropped the page cache", flush=True)

    # The schedule: 20 seeks, alternating single keys and bursts, 6-12 s apart, kept inside
    # [20 s, end - 40 s] by the position estimated from the wall clock.
    plan_rng = random.Random(args.seed)
    estimate, schedule = 0.0, []
    for number in range(20):
        wait = plan_rng.uniform(6, 12)
        estimate += wait
        for _ in range(100):
            count = plan_rng.choice([-1, 1]) if number % 2 == 0 else plan_rng.choice([-1, 1]) * plan_rng.randint(2, 24)
            if 20 <= estimate + 5 * count <= end / RATE - 40:
                break
        else:
            count = 1 if estimate < end / RATE / 2 else -1
        estimate += 5 * count
        schedule.append((wait, count))
    tail = 6.0

    jack = Jack(work, "seeks", "pcm.jackrec {\n  type jack\n  playback_ports { 0 jackrec:input1 1 jackrec:input2 }\n}\n")
    terminal = None
    try:
        capture = os.path.join(space, "capture.wav")
        recorder = subprocess.Popen(
            ["jack_rec", "-f", capture, "-d", "3600", "-b", "32", "system:capture_1",
             "system:capture_2"], env=jack.env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        for _ in range(100):
            time.sleep(0.05)
            if "jackrec:input2" in subprocess.run(["jack_lsp"], env=jack.env, capture_output=True, text=True).stdout:
                break
        report_path, status_path = os.path.join(space, "play.json"), os.path.join(space, "play.status")
        env = " ".join(f"{key}={value}" for key, value in
                       [("HOME", jack.home), ("JACK_DEFAULT_SERVER", jack.name),
                        ("JACK_NO_AUDIO_RESERVATION", "1"), ("NO_COLOR", "1")])
        started = time.time()
        terminal = Tmux("tape-seeks", f"env {env} {tape} play {project} --device jackrec --period 256 --json > {report_path}; echo $? > {status_path}; sleep 600")
        terminal.wait_for(lambda s: "playing " in s, seconds=300)
        print(f"playing after {time.time() - started:.1f} s (decoding 32 sources cold)", flush=True)
        # Cold again: what decoding just wrote leaves the page cache, so a seek reads the
        # decoded cache from the disk (what the player holds is locked in memory).
        run(["sync"])
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        print(f"page cache dropped again after {time.time() - started:.1f} s", flush=True)
        sent = []
        for wait, count in schedule:
            time.sleep(wait)
            key = "Right" if count > 0 else "Left"
            terminal.send(*([key] * abs(count)))
            sent.append(count)
        time.sleep(tail)
        terminal.send("q")
        deadline = time.time() + 30
        while not os.path.exists(status_path) and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(2)
        recorder.send_signal(signal.SIGINT)
        try:
            recorder.wait(10)
        except subprocess.TimeoutExpired:
            recorder.kill()
        status = open(status_path).read().strip() if os.path.exists(status_path) else "none"
        screen = terminal.screen()
    finally:
        if terminal:
            terminal.kill()
        jack.stop()
    with open(os.path.join(space, "keys.json"), "w") as f:
        json.dump({"sent": sent, "status": status, "jackdXruns": jack.xruns(), "screen": screen}, f)
    analyse_seeks(space)


def analyse_seeks(space):
    """Judges a finished play in `space` (render.wav, capture.wav, play.json, keys.json)."""
    keys_file = json.load(open(os.path.join(space, "keys.json")))
    sent, status, jackd_xruns = keys_file["sent"], keys_file["status"], keys_file["jackdXruns"]
    check(status == "0", f"tape play exited with status {status}")
    try:
        report = json.loads(open(os.path.join(space, "play.json")).read())
    except (OSError, ValueError):
        print(keys_file["screen"])
        raise SystemExit("no JSON report from tape play")
    render = read_wav_float(os.path.join(space, "render.wav"))
    end = len(render)
    print(f"render: {end} frames ({end / RATE:.1f} s)", flush=True)
    grid = render[:, 0] * 32768
    check(np.array_equal(grid, np.round(grid)), "the render is on the 16-bit grid (exact keys)")
    silent_render = longest_zero_run(render)
    check(silent_render < 64, f"the render has sound throughout (longest silent run {silent_render} frames)")

    # Index: 4 consecutive left samples → render position.
    k = (np.round(render[:, 0] * 32768).astype(np.int64) + 16384) & 0x7FFF
    keys = (k[:-3] << 45) | (k[1:-2] << 30) | (k[2:-1] << 15) | k[3:]
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]

    def lookup(key):
        lo = np.searchsorted(sorted_keys, key, "left")
        hi = np.searchsorted(sorted_keys, key, "right")
        return order[lo:hi]

    capture = os.path.join(space, "capture.wav")
    captured = read_wav_float(capture)
    nonzero = np.flatnonzero(np.any(captured != 0, axis=1))
    if len(nonzero) == 0:
        raise SystemExit("the capture is silent")
    onset, last = nonzero[0], nonzero[-1] + 1
    played = captured[onset:last]
    print(f"capture: onset at {onset}, {len(played)} frames of play ({len(played) / RATE:.1f} s); "
          f"the player reports {report['frames']} frames", flush=True)

    # Silence where the render has sound: the render has sound everywhere, so any run of 64+
    # silent frames inside the play is one; periods (of the player's clock) all silent too.
    runs = zero_runs(played, 64)
    periods = len(played) // PERIOD
    silent_periods = [p for p in range(periods)
                      if not np.any(played[p * PERIOD:(p + 1) * PERIOD])]
    for start, length in runs[:10]:
        print(f"  silent run: {length} frames at play frame {start} ({start / RATE:.3f} s)")
    check(not silent_periods and not runs,
          f"no silence where the render has sound: {len(silent_periods)} silent periods, "
          f"{len(runs)} runs of 64+ silent frames, of {periods} periods")

    # Where each seek landed: follow the capture along the render; where it stops matching,
    # find the next exact stretch by content.
    # The last 4 periods are left out: `q` ends the play at the next period, mid-stretch.
    landings, offset, frame, unmatched = [], 0, 0, 0
    while frame + PERIOD <= len(played) - 4 * PERIOD:
        block = played[frame:frame + PERIOD]
        start = frame + offset
        if 0 <= start and start + PERIOD <= end and np.array_equal(block, render[start:start + PERIOD]):
            frame += PERIOD
            continue
        # The first frame that differs, then the next stretch that matches somewhere.
        here = render[max(0, start):max(0, start) + PERIOD]
        differs = np.flatnonzero(np.any(block[:len(here)] != here, axis=1)) if len(here) == PERIOD else [0]
        first = frame + (int(differs[0]) if len(differs) else 0)
        found = None
        for g in range(first, min(len(played) - 600, first + 2 * RATE), 4):
            candidate = played[g:g + 4, 0] * 32768
            if not np.array_equal(candidate, np.round(candidate)) or not np.all(candidate):
                continue
            key = 0
            for value in candidate.astype(np.int64):
                key = (key << 15) | ((int(value) + 16384) & 0x7FFF)
            for position in lookup(key):
                if position + 512 <= end and np.array_equal(played[g:g + 512], render[position:position + 512]):
                    found = (g, int(position))
                    break
            if found:
                break
        if not found:
            unmatched += 1
            print(f"  no match after play frame {first}", flush=True)
            frame = first + 2 * RATE
            continue
        g, position = found
        if position - g != offset:
            landings.append({"frame": first, "from": first + offset, "to": position - (g - first),
                             "jump": position - g - offset, "exactAgain": g})
        offset = position - g
        frame = g
    check(unmatched == 0, "every stretch of the capture is the render somewhere (nothing else played)")
    # A jump under a second is no seek (those are 5 s a key, less at most a few hundred ms of
    # play between the key and the landing): it is the capture losing or repeating periods,
    # which jackd's own xruns do (docs/alsa-testing.md: environment noise, when the player counted
    # no xrun of its own).
    glitches = [l for l in landings if abs(l["jump"]) < RATE]
    landings = [l for l in landings if abs(l["jump"]) >= RATE]
    print(f"capture discontinuities (no seek): {len(glitches)}, "
          + ", ".join(f"{l['jump']:+d} frames at {l['from'] / RATE:.2f} s" for l in glitches)
          + f"; the capture is {report['frames'] - len(played)} frames shorter than the play")
    check(not glitches or jackd_xruns > 0,
          "every discontinuity of the capture that is not a seek comes with jackd's own xruns")
    # Each burst of keys is one landing (or a few that add up to it): the jump is the keys'
    # 5 s each, less how far the play went between the key and the landing (under 5 s), so a
    # landing's keys are ceil(jump / 5 s).
    step = 5 * RATE
    matched, index, latencies, wrong = 0, 0, [], []
    for number, count in enumerate(sent):
        total, keys = 0, 0
        # One landing a burst when the counts agree; else a burst may have landed in parts.
        while index < len(landings) and (keys == 0 or (len(landings) != len(sent) and 0 < keys * count and abs(keys) < abs(count))):
            total += landings[index]["jump"]
            keys = -((-total) // step)
            index += 1
        if keys == count:
            matched += 1
            latencies.append((count * step - total) / RATE * 1000)
        else:
            wrong.append(f"seek {number + 1}: {count:+d} keys, landed {keys:+d} × 5 s")
    for line in wrong:
        print("  " + line)
    print(f"keys sent: {len(sent)} seeks ({sum(abs(c) for c in sent)} arrow presses: "
          f"{', '.join(f'{c:+d}' for c in sent)})")
    print(f"landings found in the capture: {len(landings)}; "
          + "; ".join(f"{l['from'] / RATE:.2f}→{l['to'] / RATE:.2f} s" for l in landings))
    if latencies:
        print(f"key to landing (position advanced meanwhile): median {np.median(latencies):.0f} ms, "
              f"max {max(latencies):.0f} ms")
    check(matched == len(sent) == 20 and index == len(landings),
          f"all 20 seeks landed where their keys sent them ({matched} matched, {len(landings)} landings)")
    major = report["audioThreadPageFaults"]["major"]
    print(f"tape play: xruns {report['xruns']}, missingFrames {report['missingFrames']}, "
          f"audio thread page faults major {major} minor {report['audioThreadPageFaults']['minor']}, "
          f"realtime {report['realtimePriority']}, cpuPeak {report['cpuPeak']}; jackd logged "
          f"{jackd_xruns} xruns of its own", flush=True)
    check(report["xruns"] == 0, f"0 xruns (player: {report['xruns']})")
    check(report["missingFrames"] == 0, f"0 missing frames (player: {report['missingFrames']})")
    check(major == 0, f"0 major page faults on the audio thread ({major})")
    check(report["realtimePriority"], "the device thread ran under SCHED_FIFO")


def zero_runs(samples, minimum):
    silent = np.concatenate([[False], ~np.any(samples != 0, axis=1), [False]])
    edges = np.flatnonzero(np.diff(silent.astype(np.int8)))
    starts, stops = edges[0::2], edges[1::2]
    return [(int(a), int(b - a)) for a, b in zip(starts, stops) if b - a >= minimum]


def longest_zero_run(samples):
    runs = zero_runs(samples, 1)
    return max((length for _, length in runs), default=0)


# MARK: scrub


def rss_kb(pid, field="VmRSS"):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def scrub(args, tape, work):
    print(f"== scrub: 1,000 versions over 200 sources, {args.minutes} minutes", flush=True)
    space = os.path.join(work, "scrub")
    os.makedirs(space, exist_ok=True)
    sources = []
    for index in range(200):
        path = os.path.join(space, f"s{index + 1:03}.wav")
        run(["sox", "-n", "-r", str(RATE), "-c", "2", "-b", "16", path, "synth", "10",
             "sine", str(100 + 7 * index), "sine", str(150 + 11 * index), "vol", "0.2"])
        sources.append(path)
    project = os.path.join(space, "scrub.tape")
    tape_out(tape, "new", project)
    tape_out(tape, "import", project, *sources)
    ids = tape_out(tape, "batch", project, "-", "-m", "4 clips", stdin="".join(
        f"track add T{t + 1}\nclip add t{t + 1} s{t + 1} --at 0 --length 10s\n" for t in range(4))).split()
    clips = [ids[1], ids[3], ids[5], ids[7]]
    built = time.time()
    for version in range(1000):
        track = version % 4
        source = (version + 4) % 200 + 1
        out = tape_out(tape, "batch", project, "-", "-m", f"s{source} on t{track + 1}", stdin=(
            f"clip rm {clips[track]}\nclip add t{track + 1} s{source} --at 0 --length 10s\n")).split()
        clips[track] = out[-1]
    head = json.loads(tape_out(tape, "history", project, "--json"))
    head = head["head"] if isinstance(head, dict) and "head" in head else None
    print(f"built 1,000 versions in {time.time() - built:.0f} s; head v{head}", flush=True)
    low = head - 999

    jack = Jack(work, "scrub", "pcm.scrubout {\n  type jack\n  playback_ports { 0 system:playback_1 1 system:playback_2 }\n}\n")
    terminal = None
    samples = []
    try:
        env = " ".join(f"{key}={value}" for key, value in
                       [("HOME", jack.home), ("JACK_DEFAULT_SERVER", jack.name),
                        ("JACK_NO_AUDIO_RESERVATION", "1"), ("NO_COLOR", "1")])
        terminal = Tmux("tape-scrub", f"exec env {env} {tape} scrub {project} --device scrubout")
        terminal.wait_for(lambda s: s.startswith(f"v{head} "))
        pid = terminal.pane_pid()
        before = rss_kb(pid)
        terminal.send("Space")
        time.sleep(2)
        begin = time.time()
        version, step, steps, pauses = head, -1, 0, 0
        next_sample, next_pause, next_look = begin, begin + 60, begin + 30
        seen = set()
        alive = True
        while time.time() - begin < args.minutes * 60:
            now = time.time()
            if now >= next_sample:
                value = rss_kb(pid)
                if value is None:
                    alive = False
                    break
                samples.append((now - begin, value))
                next_sample += 2
            if now >= next_pause:
                terminal.send("Space")
                time.sleep(0.5)
                terminal.send("Space")
                pauses += 1
                next_pause += 60
            if now >= next_look:
                top = terminal.screen().split(" ", 1)[0]
                seen.add(top)
                next_look += 30
            if version + step < low or version + step > head:
                step = -step
            terminal.send("Left" if step < 0 else "Right")
            version += step
            steps += 1
            time.sleep(0.2)
        screen = terminal.screen()
        end_rss = rss_kb(pid)
        peak = rss_kb(pid, "VmHWM")
        terminal.send("q")
        time.sleep(2)
    finally:
        if terminal:
            terminal.kill()
        jack.stop()
    check(alive, "tape scrub stayed up")
    values = [v for _, v in samples]
    warm = [v for t, v in samples if t <= 60]
    rest = [v for t, v in samples if t > 60]
    half = len(values) // 2
    print(f"steps {steps} (5 a second, back and forth over v{low}…v{head}), {pauses} pause/resume, "
          f"versions on screen at 30 s looks: {len(seen)} distinct")
    print(f"footer: {screen.strip().splitlines()[-1] if screen.strip() else ''}")
    mb = lambda kb: f"{kb / 1024:.1f} MB"
    print(f"VmRSS: before listening {mb(before)}, start {mb(values[0])}, max {mb(max(values))}, "
          f"end {mb(end_rss or values[-1])}; first minute max {mb(max(warm))}; after it max "
          f"{mb(max(rest) if rest else 0)}; VmHWM {mb(peak or 0)}; samples {len(values)}", flush=True)
    with open(os.path.join(work, "scrub-rss.tsv"), "w") as f:
        f.writelines(f"{t:.1f}\t{v}\n" for t, v in samples)
    check(len(seen) > 5, "the screen moved through the versions")
    check(not rest or max(rest) - max(warm) <= args.rss_slack * 1024,
          f"resident memory bounded: after the first minute it grew by "
          f"{(max(rest) - max(warm)) / 1024 if rest else 0:.1f} MB (limit {args.rss_slack} MB)")
    check(max(values[half:]) <= max(values[:half]) + 16 * 1024,
          "no growth between the run's halves (within 16 MB)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", nargs="?", default="all", choices=["seeks", "scrub", "all", "analyse"])
    parser.add_argument("--tape", default=os.path.join(ROOT, ".build-release/release/tape"))
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rss-slack", type=float, default=64, help="MB")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--work")
    args = parser.parse_args()
    tape = os.path.abspath(args.tape)
    work = args.work or tempfile.mkdtemp(prefix="tape-soak-")
    os.makedirs(work, exist_ok=True)
    print(f"work: {work}; tape: {tape}", flush=True)
    if args.which in ("seeks", "all"):
        seeks(args, tape, work)
    if args.which == "analyse":
        analyse_seeks(os.path.join(work, "seeks"))
    if args.which in ("scrub", "all"):
        scrub(args, tape, work)
    if failures:
        print(f"FAILED: {len(failures)} criteria: " + "; ".join(failures))
        sys.exit(1)
    print("all criteria passed")


if __name__ == "__main__":
    main()
