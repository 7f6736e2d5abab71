#!/usr/bin/env python3
"""The interchange tests' window on the reference implementation (PyPI opentimelineio 0.18.1
and otio-cmx3600-adapter): reads what `tape export` wrote and prints it plainly, and writes
timelines with OTIO's own Python API for `tape import-otio` to read.

  otio-check.py read EDIT.otio RATE       one line per clip, transition and track
  otio-check.py edl EDIT.edl FPS          one line per EDL event (clip or black), channel first
  otio-check.py make OUT.otio RATE A.wav B.wav   a timeline with gaps, three tracks (one video),
                                          a transition between two clips and a fade from a gap
  otio-check.py played EDIT.otio RATE     each clip as a reader that expands transitions plays
                                          it: track, start, length, source start (frames)
  otio-check.py rich OUT.otio A.wav       a 48 kHz timeline with what an import must not drop:
                                          names, markers on a track and a clip, time effects,
                                          a global start of 01:00:00:00 at 25 fps
  otio-check.py timecode FRAMES FPS DF    FRAMES as OTIO writes it as timecode
  otio-check.py start EDIT.otio           the timeline's global_start_time as timecode
"""
import sys
import urllib.parse

import opentimelineio as otio


def path_of(url):
    """The file a file:// URL names (percent-decoded), or the URL as it is."""
    parsed = urllib.parse.urlparse(url)
    return urllib.parse.unquote(parsed.path) if parsed.scheme == "file" else url


def frames(time, rate):
    return round(time.rescaled_to(rate).value)


def read(path, rate):
    timeline = otio.adapters.read_from_file(path)
    for track in timeline.tracks:
        print(f"track\t{track.name}\t{track.kind}\t{'enabled' if track.enabled else 'disabled'}")
        for index, item in enumerate(track):
            if isinstance(item, otio.schema.Transition):
                print(f"transition\t{track.name}\t{frames(item.in_offset, rate)}\t"
                      f"{frames(item.out_offset, rate)}\t{item.transition_type}")
            elif isinstance(item, otio.schema.Clip):
                placed = track.range_of_child_at_index(index)
                url = path_of(item.media_reference.target_url)
                print(f"clip\t{track.name}\t{frames(placed.start_time, rate)}\t"
                      f"{frames(placed.duration, rate)}\t{frames(item.source_range.start_time, rate)}\t{url}")


def edl(path, fps):
    with open(path) as handle:
        timeline = otio.adapters.read_from_string(
            handle.read(), adapter_name="cmx_3600", rate=fps)
    for track in timeline.tracks:
        for index, item in enumerate(track):
            if isinstance(item, otio.schema.Transition):
                print(f"dissolve\t{track.name}\t{frames(item.out_offset, fps)}")
            elif isinstance(item, otio.schema.Clip):
                placed = item.transformed_time_range(item.trimmed_range(), timeline.tracks)
                black = isinstance(item.media_reference, otio.schema.GeneratorReference)
                what = "black" if black else item.media_reference.target_url
                print(f"event\t{track.name}\t{frames(placed.start_time, fps)}\t"
                      f"{frames(placed.duration, fps)}\t{frames(item.source_range.start_time, fps)}\t{what}")


