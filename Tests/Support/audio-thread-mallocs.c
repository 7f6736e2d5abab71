// Counts the memory allocations made on the audio thread, and only there.
//
// Preloaded into `tape play` by the realtime tests (LD_PRELOAD). The player calls
// tape_audio_thread_begin() on its device thread before the first period and
// tape_audio_thread_end() after the last, if these symbols exist; a thread-local flag makes
// every allocation function count only between the two, on that thread. At the end the counts
// are written to the file named by TAPE_ALLOC_REPORT as "mallocs frees".
//
// Build: cc -shared -fPIC -O2 -o audio-thread-mallocs.so audio-thread-mallocs.c
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <malloc.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static __thread int armed = 0;
static atomic_long allocations = 0;
static atomic_long releases = 0;

void tape_audio_thread_begin(void) { armed = 1; }

void tape_audio_thread_end(void) {
  armed = 0;
  const char *path = getenv("TAPE_ALLOC_REPORT");
  if (!path) return;
  FILE *file = fopen(path, "w");
  if (!file) return;
  fprintf(file, "%ld %ld\n", atomic_load(&allocations), atomic_load(&releases));
  fclose(file);
}

void *malloc(size_t size) {
  if (armed) atomic_fetch_add(&allocations, 1);
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  if (armed) atomic_fetch_add(&allocations, 1);
  return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
  if (armed) atomic_fetch_add(&allocations, 1);
  return __libc_realloc(pointer, size);
}

void free(void *pointer) {
  if (armed && pointer) atomic_fetch_add(&releases, 1);
  __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
  if (armed) atomic_fetch_add(&allocations, 1);
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  if (armed) atomic_fetch_add(&allocations, 1);
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
  if (armed) atomic_fetch_add(&allocations, 1);
  *result = __libc_memalign(alignment, size);
  return *result ? 0 : 12;
}
