#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a destructor; Swift does not import it.
static inline sqlite3_destructor_type sluice_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// sqlite3_db_config is variadic: the integer-flag form only.
static inline int sluice_sqlite_db_config_flag(sqlite3 *db, int op, int value) {
    return sqlite3_db_config(db, op, value, (int *)0);
}
