// The power-loss VFS of CSluiceTestVFS.h. Test support only: never linked
// into the product.
//
// Model. A file's contents on the disk are what they were at its last
// xSync; every write or truncate since then is in the page cache only and
// is kept here twice: the bytes it replaced (to undo it) and the bytes it
// wrote (to let it through anyway, as a disk that wrote part of its cache
// would). A file created since tracking started exists after the power
// loss only if its directory was synced, which SQLite's unix VFS does at
// the first sync of a WAL or journal it opened with SQLITE_OPEN_CREATE
// (and after a deletion asked with dirSync). A deletion is taken as durable
// at once: SQLite deletes a WAL only after checkpointing and syncing it into
// the database, so the WAL coming back would change nothing.
#include "CSluiceTestVFS.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// One unsynced write or truncate of a file.
typedef struct Change {
    int truncate;               // 1: truncated to `offset`; 0: `length` bytes written at `offset`
    sqlite3_int64 offset;
    sqlite3_int64 size_before;  // the file's size before the change
    unsigned char *old_bytes;   // what the change replaced, up to the old end of file
    sqlite3_int64 old_length;
    unsigned char *new_bytes;   // a write's bytes
    int length;
} Change;

/// A file under the tracked directory and its changes since its last sync.
typedef struct Tracked {
    char *path;
    int entry_synced;           // its directory entry is on the disk
    Change *changes;
    int count, capacity;
    struct Tracked *next;
} Tracked;

/// An open tracked file: this header, then the unix VFS's own file. A file
/// outside the tracked directory is the unix VFS's file alone.
typedef struct File {
    sqlite3_file base;
    const char *path;           // SQLite keeps the name valid until xClose
    int syncs_directory;        // the unix VFS syncs the directory at its first sync
    sqlite3_file *real;
} File;

// Everything below is guarded by `lock`.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *unix_vfs;
static sqlite3_vfs vfs;
static char directory[PATH_MAX];
static size_t directory_length;
static int tracking, cut, open_files;
static long long operations, cut_at;
static Tracked *files;

static int is_under(const char *path) {
    return tracking && path && strncmp(path, directory, directory_length) == 0 && path[directory_length] == '/';
}

static Tracked *find(const char *path) {
    for (Tracked *file = files; file; file = file->next) {
        if (strcmp(file->path, path) == 0) return file;
    }
    return NULL;
}

static void free_changes(Tracked *file) {
    for (int i = 0; i < file->count; i++) {
        free(file->changes[i].old_bytes);
        free(file->changes[i].new_bytes);
    }
    file->count = 0;
}

static void forget_all(void) {
    while (files) {
        Tracked *next = files->next;
        free_changes(files);
        free(files->changes);
        free(files->path);
        free(files);
        files = next;
    }
}

/// Counts a write, truncate or sync of a tracked file; true when the power
/// is cut (by this operation or before it).
static int power_is_cut(void) {
    if (cut) return 1;
    operations++;
    if (cut_at > 0 && operations >= cut_at) cut = 1;
    return cut;
}

/// Records `change` of `file`, first reading the bytes it is about to
/// replace (from `offset` to the end of the range or of the file).
static int remember(File *file, Change change, sqlite3_int64 end) {
    Tracked *tracked = find(file->path);
    if (!tracked) {
        // Opened before tracking started again: not tracked.
        free(change.new_bytes);
        return SQLITE_OK;
    }
    int rc = file->real->pMethods->xFileSize(file->real, &change.size_before);
    if (rc != SQLITE_OK) return rc;
    if (end > change.size_before) end = change.size_before;
    change.old_length = end > change.offset ? end - change.offset : 0;
    if (change.old_length > 0) {
        change.old_bytes = malloc((size_t)change.old_length);
        if (!change.old_bytes) return SQLITE_NOMEM;
        rc = file->real->pMethods->xRead(file->real, change.old_bytes, (int)change.old_length, change.offset);
        if (rc != SQLITE_OK) { free(change.old_bytes); return rc; }
    }
    if (tracked->count == tracked->capacity) {
        int capacity = tracked->capacity ? tracked->capacity * 2 : 64;
        Change *grown = realloc(tracked->changes, (size_t)capacity * sizeof(Change));
        if (!grown) { free(change.old_bytes); free(change.new_bytes); return SQLITE_NOMEM; }
        tracked->changes = grown;
        tracked->capacity = capacity;
    }
    tracked->changes[tracked->count++] = change;
    return SQLITE_OK;
}

