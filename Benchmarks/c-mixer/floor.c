/* The render floor (issue 47): the least a renderer must do, written in C to be fast.
 *
 * Sources are pre-decoded, interleaved 32-bit float, raw (what Tape's cache holds after an
 * import): each clip's frames of a block are read with one pread, faded and gained per frame
 * (the arithmetic of mix.c and of Tape's RenderKernel: fade-in i / fadeIn, fade-out
 * (length - i) / fadeOut, times the clip's left and right gains, a mono source feeding both
 * sides), summed into one float block, and the block written with pwrite into a 32-bit float
 * WAV whose header is written first (its size is known). No analysis, no dither, no checks
 * beyond short reads and writes: what Tape's render does on top of this is what it costs.
 *
 * With -j N the timeline is cut into N consecutive stretches, one thread each, every thread
 * reading, mixing and writing its own (on 2 cores, -j 2 is the strongest form of this floor).
 * With -m each source is mapped whole (mmap, MAP_POPULATE: its pages, already in the page
 * cache, mapped before the mix) and read in place: no copy at all, where pread copies each
 * clip's frames again for every track that plays them (at 64 tracks cut from four sources,
 * -m is the stronger floor).
 * With -s the file is on the disk when it ends (fsync before close), as `tape render` promises
 * of every file it writes: on a disk, the comparable floor.
 *
 * The edit list is edits.h's (shared with mix.c), each source a raw float file.
 *
 *   cc -O3 -march=native -pthread -o floor floor.c && ./floor [-j 2] [-s] [-m] edits.txt out.wav
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "edits.h"

enum { BLOCK = 16384, MAX_THREADS = 16, HEADER = 46 };

static int source_fds[MAX_SOURCES];
static int source_channels[MAX_SOURCES];
/* With -m: each source mapped whole (MAP_POPULATE), read in place instead of by pread. */
static const float *source_maps[MAX_SOURCES];
static const Clip *clips;
static int clip_count;
static int mapped;
static int out_fd;

typedef struct {
  long long from, to;
  int failed;
} Stretch;

static int read_all(int fd, void *buffer, size_t bytes, off_t offset) {
  char *at = buffer;
  while (bytes > 0) {
    ssize_t got = pread(fd, at, bytes, offset);
    if (got <= 0) return -1;
    at += got, bytes -= (size_t)got, offset += got;
  }
  return 0;
}

static int write_all(int fd, const void *buffer, size_t bytes, off_t offset) {
  const char *at = buffer;
  while (bytes > 0) {
    ssize_t put = pwrite(fd, at, bytes, offset);
    if (put <= 0) return -1;
    at += put, bytes -= (size_t)put, offset += put;
  }
  return 0;
}

static void *render(void *argument) {
  Stretch *stretch = argument;
  float *mix = malloc(sizeof(float) * BLOCK * 2);
  float *in = malloc(sizeof(float) * BLOCK * 2);
  int first = 0;  // clips before this one have ended
  for (long long at = stretch->from; at < stretch->to; at += BLOCK) {
    long long count = stretch->to - at < BLOCK ? stretch->to - at : BLOCK;
    memset(mix, 0, sizeof(float) * count * 2);
    while (first < clip_count && clips[first].start + clips[first].length <= at) first++;
    for (int k = first; k < clip_count && clips[k].start < at + count; k++) {
      const Clip *c = &clips[k];
      long long from = at > c->start ? at : c->start;
      long long to = at + count < c->start + c->length ? at + count : c->start + c->length;
      if (from >= to) continue;
      long long n = to - from, i0 = from - c->start;
      int sc = source_channels[c->source];
      const float *from_source = in;
      if (source_maps[c->source]) {
        from_source = source_maps[c->source] + (c->crop + i0) * sc;
      } else if (read_all(source_fds[c->source], in, (size_t)(n * sc) * sizeof(float),
                          (off_t)((c->crop + i0) * sc) * (off_t)sizeof(float))) {
        stretch->failed = 1;
        break;
      }
      float *dst = mix + (from - at) * 2;
      // The clip's frames i0 … i0 + n in three stretches, so that the body's loop has no
      // branch and vectorizes: the fade-in (i < fadeIn), the body, the fade-out (i >=
      // length - fadeOut); where the fades overlap, a frame gets both, as mix.c gives it.
      const long long fade_out_start = c->length - c->fade_out;
      const long long end = i0 + n;
      const long long body_from = c->fade_in > i0 ? (c->fade_in < end ? c->fade_in : end) : i0;
      const long long body_to =
          fade_out_start > body_from ? (fade_out_start < end ? fade_out_start : end) : body_from;
      const float left = c->left, right = c->right;
      for (int part = 0; part < 2; part++) {
        long long first = part == 0 ? i0 : body_to, last = part == 0 ? body_from : end;
        for (long long i = first; i < last; i++) {
          float g = 1;
          if (i < c->fade_in) g = (float)((double)i / (double)c->fade_in);
          if (i >= fade_out_start) g *= (float)((double)(c->length - i) / (double)c->fade_out);
          long long j = i - i0;
          float l = sc == 1 ? from_source[j] : from_source[j * 2];
          float r = sc == 1 ? from_source[j] : from_source[j * 2 + 1];
          dst[j * 2] += l * (g * left);
          dst[j * 2 + 1] += r * (g * right);
        }
      }
      float *body = dst + (body_from - i0) * 2;
      long long count = body_to - body_from;
      if (sc == 1) {
        const float *in_body = from_source + (body_from - i0);
        for (long long j = 0; j < count; j++) {
          body[j * 2] += in_body[j] * left;
          body[j * 2 + 1] += in_body[j] * right;
        }
      } else {
        const float *in_body = from_source + (body_from - i0) * 2;
        for (long long j = 0; j < count; j++) {
          body[j * 2] += in_body[j * 2] * left;
          body[j * 2 + 1] += in_body[j * 2 + 1] * right;
        }
      }
    }
    if (stretch->failed ||
        write_all(out_fd, mix, (size_t)count * 2 * sizeof(float), HEADER + (off_t)at * 8)) {
      stretch->failed = 1;
      break;
    }
  }
  free(mix);
  free(in);
  return NULL;
}

