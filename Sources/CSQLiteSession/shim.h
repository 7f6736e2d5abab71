// Debian's libsqlite3 is built with the session extension and exports sqlite3session_*,
// sqlite3changeset_* and sqlite3changegroup_*, but sqlite3.h declares them only when these two
// macros are defined. This module is the one place that defines them.
#ifndef TAPE_CSQLITESESSION_SHIM_H
#define TAPE_CSQLITESESSION_SHIM_H
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>
#endif

// Swift cannot call variadic C functions; these wrap the two sqlite3_db_config calls Tape uses.
#ifndef TAPE_CSQLITESESSION_DBCONFIG
#define TAPE_CSQLITESESSION_DBCONFIG
/// A connection that only reads must not checkpoint (write to the main file) when it closes.
static inline int tape_sqlite_no_checkpoint_on_close(sqlite3 *db) {
  return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
#endif
