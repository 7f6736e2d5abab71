// The thread facts the audio thread needs: its own stack (to lock it into memory) and its own
// page faults (to show it takes none). glibc declares pthread_getattr_np and RUSAGE_THREAD only
// under _GNU_SOURCE, which would change other definitions this module shares with Swift's
// Glibc module, so they are declared here as glibc defines them.
#ifndef TAPE_CREALTIME_SHIM_H
#define TAPE_CREALTIME_SHIM_H
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

extern int pthread_getattr_np(pthread_t thread, pthread_attr_t *attributes);

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
#endif
