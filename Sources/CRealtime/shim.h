// The thread facts the audio thread needs: its own stack (to lock it into memory) and its own
// page faults (to show it takes none). glibc declares pthread_getattr_np and RUSAGE_THREAD only
// under _GNU_SOURCE (dl_iterate_phdr too), which would change other definitions this module shares with Swift's
// Glibc module, so they are declared here as glibc defines them.
#ifndef TAPE_CREALTIME_SHIM_H
#define TAPE_CREALTIME_SHIM_H
#include <errno.h>
#include <link.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

extern int pthread_getattr_np(pthread_t thread, pthread_attr_t *attributes);

// glibc's struct dl_phdr_info and dl_iterate_phdr (link.h, under _GNU_SOURCE too), its fields
// up to dlpi_subs, which every glibc since 2.4 fills.
struct tape_dl_phdr_info {
  ElfW(Addr) dlpi_addr;
  const char *dlpi_name;
  const ElfW(Phdr) *dlpi_phdr;
  ElfW(Half) dlpi_phnum;
  unsigned long long int dlpi_adds;
  unsigned long long int dlpi_subs;
};
extern int dl_iterate_phdr(
    int (*callback)(struct tape_dl_phdr_info *info, size_t size, void *data), void *data);

/// Locks the calling thread's whole stack into memory; 0 on success.
static inline int tape_lock_thread_stack(void) {
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return -1;
  void *address = 0;
  size_t size = 0;
  int result = pthread_attr_getstack(&attributes, &address, &size);
  pthread_attr_destroy(&attributes);
  if (result != 0) return result;
  return mlock(address, size);
}

/// The soft limit on memory a process may lock (RLIMIT_MEMLOCK), in bytes; 0 when unlimited.
static inline unsigned long long tape_memory_lock_limit(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return (unsigned long long)limit.rlim_cur;
}

/// The calling thread's major and minor page faults so far (RUSAGE_THREAD is 1 on Linux).
static inline void tape_thread_page_faults(long *major, long *minor) {
  struct rusage usage;
  if (getrusage(1, &usage) != 0) {
    *major = 0;
    *minor = 0;
    return;
  }
  *major = usage.ru_majflt;
  *minor = usage.ru_minflt;
}

// What the device thread calls between periods, declared realtime-safe for Swift's @_noLocks
// check (none takes a lock or allocates; each is at most one system call).

/// Nanoseconds of CLOCK_MONOTONIC (the vDSO: no system call, no lock).
__attribute__((swift_attr("@_noLocks")))
static inline uint64_t tape_monotonic_ns(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (uint64_t)time.tv_sec * 1000000000u + (uint64_t)time.tv_nsec;
}

/// Nanoseconds of CPU time the calling thread has used (one system call).
__attribute__((swift_attr("@_noLocks")))
static inline uint64_t tape_thread_cpu_ns(void) {
  struct timespec time;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) != 0) return 0;
  return (uint64_t)time.tv_sec * 1000000000u + (uint64_t)time.tv_nsec;
}

/// Sleeps `nanoseconds` (less than a second): the device thread's one bounded wait for its
/// loader. A system call that blocks, and nothing else.
__attribute__((swift_attr("@_noLocks")))
static inline void tape_sleep_ns(long nanoseconds) {
  struct timespec time = {0, nanoseconds};
  nanosleep(&time, 0);
}

/// Posts `semaphore`: lock-free, async-signal-safe (a futex wake only when a thread waits).
__attribute__((swift_attr("@_noLocks")))
static inline void tape_post(sem_t *semaphore) {
  sem_post(semaphore);
}

/// Waits up to `milliseconds` for `semaphore` (not on the audio thread); 0 when posted.
static inline int tape_wait(sem_t *semaphore, long milliseconds) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += milliseconds / 1000;
  until.tv_nsec += (milliseconds % 1000) * 1000000;
  if (until.tv_nsec >= 1000000000) {
    until.tv_sec += 1;
    until.tv_nsec -= 1000000000;
  }
  while (sem_timedwait(semaphore, &until) != 0) {
    if (errno != EINTR) return -1;
  }
  return 0;
}
// The code and constant data the audio thread runs: the program itself, the Swift runtime, the
// C library, ALSA with its PCM plugins and JACK, the C++ runtime that plugins and JACK use,
// and every LV2 plugin loaded. Why: their pages are mapped from files, so the first time the
// audio thread runs a path (a kind of swap first seen minutes in, a plugin's rare branch) may
// be a major page fault, a disk read, if the page cache has dropped the page. Foundation, ICU,
// SQLite, the codecs and the rest never run there and stay out (ICU's data alone is tens of MB).
static inline int tape_runs_on_audio_thread(const char *path) {
  if (path == 0 || path[0] == 0) return 1;  // the program itself
  if (strstr(path, "/lv2/") != 0) return 1;
  const char *name = strrchr(path, '/');
  name = name ? name + 1 : path;
  static const char *const prefixes[] = {
      "libswiftCore.", "libswiftSynchronization.", "libc.so", "libm.so", "libasound",
      "libjack", "libstdc++", "libgcc_s", "libpthread",
  };
  for (unsigned i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  }
  return 0;
}

struct tape_code_lock {
  int lock;           // mlock each segment (else read one byte a page, to bring it in)
  int error;          // the first mlock error, 0 if none
  unsigned long bytes;  // how many bytes were locked or touched
};

static inline int tape_lock_code_segments(struct tape_dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct tape_code_lock *state = (struct tape_code_lock *)data;
  if (!tape_runs_on_audio_thread(info->dlpi_name)) return 0;
  unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *header = &info->dlpi_phdr[i];
    if (header->p_type != PT_LOAD || header->p_memsz == 0) continue;
    unsigned long start = (info->dlpi_addr + header->p_vaddr) & ~(page - 1);
    unsigned long end = (info->dlpi_addr + header->p_vaddr + header->p_memsz + page - 1) & ~(page - 1);
    if (state->lock) {
      if (mlock((const void *)start, end - start) == 0) {
        state->bytes += end - start;
        continue;
      }
      if (state->error == 0) state->error = errno;
    }
    if (!(header->p_flags & PF_R)) continue;
    madvise((void *)start, end - start, MADV_WILLNEED);
    for (unsigned long at = start; at < end; at += page) {
      (void)*(volatile const unsigned char *)at;
    }
    state->bytes += end - start;
  }
  return 0;
}

/// Brings the code and constant data the audio thread runs into memory
/// (``tape_runs_on_audio_thread``): locked when `lock` is set, else read a byte a page (which
/// keeps them in the page cache until memory runs short). Returns the first mlock error
/// (0 if none or not locking); `bytes` is how many bytes were covered.
static inline int tape_lock_code(int lock, unsigned long *bytes) {
  struct tape_code_lock state = {lock, 0, 0};
  dl_iterate_phdr(tape_lock_code_segments, &state);
  if (bytes) *bytes = state.bytes;
  return state.error;
}
static inline int tape_count_additions(struct tape_dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  *(unsigned long long *)data = info->dlpi_adds;
  return 1;
}

/// How many shared objects this process has loaded so far (the program and its libraries at
/// start, each `dlopen` of a new one since): when it has not grown, no new code was mapped.
static inline unsigned long long tape_loaded_objects(void) {
  unsigned long long adds = 0;
  dl_iterate_phdr(tape_count_additions, &adds);
  return adds;
}
#endif
