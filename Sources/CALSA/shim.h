#include <alsa/asoundlib.h>

// alsa-lib prints its own diagnostics on stderr ("ALSA lib confmisc.c:…"); Tape reports every
// failure itself, in one line that names the fix, so those are silenced. Swift cannot write a
// variadic C function, hence this one here.
static void tape_alsa_ignore_error(const char *file, int line, const char *function, int err,
                                   const char *fmt, ...) {
  (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void tape_alsa_silence_library_errors(void) {
  snd_lib_error_set_handler(tape_alsa_ignore_error);
}
