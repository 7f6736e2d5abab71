// Debian's libsqlite3 is built with the session extension and exports sqlite3session_*,
// sqlite3changeset_* and sqlite3changegroup_*, but sqlite3.h declares them only when these two
// macros are defined. This module is the one place that defines them.
#ifndef TAPE_CSQLITESESSION_SHIM_H
#define TAPE_CSQLITESESSION_SHIM_H
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>
#endif
