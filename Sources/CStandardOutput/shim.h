// Swift 6 will not touch C's `stdout` (a mutable global); this reads and sets it on Swift's
// behalf, and keeps Tape's own output apart from what libraries and plugins print.
#ifndef TAPE_CSTANDARDOUTPUT_SHIM_H
#define TAPE_CSTANDARDOUTPUT_SHIM_H
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/// Where Tape's own output goes: `own` (its stream on descriptor 1, once diverted), else C's
/// `stdout`.
///
/// Rule: this header keeps no state; the caller holds the stream. Why: a `static` variable in a
/// header is one per LLVM module, and a release build (multi-threaded whole-module
/// optimisation) makes one LLVM module per Swift file, so a stream kept here by the file that
/// diverted was unseen by the file that printed: in release builds every line Tape printed
/// went to stderr. `scripts/test.sh` refuses a file-scope `static` variable in these headers.
static inline FILE *tape_output(FILE *own) { return own != NULL ? own : stdout; }

/// Gives Tape's own output a stream of its own on descriptor 1, stored in `*own`, and points
/// C's `stdout` at a copy of descriptor 2 (unbuffered), so that what a library or plugin prints
/// with printf (x42's convolver says "SF rate: …" when it loads a file) goes to stderr, not
/// into a listing, a JSON document or audio written to standard output. Descriptor 1 itself is
/// unchanged (what is written to it directly, and what child processes inherit). 0 when done
/// (or done before: `*own` is already set), else the errno, and nothing is changed: with
/// descriptor 1 closed (taken by /dev/null opened for reading), Tape's output fails when
/// written, as before.
static inline int tape_divert_standard_output(FILE **own) {
  if (*own != NULL) return 0;
  if (fflush(stdout) != 0) return errno != 0 ? errno : EIO;
  int copy = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) return errno;
  FILE *elsewhere = fdopen(copy, "w");
  if (elsewhere == NULL) {
    int error = errno;
    close(copy);
    return error;
  }
  FILE *stream = fdopen(STDOUT_FILENO, "w");
  if (stream == NULL) {
    int error = errno;
    fclose(elsewhere);
    return error;
  }
  setvbuf(elsewhere, NULL, _IONBF, 0);
  *own = stream;
  stdout = elsewhere;
  return 0;
}

/// Writes `text` to Tape's own output (``tape_output``): 0, else the errno of the failure.
static inline int tape_write_output(FILE *own, const char *text) {
  return fputs(text, tape_output(own)) < 0 ? (errno != 0 ? errno : EIO) : 0;
}

/// Flushes Tape's own output: 0 when everything printed so far was written, else the errno of
/// the failure.
static inline int tape_flush_standard_output(FILE *own) {
  FILE *output = tape_output(own);
  if (fflush(output) != 0 || ferror(output)) {
    return errno != 0 ? errno : EIO;
  }
  return 0;
}
#endif