def make(path, rate, first, second):
    def time(value):
        return otio.opentime.RationalTime(value, rate)

    def clip(name, url, start, duration):
        reference = otio.schema.ExternalReference(target_url=url)
        return otio.schema.Clip(
            name=name, media_reference=reference,
            source_range=otio.opentime.TimeRange(time(start), time(duration)))

    timeline = otio.schema.Timeline(name="made by otio")
    video = otio.schema.Track(name="V1", kind=otio.schema.TrackKind.Video)
    video.append(otio.schema.Gap(duration=time(rate)))
    dialog = otio.schema.Track(name="Dialog", kind=otio.schema.TrackKind.Audio)
    # A gap, a clip, a dissolve into a second clip (both lengthened into it by its offsets).
    dialog.append(otio.schema.Gap(duration=time(rate // 2)))
    dialog.append(clip("one", "file://" + first, rate // 10, rate))
    dialog.append(otio.schema.Transition(
        transition_type=otio.schema.TransitionTypes.SMPTE_Dissolve,
        in_offset=time(rate // 10), out_offset=time(rate // 20)))
    dialog.append(clip("two", first, rate * 2, rate // 2))
    music = otio.schema.Track(name="Music", kind=otio.schema.TrackKind.Audio)
    # A fade in after a gap, and a muted (disabled) track.
    music.append(otio.schema.Gap(duration=time(rate // 4)))
    music.append(otio.schema.Transition(
        transition_type=otio.schema.TransitionTypes.SMPTE_Dissolve,
        in_offset=time(0), out_offset=time(rate // 8)))
    music.append(clip("piano", "file://" + second, 0, rate))
    music.enabled = False
    timeline.tracks.extend([video, dialog, music])
    otio.adapters.write_to_file(timeline, path)


def played(path, rate):
    """Each clip's played extent after `track_with_expanded_transitions`: a clip lengthened
    into a transition on either side is one row, from the first frame any part of it plays."""
    timeline = otio.adapters.read_from_file(path)
    for track in timeline.tracks:
        expanded = otio.algorithms.track_with_expanded_transitions(track)
        position = 0
        pieces = []  # per clip, in order: [start, end, source start]
        seen = 0  # whole clips met so far: a transition's `before` is the last, `after` the next

        def add(index, clip, start, length):
            source = frames(clip.trimmed_range().start_time, rate)
            while len(pieces) <= index:
                pieces.append(None)
            if pieces[index] is None:
                pieces[index] = [start, start + length, source]
            else:
                piece = pieces[index]
                if start < piece[0]:
                    piece[0], piece[2] = start, source
                piece[1] = max(piece[1], start + length)

        for item in expanded:
            if isinstance(item, tuple):
                before, transition, after = item
                # The items beside it were shortened by its offsets: it plays between them.
                length = frames(transition.in_offset, rate) + frames(transition.out_offset, rate)
                if isinstance(before, otio.schema.Clip):
                    add(seen - 1, before, position, length)
                if isinstance(after, otio.schema.Clip):
                    add(seen, after, position, length)
                position += length
                continue
            length = frames(item.trimmed_range().duration, rate)
            if isinstance(item, otio.schema.Clip):
                add(seen, item, position, length)
                seen += 1
            position += length
        for start, end, source in pieces:
            print(f"{track.name}\t{start}\t{end - start}\t{source}")


def rich(path, media):
    rate = 48000

    def time(seconds):
        return otio.opentime.RationalTime(seconds * rate, rate)

    def clip(name, start, duration):
        return otio.schema.Clip(
            name=name, media_reference=otio.schema.ExternalReference(target_url="file://" + media),
            source_range=otio.opentime.TimeRange(time(start), time(duration)))

    timeline = otio.schema.Timeline(name="rich")
    timeline.global_start_time = otio.opentime.from_timecode("01:00:00:00", 25)
    track = otio.schema.Track(name="Dialog", kind=otio.schema.TrackKind.Audio)
    first = clip("Take 1", 0, 1)
    first.markers.append(otio.schema.Marker(
        name="Breath", marked_range=otio.opentime.TimeRange(time(0.5), time(0))))
    track.append(first)
    track.append(clip("Take 1", 2, 1))
    fast = clip("fast", 3, 1)
    fast.effects.append(otio.schema.LinearTimeWarp(time_scalar=2.0))
    track.append(fast)
    held = clip("speech-mono-48k-16.wav", 4, 1)
    held.effects.append(otio.schema.FreezeFrame())
    track.append(held)
    track.markers.append(otio.schema.Marker(
        name="Verse", marked_range=otio.opentime.TimeRange(time(2.5), time(0))))
    track.markers.append(otio.schema.Marker(
        name="", marked_range=otio.opentime.TimeRange(time(3), time(0))))
    timeline.tracks.append(track)
    otio.adapters.write_to_file(timeline, path)


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "read":
        read(sys.argv[2], int(sys.argv[3]))
    elif command == "edl":
        edl(sys.argv[2], int(sys.argv[3]))
    elif command == "played":
        played(sys.argv[2], int(sys.argv[3]))
    elif command == "rich":
        rich(sys.argv[2], sys.argv[3])
    elif command == "timecode":
        print(otio.opentime.to_timecode(
            otio.opentime.RationalTime(int(sys.argv[2]), float(sys.argv[3])), float(sys.argv[3]),
            sys.argv[4] == "1"))
    elif command == "start":
        timeline = otio.adapters.read_from_file(sys.argv[2])
        start = timeline.global_start_time
        print(otio.opentime.to_timecode(start, start.rate))
    elif command == "make":
        make(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    else:
        sys.exit(f"unknown command {command}")
