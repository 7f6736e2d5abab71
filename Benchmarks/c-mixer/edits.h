/* The edit list the C baselines read (mix.c, floor.c), and its reader.
 *
 * Text: `rate channels frames` (stereo only), then per source `S path channels`, then per clip
 * `C source crop length start fadeIn fadeOut gainLeft gainRight` (frames; gains linear, each
 * side's clip x track gain x Tape's pan law, computed by Benchmarks/render-vs-sox.py).
 */
#ifndef TAPE_BENCH_EDITS_H
#define TAPE_BENCH_EDITS_H

#include <stdio.h>
#include <stdlib.h>

enum { MAX_SOURCES = 64 };

typedef struct {
  int source;
  long long crop, length, start, fade_in, fade_out;
  float left, right;
} Clip;

typedef struct {
  int rate;
  long long frames;
  int source_count;
  Clip *clips; /* by start */
  int clip_count;
} Edits;

static int by_start(const void *a, const void *b) {
  long long x = ((const Clip *)a)->start, y = ((const Clip *)b)->start;
  return (x > y) - (x < y);
}

/* Reads the edit list at `path` into `edits`, calling `open_source(index, path, channels)` for
 * each source line (its index counts from 0; a non-zero return stops the reading with that
 * status). Sources of 1 or 2 channels, at most MAX_SOURCES; clips of a source listed before
 * them, no negative field. Returns 0, or the exit status to stop with (65 for a bad list, 66
 * for one that cannot be read), having said why on stderr. */
static int read_edits(const char *path, Edits *edits,
                      int (*open_source)(int index, const char *path, int channels)) {
  FILE *list = fopen(path, "r");
  if (!list) {
    perror(path);
    return 66;
  }
  *edits = (Edits){0};
  int channels, capacity = 0, status = 0;
  if (fscanf(list, "%d %d %lld", &edits->rate, &channels, &edits->frames) != 3 || channels != 2) {
    fprintf(stderr, "%s: bad header (stereo only)\n", path);
    status = 65;
  }
  char kind[2];
  while (status == 0 && fscanf(list, "%1s", kind) == 1) {
    if (kind[0] == 'S') {
      char source[4096];
      int c;
      if (fscanf(list, " %4095s %d", source, &c) != 2 || edits->source_count == MAX_SOURCES ||
          c < 1 || c > 2) {
        fprintf(stderr, "%s: bad source line (1 or 2 channels, at most %d)\n", path, MAX_SOURCES);
        status = 65;
      } else {
        status = open_source(edits->source_count++, source, c);
      }
    } else {
      Clip clip;
      if (fscanf(list, "%d %lld %lld %lld %lld %lld %f %f", &clip.source, &clip.crop, &clip.length,
                 &clip.start, &clip.fade_in, &clip.fade_out, &clip.left, &clip.right) != 8 ||
          clip.source < 0 || clip.source >= edits->source_count || clip.length < 0 ||
          clip.crop < 0 || clip.start < 0) {
        fprintf(stderr, "%s: bad clip line\n", path);
        status = 65;
        break;
      }
      if (edits->clip_count == capacity) {
        capacity = capacity ? capacity * 2 : 64;
        edits->clips = realloc(edits->clips, capacity * sizeof *edits->clips);
      }
      edits->clips[edits->clip_count++] = clip;
    }
  }
  fclose(list);
  if (status == 0) qsort(edits->clips, edits->clip_count, sizeof *edits->clips, by_start);
  return status;
}

#endif
