#if defined(__linux__)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#endif
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a destructor; Swift does not import it.
static inline sqlite3_destructor_type sluice_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// sqlite3_db_config is variadic: the integer-flag form only.
static inline int sluice_sqlite_db_config_flag(sqlite3 *db, int op, int value) {
    return sqlite3_db_config(db, op, value, (int *)0);
}

/// Starts writing back every dirty page of file `fd` and returns without
/// waiting for the writes to end: sync_file_range(2) with
/// SYNC_FILE_RANGE_WRITE, a GNU extension that Swift's Glibc module does not
/// import. What is durable does not change (the kernel may write a dirty
/// page back at any time); a later sync of the file has less left to write.
/// 0, or -1 with errno; 0 without doing anything where there is no such call.
#if defined(__linux__)
static inline int sluice_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}
#else
static inline int sluice_start_writeback(int fd) {
    (void)fd;
    return 0;
}
#endif
