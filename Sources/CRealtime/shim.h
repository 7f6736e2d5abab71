// The thread facts the audio thread needs: its own stack (to lock it into memory) and its own
// page faults (to show it takes none). glibc declares pthread_getattr_np and RUSAGE_THREAD only
// under _GNU_SOURCE, which would change other definitions this module shares with Swift's
// Glibc module, so they are declared here as glibc defines them.
#ifndef TAPE_CREALTIME_SHIM_H
#define TAPE_CREALTIME_SHIM_H
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>

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
#endif