// MARK: - The methods of a tracked file

static int file_close(sqlite3_file *handle) {
    File *file = (File *)handle;
    int rc = file->real->pMethods->xClose(file->real);
    pthread_mutex_lock(&lock);
    open_files--;
    pthread_mutex_unlock(&lock);
    return rc;
}

static int file_read(sqlite3_file *handle, void *buffer, int amount, sqlite3_int64 offset) {
    File *file = (File *)handle;
    pthread_mutex_lock(&lock);
    int dead = cut && is_under(file->path);
    pthread_mutex_unlock(&lock);
    if (dead) return SQLITE_IOERR_READ;
    return file->real->pMethods->xRead(file->real, buffer, amount, offset);
}

static int file_write(sqlite3_file *handle, const void *data, int amount, sqlite3_int64 offset) {
    File *file = (File *)handle;
    pthread_mutex_lock(&lock);
    int rc = SQLITE_OK;
    if (is_under(file->path)) {
        if (power_is_cut()) {
            rc = SQLITE_IOERR_WRITE;
        } else {
            Change change = {.offset = offset, .length = amount, .new_bytes = malloc((size_t)amount)};
            if (!change.new_bytes) {
                rc = SQLITE_NOMEM;
            } else {
                memcpy(change.new_bytes, data, (size_t)amount);
                rc = remember(file, change, offset + amount);
            }
        }
    }
    if (rc == SQLITE_OK) rc = file->real->pMethods->xWrite(file->real, data, amount, offset);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int file_truncate(sqlite3_file *handle, sqlite3_int64 size) {
    File *file = (File *)handle;
    pthread_mutex_lock(&lock);
    int rc = SQLITE_OK;
    if (is_under(file->path)) {
        rc = power_is_cut() ? SQLITE_IOERR_TRUNCATE : remember(file, (Change){.truncate = 1, .offset = size}, LLONG_MAX);
    }
    if (rc == SQLITE_OK) rc = file->real->pMethods->xTruncate(file->real, size);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int file_sync(sqlite3_file *handle, int flags) {
    File *file = (File *)handle;
    pthread_mutex_lock(&lock);
    int rc = SQLITE_OK;
    int tracked = is_under(file->path);
    if (tracked && power_is_cut()) rc = SQLITE_IOERR_FSYNC;
    if (rc == SQLITE_OK) rc = file->real->pMethods->xSync(file->real, flags);
    if (rc == SQLITE_OK && tracked) {
        Tracked *synced = find(file->path);
        if (synced) free_changes(synced);
        if (file->syncs_directory) {
            // One directory is tracked: its entries all reach the disk.
            for (Tracked *other = files; other; other = other->next) other->entry_synced = 1;
        }
    }
    if (rc == SQLITE_OK) file->syncs_directory = 0;
    pthread_mutex_unlock(&lock);
    return rc;
}

static int file_size(sqlite3_file *handle, sqlite3_int64 *size) {
    File *file = (File *)handle;
    return file->real->pMethods->xFileSize(file->real, size);
}

static int file_lock(sqlite3_file *handle, int level) {
    File *file = (File *)handle;
    return file->real->pMethods->xLock(file->real, level);
}

static int file_unlock(sqlite3_file *handle, int level) {
    File *file = (File *)handle;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int file_check_reserved(sqlite3_file *handle, int *reserved) {
    File *file = (File *)handle;
    return file->real->pMethods->xCheckReservedLock(file->real, reserved);
}

static int file_control(sqlite3_file *handle, int op, void *argument) {
    File *file = (File *)handle;
    return file->real->pMethods->xFileControl(file->real, op, argument);
}

static int file_sector_size(sqlite3_file *handle) {
    File *file = (File *)handle;
    return file->real->pMethods->xSectorSize(file->real);
}

static int file_characteristics(sqlite3_file *handle) {
    File *file = (File *)handle;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

// The WAL index lives in shared memory, never synced: passed through.
static int file_shm_map(sqlite3_file *handle, int region, int size, int extend, void volatile **memory) {
    File *file = (File *)handle;
    return file->real->pMethods->xShmMap(file->real, region, size, extend, memory);
}

static int file_shm_lock(sqlite3_file *handle, int offset, int count, int flags) {
    File *file = (File *)handle;
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

static void file_shm_barrier(sqlite3_file *handle) {
    File *file = (File *)handle;
    file->real->pMethods->xShmBarrier(file->real);
}

static int file_shm_unmap(sqlite3_file *handle, int delete_flag) {
    File *file = (File *)handle;
    return file->real->pMethods->xShmUnmap(file->real, delete_flag);
}

// Version 2: no memory-mapped reads, so every read comes through xRead.
static const sqlite3_io_methods methods = {
    2, file_close, file_read, file_write, file_truncate, file_sync, file_size, file_lock, file_unlock,
    file_check_reserved, file_control, file_sector_size, file_characteristics, file_shm_map, file_shm_lock,
    file_shm_barrier, file_shm_unmap, NULL, NULL,
};

// MARK: - The VFS

static int vfs_open(sqlite3_vfs *self, const char *name, sqlite3_file *handle, int flags, int *out_flags) {
    (void)self;
    pthread_mutex_lock(&lock);
    int wrap = is_under(name) && !(flags & SQLITE_OPEN_DELETEONCLOSE);
    int dead = wrap && cut;
    pthread_mutex_unlock(&lock);
    if (!wrap) return unix_vfs->xOpen(unix_vfs, name, handle, flags, out_flags);
    File *file = (File *)handle;
    file->base.pMethods = NULL;
    if (dead) return SQLITE_CANTOPEN;
    file->real = (sqlite3_file *)(file + 1);
    file->path = name;
    file->syncs_directory = (flags & SQLITE_OPEN_CREATE)
        && (flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL));
    int existed = access(name, F_OK) == 0;
    int rc = unix_vfs->xOpen(unix_vfs, name, file->real, flags, out_flags);
    if (!file->real->pMethods) return rc;
    file->base.pMethods = &methods;
    pthread_mutex_lock(&lock);
    open_files++;
    if (rc == SQLITE_OK && !find(name)) {
        Tracked *tracked = calloc(1, sizeof(Tracked));
        if (tracked) tracked->path = strdup(name);
        if (!tracked || !tracked->path) {
            free(tracked);
            rc = SQLITE_NOMEM;
        } else {
            tracked->entry_synced = existed;
            tracked->next = files;
            files = tracked;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int vfs_delete(sqlite3_vfs *self, const char *name, int sync_directory) {
    (void)self;
    pthread_mutex_lock(&lock);
    int rc = SQLITE_OK;
    int tracked = is_under(name);
    if (tracked && cut) rc = SQLITE_IOERR_DELETE;
    if (rc == SQLITE_OK) rc = unix_vfs->xDelete(unix_vfs, name, sync_directory);
    if (rc == SQLITE_OK && tracked) {
        for (Tracked **link = &files; *link; link = &(*link)->next) {
            if (strcmp((*link)->path, name) == 0) {
                Tracked *gone = *link;
                *link = gone->next;
                free_changes(gone);
                free(gone->changes);
                free(gone->path);
                free(gone);
                break;
            }
        }
        if (sync_directory) {
            for (Tracked *other = files; other; other = other->next) other->entry_synced = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int vfs_access(sqlite3_vfs *self, const char *name, int flags, int *result) {
    (void)self;
    return unix_vfs->xAccess(unix_vfs, name, flags, result);
}

static int vfs_full_pathname(sqlite3_vfs *self, const char *name, int size, char *out) {
    (void)self;
    return unix_vfs->xFullPathname(unix_vfs, name, size, out);
}

int sluice_testvfs_install(void) {
    pthread_mutex_lock(&lock);
    int rc = SQLITE_OK;
    if (!unix_vfs) {
        sqlite3_vfs *found = sqlite3_vfs_find(NULL);
        if (!found) {
            rc = SQLITE_ERROR;
        } else {
            // The unix VFS's other methods ignore the VFS they are given.
            vfs = *found;
            vfs.zName = "sluice-power-loss";
            vfs.szOsFile = (int)sizeof(File) + found->szOsFile;
            vfs.pNext = NULL;
            vfs.xOpen = vfs_open;
            vfs.xDelete = vfs_delete;
            vfs.xAccess = vfs_access;
            vfs.xFullPathname = vfs_full_pathname;
            unix_vfs = found;
            rc = sqlite3_vfs_register(&vfs, 1);
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int sluice_testvfs_start(const char *path, long long cut_operation) {
    char resolved[PATH_MAX];
    if (!realpath(path, resolved)) return -1;
    pthread_mutex_lock(&lock);
    forget_all();
    strcpy(directory, resolved);
    directory_length = strlen(resolved);
    tracking = 1;
    cut = 0;
    operations = 0;
    cut_at = cut_operation;
    pthread_mutex_unlock(&lock);
    return 0;
}

long long sluice_testvfs_operations(void) {
    pthread_mutex_lock(&lock);
    long long count = operations;
    pthread_mutex_unlock(&lock);
    return count;
}

int sluice_testvfs_is_cut(void) {
    pthread_mutex_lock(&lock);
    int result = cut;
    pthread_mutex_unlock(&lock);
    return result;
}

void sluice_testvfs_cut(void) {
    pthread_mutex_lock(&lock);
    cut = 1;
    pthread_mutex_unlock(&lock);
}

void sluice_testvfs_stop(void) {
    pthread_mutex_lock(&lock);
    forget_all();
    tracking = 0;
    cut = 0;
    pthread_mutex_unlock(&lock);
}

/// SplitMix64: the next pseudo-random number of `state`.
static unsigned long long next_random(unsigned long long *state) {
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// Puts one file back to its synced contents, then lets some of its
/// unsynced changes through. Returns 0 or an errno.
static int lose(Tracked *file, unsigned long long *random, int keep_percent, int tear) {
    if (!file->entry_synced) return unlink(file->path) == 0 || errno == ENOENT ? 0 : errno;
    int descriptor = open(file->path, O_RDWR | O_CLOEXEC);
    if (descriptor < 0) return errno == ENOENT ? 0 : errno;
    int error = 0;
    for (int i = file->count - 1; i >= 0 && !error; i--) {
        Change *change = &file->changes[i];
        if (change->old_length > 0
            && pwrite(descriptor, change->old_bytes, (size_t)change->old_length, change->offset) != change->old_length) {
            error = EIO;
        } else if (ftruncate(descriptor, change->size_before) != 0) {
            error = errno;
        }
    }
    for (int i = 0; i < file->count && !error; i++) {
        Change *change = &file->changes[i];
        if ((int)(next_random(random) % 100) >= keep_percent) continue;
        if (change->truncate) {
            if (ftruncate(descriptor, change->offset) != 0) error = errno;
            continue;
        }
        size_t length = (size_t)change->length;
        // A torn write: a whole number of 512-byte sectors reached the disk.
        if (tear && length > 512 && next_random(random) % 2) length = 512 * (1 + next_random(random) % ((length - 1) / 512));
        if (pwrite(descriptor, change->new_bytes, length, change->offset) != (ssize_t)length) error = EIO;
    }
    close(descriptor);
    return error;
}

int sluice_testvfs_power_loss(unsigned long long seed, int keep_percent, int tear) {
    pthread_mutex_lock(&lock);
    int error = open_files > 0 ? EBUSY : 0;
    unsigned long long random = seed;
    for (Tracked *file = files; file && !error; file = file->next) {
        error = lose(file, &random, keep_percent, tear);
        // The WAL index is rebuilt from the WAL by the next connection.
        char shm[PATH_MAX + 8];
        snprintf(shm, sizeof shm, "%s-shm", file->path);
        unlink(shm);
    }
    forget_all();
    tracking = 0;
    cut = 0;
    pthread_mutex_unlock(&lock);
    return error;
}
