/* A plain C mixer: the baseline `tape render` is measured against (Benchmarks/render-vs-sox.py).
 *
 * Reads an edit list, mixes its clips with libsndfile in and libsndfile out, 32-bit float, the
 * way a competent C programmer would write it without tricks either way: each source opened
 * once, each clip read block by block straight into a float buffer (libsndfile converts 16/24-bit
 * to float as it reads), linear fades and gains per frame, summed into one float block, written
 * block by block. Clips are sorted by start, so a block visits only the clips it overlaps.
 *
 * The arithmetic is Tape's (RenderKernel): a clip's frame i gets fade-in (i / fadeIn) below
 * fadeIn and fade-out ((length - i) / fadeOut) from length - fadeOut, times its left and right
 * gains (clip x track gain x pan law, computed by the caller), a mono source feeding both
 * outputs; so the output agrees with Tape's to float rounding.
 *
 * The edit list is edits.h's (shared with floor.c).
 *
 *   cc -O3 -march=native -o mix mix.c -lsndfile && ./mix edits.txt out.wav
 */
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edits.h"

enum { BLOCK = 4096 };

static SNDFILE *sources[MAX_SOURCES];
static int source_channels[MAX_SOURCES];

static int open_source(int index, const char *path, int channels) {
  SF_INFO info = {0};
  sources[index] = sf_open(path, SFM_READ, &info);
  if (!sources[index]) {
    fprintf(stderr, "%s: %s\n", path, sf_strerror(NULL));
    return 66;
  }
  if (info.channels != channels) {
    fprintf(stderr, "%s: %d channels, the list says %d\n", path, info.channels, channels);
    return 65;
  }
  source_channels[index] = info.channels;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: mix EDITS OUT.wav\n");
    return 64;
  }
  Edits edits;
  int status = read_edits(argv[1], &edits, open_source);
  if (status) return status;
  const int rate = edits.rate, source_count = edits.source_count, clip_count = edits.clip_count;
  const long long frames = edits.frames;
  Clip *clips = edits.clips;

  SF_INFO out_info = {.samplerate = rate, .channels = 2, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT};
  SNDFILE *out = sf_open(argv[2], SFM_WRITE, &out_info);
  if (!out) {
    fprintf(stderr, "%s: %s\n", argv[2], sf_strerror(NULL));
    return 73;
  }
  static float mix[BLOCK * 2];
  static float in[BLOCK * 2];
  int first = 0;  // clips before this one have ended
  for (long long at = 0; at < frames; at += BLOCK) {
    long long count = frames - at < BLOCK ? frames - at : BLOCK;
    memset(mix, 0, sizeof(float) * count * 2);
    while (first < clip_count && clips[first].start + clips[first].length <= at) first++;
    for (int k = first; k < clip_count && clips[k].start < at + count; k++) {
      const Clip *c = &clips[k];
      long long from = at > c->start ? at : c->start;
      long long to = at + count < c->start + c->length ? at + count : c->start + c->length;
      if (from >= to) continue;
      long long n = to - from, i0 = from - c->start;
      SNDFILE *file = sources[c->source];
      int sc = source_channels[c->source];
      sf_seek(file, c->crop + i0, SEEK_SET);
      if (sf_readf_float(file, in, n) != n) {
        fprintf(stderr, "short read\n");
        return 74;
      }
      float *dst = mix + (from - at) * 2;
      const long long fade_out_start = c->length - c->fade_out;
      for (long long j = 0; j < n; j++) {
        long long i = i0 + j;
        float g = 1;
        if (i < c->fade_in) g = (float)((double)i / (double)c->fade_in);
        if (i >= fade_out_start) g *= (float)((double)(c->length - i) / (double)c->fade_out);
        float l = sc == 1 ? in[j] : in[j * 2], r = sc == 1 ? in[j] : in[j * 2 + 1];
        dst[j * 2] += l * (g * c->left);
        dst[j * 2 + 1] += r * (g * c->right);
      }
    }
    if (sf_writef_float(out, mix, count) != count) {
      fprintf(stderr, "%s: %s\n", argv[2], sf_strerror(out));
      return 74;
    }
  }
  sf_close(out);
  for (int s = 0; s < source_count; s++) sf_close(sources[s]);
  free(clips);
  return 0;
}
