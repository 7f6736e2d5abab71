// Swift 6 will not touch C's `stdout` (a mutable global); this reads it on Swift's behalf.
#ifndef TAPE_CSTANDARDOUTPUT_SHIM_H
#define TAPE_CSTANDARDOUTPUT_SHIM_H
#include <errno.h>
#include <stdio.h>

/// Flushes stdout: 0 when everything printed so far was written, else the errno of the failure.
static inline int tape_flush_standard_output(void) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    return errno != 0 ? errno : EIO;
  }
  return 0;
}
#endif
