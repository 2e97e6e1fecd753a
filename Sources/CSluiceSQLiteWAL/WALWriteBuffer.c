// The WAL write buffer of CSluiceSQLiteWAL.h.
//
// Measured before it was written (docs/nightly-sync.md, "The WAL's writes
// gathered"): the change file of 2,000,000 events wrote 59,000 WAL frames,
// 118,000 pwrite(2) calls, and `perf` put 0.34 s of the store thread's 2.0
// s of CPU in them; 59,000 frames written as two calls each took 0.21-0.26
// s against 0.07 s in 256 KiB writes (a C loop, the same file system).
//
// Every file this VFS opens is a header (this file's `File`) in front of a
// file of the default VFS, allocated apart since the default VFS may change
// after registration (tests install their own). Only a WAL's writes are
// gathered; every other call goes straight through.
#include "CSluiceSQLiteWAL.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/// Bytes gathered before they are written: under 128 KiB, since the unix
/// VFS writes at most 0x1ffff bytes a call (a larger write is masked to
/// that many bits, and one of exactly 128 KiB came out as a write of none:
/// SQLITE_FULL).
#define GATHERED_BYTES (120 * 1024)

typedef struct File {
    sqlite3_file base;
    sqlite3_file *real;
    /// The name SQLite opened the file with; SQLite keeps it valid until xClose.
    const char *name;
    /// A WAL: its gathered writes, guarded by `lock`, and its place among
    /// the open WALs (guarded by `registry`).
    int is_wal;
    pthread_mutex_t lock;
    unsigned char *gathered;
    int gathered_length;
    sqlite3_int64 gathered_offset;
    /// The last frame header written was a commit's: every write from it
    /// to the next transaction's first frame is written through (with what
    /// was gathered before it) before xWrite returns.
    int commit_pending;
    /// The buffer could not be mapped: writes go straight through.
    int unmapped;
    struct File *next_wal;
} File;

static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;
static File *open_wals;
static sqlite3_vfs vfs;
static pthread_once_t registered = PTHREAD_ONCE_INIT;
static int registration_result = SQLITE_OK;
/// The default VFS when this one was registered.
static sqlite3_vfs *registration_base;

/// The VFS whose files and calls this one wraps: the process's default now
/// (tests make their own the default after the store registered this one),
/// or the default at registration if there is none.
static sqlite3_vfs *base_vfs(void) {
    sqlite3_vfs *found = sqlite3_vfs_find(NULL);
    return found ? found : registration_base;
}

