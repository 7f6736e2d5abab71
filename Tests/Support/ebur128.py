#!/usr/bin/env python3
"""libebur128's measure of an audio file, the reference for a loudness meter's own numbers:
the file decoded by ffmpeg (32-bit float, its own channels and rate), measured by libebur128
(PyPI pyebur128, its Cython build) after ITU-R BS.1770-4.

  ebur128.py FILE        prints {"integrated": LUFS} as one line of JSON

Why not ffmpeg's ebur128 filter: it gates on a histogram of block loudness, and on short
material with a wide range (6 s of piano and speech) its integrated loudness was 0.077 LU off
libebur128's, whose exact gating Tape's meter follows (they agreed to 0.001 LU).
"""
import json
import subprocess
import sys

import numpy as np
import pyebur128


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    path = argv[1]
    probe = json.loads(
        subprocess.run(
            ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
             "stream=channels,sample_rate", "-of", "json", path],
            check=True, capture_output=True).stdout)["streams"][0]
    channels, rate = int(probe["channels"]), int(probe["sample_rate"])
    decoded = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", path, "-f", "f32le", "-c:a", "pcm_f32le", "-"],
        check=True, capture_output=True).stdout
    samples = np.frombuffer(decoded, dtype="<f4")
    state = pyebur128.R128State(channels, rate, pyebur128.MeasurementMode.MODE_I)
    state.add_frames(np.ascontiguousarray(samples), samples.size // channels)
    print(json.dumps({"integrated": pyebur128.get_loudness_global(state)}))


if __name__ == "__main__":
    main(sys.argv)
