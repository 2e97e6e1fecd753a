#ifndef CSLUICE_SQLITE_WAL_H
#define CSLUICE_SQLITE_WAL_H

/// The name of the VFS that ``sluice_wal_vfs_register`` registers.
#define SLUICE_WAL_VFS_NAME "sluice-wal"

/// Registers, once per process, a SQLite VFS named ``SLUICE_WAL_VFS_NAME``
/// that gathers a connection's consecutive writes to its WAL into one
/// write(2) each 120 KiB. It is never made the process's default VFS:
/// only the connections that name it use it, and each of their files
/// wraps a file of the default VFS at the time it is opened.
///
/// SQLite writes each WAL frame in two calls (its 24-byte header, then
/// the page), so a store thread spends a system call and its per-call
/// cost in the kernel for every 2 KiB it commits. Each write of a commit's
/// frame (its page, and its header, which SQLite writes again last when the
/// transaction rewrote frames it had written) writes everything gathered
/// before it returns: a failure (a full disk) fails the commit, before
/// SQLite publishes it. The frames of a transaction not yet committed
/// (pages that did not fit the page cache) are written before the
/// connection reads, syncs, sizes, truncates or closes the WAL, and before
/// any connection of the same database takes or releases a lock of the WAL
/// index or passes its memory barrier; what could not be written is dropped
/// when the writer releases the WAL's write lock (it belongs to a
/// transaction that did not commit, and another process may then write
/// there). A process killed with bytes gathered loses only frames of a
/// transaction it had not committed.
/// Returns a SQLite result code.
int sluice_wal_vfs_register(void);

#endif