static void put32(unsigned char *at, uint32_t value) {
  for (int i = 0; i < 4; i++) at[i] = (unsigned char)(value >> (8 * i));
}

/* Opens source `index` (edits.h): a raw float file, mapped whole with -m. */
static int open_source(int index, const char *path, int channels) {
  source_fds[index] = open(path, O_RDONLY);
  if (source_fds[index] < 0) {
    perror(path);
    return 66;
  }
  if (mapped) {
    struct stat info;
    if (fstat(source_fds[index], &info)) return 66;
    void *map =
        mmap(NULL, (size_t)info.st_size, PROT_READ, MAP_SHARED | MAP_POPULATE, source_fds[index], 0);
    if (map == MAP_FAILED) {
      perror(path);
      return 66;
    }
    source_maps[index] = map;
  }
  source_channels[index] = channels;
  return 0;
}

int main(int argc, char **argv) {
  int threads = 1, durable = 0;
  while (argc > 1 && argv[1][0] == '-') {
    if (strcmp(argv[1], "-s") == 0) {
      durable = 1;
      argv += 1, argc -= 1;
    } else if (strcmp(argv[1], "-m") == 0) {
      mapped = 1;
      argv += 1, argc -= 1;
    } else if (strcmp(argv[1], "-j") == 0 && argc > 2) {
      threads = atoi(argv[2]);
      argv += 2, argc -= 2;
    } else {
      break;
    }
  }
  if (argc != 3 || threads < 1 || threads > MAX_THREADS) {
    fprintf(stderr, "usage: floor [-j N] [-s] [-m] EDITS OUT.wav\n");
    return 64;
  }
  Edits edits;
  int status = read_edits(argv[1], &edits, open_source);
  if (status) return status;
  const int rate = edits.rate;
  const long long frames = edits.frames;
  clips = edits.clips;
  clip_count = edits.clip_count;

  out_fd = open(argv[2], O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (out_fd < 0) {
    perror(argv[2]);
    return 73;
  }
  // RIFF/WAVE, fmt (IEEE float, format 3, with its cbSize of 0), data: 46 bytes.
  unsigned char header[HEADER] = {0};
  uint32_t data = (uint32_t)(frames * 8);
  memcpy(header, "RIFF", 4);
  put32(header + 4, HEADER - 8 + data);
  memcpy(header + 8, "WAVEfmt ", 8);
  put32(header + 16, 18);
  header[20] = 3, header[22] = 2;
  put32(header + 24, (uint32_t)rate);
  put32(header + 28, (uint32_t)rate * 8);
  header[32] = 8, header[34] = 32;
  memcpy(header + 38, "data", 4);
  put32(header + 42, data);
  if (write_all(out_fd, header, HEADER, 0)) {
    perror(argv[2]);
    return 74;
  }
  Stretch stretches[MAX_THREADS];
  pthread_t ids[MAX_THREADS];
  long long share = (frames + threads - 1) / threads;
  share = (share + BLOCK - 1) / BLOCK * BLOCK;
  for (int t = 0; t < threads; t++) {
    long long from = t * share, to = (t + 1) * share;
    stretches[t] = (Stretch){from < frames ? from : frames, to < frames ? to : frames, 0};
    pthread_create(&ids[t], NULL, render, &stretches[t]);
  }
  int failed = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(ids[t], NULL);
    failed |= stretches[t].failed;
  }
  if (failed || (durable && fsync(out_fd)) || close(out_fd)) {
    fprintf(stderr, "%s: a read or write failed\n", argv[2]);
    return 74;
  }
  return 0;
}
