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
 * Edit list (text): `rate channels frames`, then per source `S path channels`, then per clip
 * `C source crop length start fadeIn fadeOut gainLeft gainRight` (frames; gains linear).
 *
 *   cc -O3 -march=native -o mix mix.c -lsndfile && ./mix edits.txt out.wav
 */
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK = 4096, MAX_SOURCES = 64 };

typedef struct {
  int source;
  long long crop, length, start, fade_in, fade_out;
  float left, right;
} Clip;

static int by_start(const void *a, const void *b) {
  long long x = ((const Clip *)a)->start, y = ((const Clip *)b)->start;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: mix EDITS OUT.wav\n");
    return 64;
  }
  FILE *list = fopen(argv[1], "r");
  if (!list) {
    perror(argv[1]);
    return 66;
  }
  int rate, channels;
  long long frames;
  if (fscanf(list, "%d %d %lld", &rate, &channels, &frames) != 3 || channels != 2) {
    fprintf(stderr, "%s: bad header (stereo only)\n", argv[1]);
    return 65;
  }
  SNDFILE *sources[MAX_SOURCES];
  int source_channels[MAX_SOURCES];
  int source_count = 0;
  Clip *clips = NULL;
  int clip_count = 0, clip_capacity = 0;
  char kind[2];
  while (fscanf(list, "%1s", kind) == 1) {
    if (kind[0] == 'S') {
      char path[4096];
      int c;
      if (fscanf(list, " %4095s %d", path, &c) != 2 || source_count == MAX_SOURCES) return 65;
      SF_INFO info = {0};
      sources[source_count] = sf_open(path, SFM_READ, &info);
      if (!sources[source_count]) {
        fprintf(stderr, "%s: %s\n", path, sf_strerror(NULL));
        return 66;
      }
      source_channels[source_count++] = info.channels;
    } else {
      Clip clip;
      if (fscanf(list, "%d %lld %lld %lld %lld %lld %f %f", &clip.source, &clip.crop, &clip.length,
                 &clip.start, &clip.fade_in, &clip.fade_out, &clip.left, &clip.right) != 8)
        return 65;
      if (clip_count == clip_capacity) {
        clip_capacity = clip_capacity ? clip_capacity * 2 : 64;
        clips = realloc(clips, clip_capacity * sizeof *clips);
      }
      clips[clip_count++] = clip;
    }
  }
  fclose(list);
  qsort(clips, clip_count, sizeof *clips, by_start);

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
