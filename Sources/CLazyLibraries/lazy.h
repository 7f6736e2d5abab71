// The libraries Tape loads when a command first calls them (scripts/lazy-libraries.py).
#pragma once

#include <alsa/asoundlib.h>
#include <lilv-0/lilv/lilv.h>
#include <openssl/evp.h>
#include <sndfile.h>
#include <soxr.h>
#include <stdatomic.h>

/// One library: its SONAME, the Debian package that installs it, the functions Tape may call
/// and their addresses once loaded.
struct tape_lazy_library {
  const char *soname;
  const char *package;
  const char *const *names;
  void *_Atomic *slots;
  int count;
  _Atomic int loaded;
};

extern struct tape_lazy_library tape_lazy_libraries[];

/// The address of function `slot` of library `library`, loading the library (and looking up
/// all its functions) on the first call. A library that cannot be loaded ends the process with
/// a message naming its package.
void *tape_lazy_function(int library, int slot);