/// A buffer of GATHERED_BYTES mapped on its own, or NULL (its writes then
/// go straight through): a block of the heap taken in the middle of a run
/// kept the heap from shrinking below it (peak RSS 1 to 2 MiB higher).
static unsigned char *map_gathered(void) {
    void *mapped = mmap(NULL, GATHERED_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
    return mapped == MAP_FAILED ? NULL : mapped;
}

/// Writes what `file` gathered; on failure keeps it, for the next call of
/// the connection that owns the WAL to try again and report. The caller
/// holds `file->lock`.
static int write_gathered(File *file) {
    if (file->gathered_length == 0) return SQLITE_OK;
    int rc = file->real->pMethods->xWrite(file->real, file->gathered, file->gathered_length, file->gathered_offset);
    if (rc == SQLITE_OK) file->gathered_length = 0;
    return rc;
}

static int flush_wal(File *file) {
    pthread_mutex_lock(&file->lock);
    int rc = write_gathered(file);
    pthread_mutex_unlock(&file->lock);
    return rc;
}

/// Before a call of the connection that owns a WAL (a read, sync, size,
/// truncate or mapping of it): what it gathered, written, and the write's
/// error. SQLITE_OK for any other file.
static int flush_if_wal(File *file) { return file->is_wal ? flush_wal(file) : SQLITE_OK; }

/// Writes what every open WAL of the database `database_name` gathered, as
/// far as it can: a commit's frames were written by the commit itself (see
/// `file_write`), so what is left is a transaction's frames before its
/// commit, whose failure its own connection meets at its next WAL call.
/// With `dropping` (a connection releasing the WAL's write lock, which only
/// the connection that gathered can hold), what could not be written is
/// dropped: it belongs to a transaction that ended without committing, and
/// once the lock is free another process may write its own frames there.
/// The registry stays locked across the writes (one WAL writes at a time).
static void flush_wals_of(const char *database_name, int dropping) {
    if (!database_name) return;
    size_t length = strlen(database_name);
    pthread_mutex_lock(&registry);
    for (File *wal = open_wals; wal; wal = wal->next_wal) {
        if (strncmp(wal->name, database_name, length) == 0 && strcmp(wal->name + length, "-wal") == 0) {
            pthread_mutex_lock(&wal->lock);
            (void)write_gathered(wal);
            if (dropping) wal->gathered_length = 0;
            pthread_mutex_unlock(&wal->lock);
        }
    }
    pthread_mutex_unlock(&registry);
}

static int file_close(sqlite3_file *base) {
    File *file = (File *)base;
    int rc = SQLITE_OK;
    if (file->is_wal) {
        pthread_mutex_lock(&registry);
        for (File **link = &open_wals; *link; link = &(*link)->next_wal) {
            if (*link == file) {
                *link = file->next_wal;
                break;
            }
        }
        pthread_mutex_unlock(&registry);
        rc = flush_wal(file);
        pthread_mutex_destroy(&file->lock);
        if (file->gathered) munmap(file->gathered, GATHERED_BYTES);
    }
    int closed = file->real->pMethods->xClose(file->real);
    free(file->real);
    return rc == SQLITE_OK ? closed : rc;
}

static int file_read(sqlite3_file *base, void *out, int amount, sqlite3_int64 offset) {
    File *file = (File *)base;
    int rc = flush_if_wal(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xRead(file->real, out, amount, offset);
}

/// A WAL frame's header is 24 bytes, written alone before its page; bytes
/// 4 to 7 (the database's size in pages after the commit) are not zero in a
/// commit's frame only.
#define FRAME_HEADER_BYTES 24

static int file_write(sqlite3_file *base, const void *bytes, int amount, sqlite3_int64 offset) {
    File *file = (File *)base;
    if (!file->is_wal) return file->real->pMethods->xWrite(file->real, bytes, amount, offset);
    pthread_mutex_lock(&file->lock);
    int rc = SQLITE_OK;
    int is_header = amount == FRAME_HEADER_BYTES && offset >= 32;
    if (is_header) {
        const unsigned char *header = bytes;
        file->commit_pending = (header[4] | header[5] | header[6] | header[7]) != 0;
    }
    int follows = offset == file->gathered_offset + file->gathered_length;
    if (file->gathered_length > 0 && (!follows || file->gathered_length + amount > GATHERED_BYTES)) {
        rc = write_gathered(file);
    }
    if (rc == SQLITE_OK && !file->gathered && !file->unmapped && amount < GATHERED_BYTES) {
        file->gathered = map_gathered();
        file->unmapped = file->gathered == NULL;
    }
    if (rc == SQLITE_OK) {
        if (file->gathered && amount < GATHERED_BYTES) {
            if (file->gathered_length == 0) file->gathered_offset = offset;
            memcpy(file->gathered + file->gathered_length, bytes, (size_t)amount);
            file->gathered_length += amount;
            // A commit's frame is in the file when its write returns, so
            // that a failure fails the commit, before SQLite publishes it:
            // its page, and its header alone too, which SQLite writes again
            // last when the transaction rewrote a frame it had written
            // (walRewriteChecksums).
            if (file->commit_pending) rc = write_gathered(file);
        } else {
            rc = file->real->pMethods->xWrite(file->real, bytes, amount, offset);
        }
    }
    pthread_mutex_unlock(&file->lock);
    return rc;
}

static int file_truncate(sqlite3_file *base, sqlite3_int64 size) {
    File *file = (File *)base;
    int rc = flush_if_wal(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xTruncate(file->real, size);
}

static int file_sync(sqlite3_file *base, int flags) {
    File *file = (File *)base;
    int rc = flush_if_wal(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xSync(file->real, flags);
}

static int file_size(sqlite3_file *base, sqlite3_int64 *size) {
    File *file = (File *)base;
    int rc = flush_if_wal(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xFileSize(file->real, size);
}

static int file_lock(sqlite3_file *base, int level) {
    File *file = (File *)base;
    return file->real->pMethods->xLock(file->real, level);
}

static int file_unlock(sqlite3_file *base, int level) {
    File *file = (File *)base;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int file_check_reserved_lock(sqlite3_file *base, int *out) {
    File *file = (File *)base;
    return file->real->pMethods->xCheckReservedLock(file->real, out);
}

static int file_control(sqlite3_file *base, int op, void *argument) {
    File *file = (File *)base;
    return file->real->pMethods->xFileControl(file->real, op, argument);
}

static int file_sector_size(sqlite3_file *base) {
    File *file = (File *)base;
    return file->real->pMethods->xSectorSize(file->real);
}

static int file_device_characteristics(sqlite3_file *base) {
    File *file = (File *)base;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int file_shm_map(sqlite3_file *base, int page, int size, int extend, void volatile **out) {
    File *file = (File *)base;
    if (file->real->pMethods->iVersion < 2) return SQLITE_IOERR_SHMMAP;
    return file->real->pMethods->xShmMap(file->real, page, size, extend, out);
}

// Every lock of the WAL index and every barrier on it writes the gathered
// frames of this database's WALs first (a commit's were written by its
// xWrite already): a transaction rolled back after its pages spilled into
// the WAL leaves none gathered once its writer releases its lock, which
// another connection needs before it can empty the WAL.
static int file_shm_lock(sqlite3_file *base, int offset, int count, int flags) {
    File *file = (File *)base;
    if (file->real->pMethods->iVersion < 2) return SQLITE_IOERR_SHMLOCK;
    // Lock 0 is the WAL's write lock (wal.c's WAL_WRITE_LOCK).
    int releasing_write = offset == 0 && (flags & SQLITE_SHM_UNLOCK) && (flags & SQLITE_SHM_EXCLUSIVE);
    flush_wals_of(file->name, releasing_write);
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

static void file_shm_barrier(sqlite3_file *base) {
    File *file = (File *)base;
    flush_wals_of(file->name, 0);
    if (file->real->pMethods->iVersion >= 2) file->real->pMethods->xShmBarrier(file->real);
}

static int file_shm_unmap(sqlite3_file *base, int delete_flag) {
    File *file = (File *)base;
    if (file->real->pMethods->iVersion < 2) return SQLITE_OK;
    return file->real->pMethods->xShmUnmap(file->real, delete_flag);
}

static int file_fetch(sqlite3_file *base, sqlite3_int64 offset, int amount, void **out) {
    File *file = (File *)base;
    *out = 0;
    if (file->real->pMethods->iVersion < 3) return SQLITE_OK;
    int rc = flush_if_wal(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xFetch(file->real, offset, amount, out);
}

static int file_unfetch(sqlite3_file *base, sqlite3_int64 offset, void *page) {
    File *file = (File *)base;
    if (file->real->pMethods->iVersion < 3) return SQLITE_OK;
    return file->real->pMethods->xUnfetch(file->real, offset, page);
}

/// The methods of a file, by the version of the file it wraps (1 to 3), so
/// that SQLite sees the same abilities (a file without shared memory
/// methods cannot hold a WAL database).
static sqlite3_io_methods methods_by_version[4];

static const sqlite3_io_methods methods = {
    3,
    file_close,
    file_read,
    file_write,
    file_truncate,
    file_sync,
    file_size,
    file_lock,
    file_unlock,
    file_check_reserved_lock,
    file_control,
    file_sector_size,
    file_device_characteristics,
    file_shm_map,
    file_shm_lock,
    file_shm_barrier,
    file_shm_unmap,
    file_fetch,
    file_unfetch,
};

static int vfs_open(sqlite3_vfs *self, const char *name, sqlite3_file *base, int flags, int *out_flags) {
    (void)self;
    File *file = (File *)base;
    memset(file, 0, sizeof(File));
    sqlite3_vfs *real_vfs = base_vfs();
    sqlite3_file *real = calloc(1, (size_t)real_vfs->szOsFile);
    if (!real) return SQLITE_NOMEM;
    int rc = real_vfs->xOpen(real_vfs, name, real, flags, out_flags);
    if (rc != SQLITE_OK) {
        // SQLite closes a file whose open failed only if it has methods.
        if (real->pMethods) real->pMethods->xClose(real);
        free(real);
        return rc;
    }
    file->real = real;
    file->name = name;
    file->is_wal = (flags & SQLITE_OPEN_WAL) != 0 && name != NULL;
    if (file->is_wal) {
        pthread_mutex_init(&file->lock, NULL);
        pthread_mutex_lock(&registry);
        file->next_wal = open_wals;
        open_wals = file;
        pthread_mutex_unlock(&registry);
    }
    int version = real->pMethods->iVersion;
    base->pMethods = &methods_by_version[version < 1 ? 1 : version > 3 ? 3 : version];
    return SQLITE_OK;
}

static int vfs_delete(sqlite3_vfs *self, const char *name, int sync_directory) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    return real->xDelete(real, name, sync_directory);
}

static int vfs_access(sqlite3_vfs *self, const char *name, int flags, int *out) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    return real->xAccess(real, name, flags, out);
}

static int vfs_full_pathname(sqlite3_vfs *self, const char *name, int size, char *out) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    return real->xFullPathname(real, name, size, out);
}

static void *vfs_dl_open(sqlite3_vfs *self, const char *name) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    return real->xDlOpen(real, name);
}

static void vfs_dl_error(sqlite3_vfs *self, int size, char *out) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    real->xDlError(real, size, out);
}

static void (*vfs_dl_sym(sqlite3_vfs *self, void *library, const char *symbol))(void) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    return real->xDlSym(real, library, symbol);
}

static void vfs_dl_close(sqlite3_vfs *self, void *library) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    real->xDlClose(real, library);
}

static int vfs_randomness(sqlite3_vfs *self, int size, char *out) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    return real->xRandomness(real, size, out);
}

static int vfs_sleep(sqlite3_vfs *self, int microseconds) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    return real->xSleep(real, microseconds);
}

