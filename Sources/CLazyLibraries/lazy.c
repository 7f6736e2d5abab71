// Loads a library on the first call of one of its stubs (stubs.c, scripts/lazy-libraries.py).

#define _GNU_SOURCE
#include "lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/// Serialises first loads (two threads may make a library's first call at once). Recursive only
/// as a guard: the stubs are not exported, so a library being loaded cannot call back into one.
static pthread_mutex_t loading = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/// Opens `library` and fills every slot, once; a missing library ends the process (exit 69,
/// EX_UNAVAILABLE: a part of the system the command needs is not there) with one `error:`
/// line naming the package: nothing else can stand in for it. A command that fails so commits
/// nothing (a transaction still open ends uncommitted), though a cache file it was writing may
/// stay.
static void load(struct tape_lazy_library *library) {
  pthread_mutex_lock(&loading);
  if (!atomic_load_explicit(&library->loaded, memory_order_acquire)) {
    void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      fprintf(stderr, "error: cannot load %s (%s); install the Debian package %s\n",
              library->soname, dlerror(), library->package);
      exit(69);
    }
    for (int slot = 0; slot < library->count; slot++) {
      // A function the headers declare but this build of the library lacks stays NULL: an
      // error only if it is called.
      atomic_store_explicit(&library->slots[slot], dlsym(handle, library->names[slot]),
                            memory_order_relaxed);
    }
    atomic_store_explicit(&library->loaded, 1, memory_order_release);
  }
  pthread_mutex_unlock(&loading);
}

void *tape_lazy_function(int index, int slot) {
  struct tape_lazy_library *library = &tape_lazy_libraries[index];
  if (!atomic_load_explicit(&library->loaded, memory_order_acquire)) load(library);
  void *function = atomic_load_explicit(&library->slots[slot], memory_order_relaxed);
  if (!function) {
    fprintf(stderr,
            "error: %s has no function %s: it is older than Tape needs; upgrade the Debian "
            "package %s\n",
            library->soname, library->names[slot], library->package);
    exit(69);
  }
  return function;
}
