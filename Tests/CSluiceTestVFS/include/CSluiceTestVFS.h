#ifndef CSLUICE_TEST_VFS_H
#define CSLUICE_TEST_VFS_H

/// A SQLite VFS for tests that simulates a power loss: it wraps the default
/// (unix) VFS, keeps what each file under a chosen directory looked like at
/// its last xSync, and can put every such file back to that state, as a
/// machine that lost its page cache would find it after a reboot.
///
/// Registered as the process's default VFS, so that a store opened by the
/// library in the same process goes through it without any hook in the
/// product. Files outside the tracked directory are plain unix files.

/// Registers the VFS as the default one (idempotent). Returns a SQLite code.
int sluice_testvfs_install(void);

/// Starts tracking the files under `directory`, forgetting any earlier
/// tracking: files there now count as synced. Counts each write, truncate
/// and sync of those files; the `cut_at`-th (1-based; 0 never) and every
/// later file operation there fail with SQLITE_IOERR, as on a machine that
/// lost power at that moment. Returns 0, or -1 when `directory` is not one.
int sluice_testvfs_start(const char *directory, long long cut_at);

/// Operations (writes, truncates, syncs) counted since the start.
long long sluice_testvfs_operations(void);

/// Whether the power is cut (the armed operation came, or ``sluice_testvfs_cut``).
int sluice_testvfs_is_cut(void);

/// Cuts the power now: every later operation on a tracked file fails.
void sluice_testvfs_cut(void);

/// After every connection to the tracked files is closed: puts each file
/// back to its contents at its last sync, then lets through, in order, each
/// unsynced write or truncate with probability `keep_percent` (a write kept
/// may be torn at a 512-byte boundary when `tear` is set), as a disk that
/// wrote some of its cache in any order would. A file created since the
/// start whose directory was never synced is removed; the WAL index
/// (`-shm`, never synced) is removed. Deterministic for a `seed`. Stops
/// tracking. Returns 0, or an errno.
int sluice_testvfs_power_loss(unsigned long long seed, int keep_percent, int tear);

/// Stops tracking without losing anything.
void sluice_testvfs_stop(void);

#endif