static int vfs_current_time(sqlite3_vfs *self, double *out) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    return real->xCurrentTime(real, out);
}

static int vfs_get_last_error(sqlite3_vfs *self, int size, char *out) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    return real->xGetLastError ? real->xGetLastError(real, size, out) : 0;
}

static int vfs_current_time_int64(sqlite3_vfs *self, sqlite3_int64 *out) {
    (void)self;
    sqlite3_vfs *real = base_vfs();
    if (real->iVersion >= 2 && real->xCurrentTimeInt64) return real->xCurrentTimeInt64(real, out);
    double days = 0;
    int rc = real->xCurrentTime(real, &days);
    *out = (sqlite3_int64)(days * 86400000.0);
    return rc;
}

static void register_vfs(void) {
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    registration_base = real;
    if (!real) {
        registration_result = SQLITE_ERROR;
        return;
    }
    memset(&vfs, 0, sizeof(vfs));
    vfs.iVersion = 2;
    vfs.szOsFile = (int)sizeof(File);
    vfs.mxPathname = real->mxPathname;
    vfs.zName = SLUICE_WAL_VFS_NAME;
    vfs.xOpen = vfs_open;
    vfs.xDelete = vfs_delete;
    vfs.xAccess = vfs_access;
    vfs.xFullPathname = vfs_full_pathname;
    vfs.xDlOpen = vfs_dl_open;
    vfs.xDlError = vfs_dl_error;
    vfs.xDlSym = vfs_dl_sym;
    vfs.xDlClose = vfs_dl_close;
    vfs.xRandomness = vfs_randomness;
    vfs.xSleep = vfs_sleep;
    vfs.xCurrentTime = vfs_current_time;
    vfs.xGetLastError = vfs_get_last_error;
    vfs.xCurrentTimeInt64 = vfs_current_time_int64;
    for (int version = 1; version <= 3; version++) {
        methods_by_version[version] = methods;
        methods_by_version[version].iVersion = version;
    }
    registration_result = sqlite3_vfs_register(&vfs, 0);
}

int sluice_wal_vfs_register(void) {
    pthread_once(&registered, register_vfs);
    return registration_result;
}
