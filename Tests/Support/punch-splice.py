#!/usr/bin/env python3
"""The punch test's reference: the splice a punch should make, computed with numpy from the
signals the test made, and the worst difference of Tape's render from it.

  punch-splice.py OLD.s16 CARRIED.s16 RENDERED.f32 IN OUT CROSSFADE

OLD.s16 is what the track held (interleaved stereo, 16-bit), CARRIED.s16 what the loop carried
back while recording (the mix the performer heard, stereo 16-bit), RENDERED.f32 the track as
Tape renders it after the punch (stereo 32-bit float). IN and OUT are the punch's frames and
CROSSFADE the length of each crossfade in frames, centred on IN and on OUT, linear.

Prints one line of JSON: the worst absolute error inside the punch, in its crossfades and
outside it, over the left channel and the right; the frames compared; and, to say where a
render went wrong, the frames whose error is over 1e-6 (how many, the first and the last) and
the frame of the worst error.
"""
import json
import sys

import numpy as np


def stereo(path, dtype, scale):
    samples = np.fromfile(path, dtype=dtype).astype(np.float64) / scale
    return samples.reshape(-1, 2)


def main(argv):
    if len(argv) != 7:
        sys.exit(__doc__)
    old = stereo(argv[1], "<i2", 32768.0)
    carried = stereo(argv[2], "<i2", 32768.0)
    rendered = stereo(argv[3], "<f4", 1.0)
    punch_in, punch_out, crossfade = (int(value) for value in argv[4:7])
    frames = old.shape[0]
    if carried.shape[0] != frames:
        sys.exit(f"OLD has {frames} frames and CARRIED {carried.shape[0]}")
    # A render shorter than the track is an error in itself: compare its missing frames with 0.
    padded = np.zeros_like(old)
    padded[: min(frames, rendered.shape[0])] = rendered[:frames]
    index = np.arange(frames, dtype=np.float64)
    fade_in = (index - (punch_in - crossfade / 2)) / crossfade
    fade_out = (punch_out + crossfade / 2 - index) / crossfade
    share = np.clip(np.minimum(fade_in, fade_out), 0.0, 1.0)[:, None]
    expected = old * (1 - share) + carried * share
    error = np.abs(padded - expected).max(axis=1)
    share = share[:, 0]

    def worst(mask):
        return float(error[mask].max()) if mask.any() else 0.0

    wrong = np.flatnonzero(error > 1e-6)
    print(
        json.dumps(
            {
                "inside": worst(share == 1),
                "fades": worst((share > 0) & (share < 1)),
                "outside": worst(share == 0),
                "frames": int(frames),
                "rendered_frames": int(rendered.shape[0]),
                "wrong_frames": int(wrong.size),
                "first_wrong": int(wrong[0]) if wrong.size else None,
                "last_wrong": int(wrong[-1]) if wrong.size else None,
                "worst_frame": int(error.argmax()),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv)
