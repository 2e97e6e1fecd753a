import CSluiceSQLite3
import SluiceBatching

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Copies the store's WAL into the database file on a thread and a
/// connection of its own, so that the writer goes on while the copy and
/// its two syncs run.
///
/// SQLite's automatic checkpoint runs in the committing thread: every
/// `--wal-checkpoint` pages a commit waited for the whole copy, the sync of
/// the WAL before it and of the database after it. Here the writer's WAL
/// hook starts a passive checkpoint on this thread each
/// ``passPages`` pages the WAL grew, and the writer waits only when the
/// WAL reaches the limit (the same `--wal-checkpoint` pages): it then asks
/// for one more pass and waits for it, between two of its transactions, so
/// that every frame is copied and its next transaction starts the WAL from
/// the beginning again (the WAL stays as large as before). That last pass
/// copies only what the others had not.
///
/// What is synced, and when, is SQLite's own checkpoint's (the WAL before
/// the copy, the database after it), so a power loss costs what it did
/// (docs/durability.md). A pass that fails leaves its frames in the WAL,
/// as SQLite's automatic checkpoint does, and the next pass copies them.
///
/// After each pass the thread starts the writeback of the database file's
/// and the WAL's dirty pages, without waiting for it: else the kernel
/// keeps them (they are far below its dirty-page thresholds) until the
/// sync of the pass the writer waits for at the limit, which then writes
/// back the whole limit's pages while the writer waits.
final class SQLiteCheckpointer: @unchecked Sendable {
    /// A pass starts each time the WAL has grown by this fraction of the
    /// limit, so that the pass the writer waits for at the limit has only
    /// the frames since the last one to copy when the disk keeps up. (With
    /// it, the 2,000,000-event change file waited 1.45 s in 3 waits of its
    /// 5.0 s, on a disk that did not keep up: the passes' threads spent most
    /// of their time in syncs and writeback.)
    ///
    /// With the writeback started after each pass, eight passes a limit:
    /// the 2,000,000-event change file at 4 KiB pages waited 0.80–0.86 s in
    /// its five waits with four passes and no writeback started, 0.48–0.63 s
    /// with it and eight (docs/nightly-sync.md, "The writer's waits at the
    /// WAL's limit").
    static let passesPerLimit = 8

    private let connection: SQLiteConnection
    private let limitPages: Int
    private let passPages: Int
    private var mutex = pthread_mutex_t()
    private var changed = pthread_cond_t()
    /// A pass is wanted: the thread starts one when it is free.
    private var requested = false
    private var stopping = false
    /// Passes begun and passes ended, counted, so that the writer can wait
    /// for a pass that began after its commit.
    private var begun = 0
    private var ended = 0
    /// The WAL's pages when the last pass began: the next starts once the
    /// WAL has grown ``passPages`` past them.
    private var pagesAtLastPass = 0
    private var worker: Worker?
    /// The database file and its WAL, whose writeback each pass starts;
    /// each opened read-only by the thread at its first pass (-1 until
    /// then, or when it cannot be), closed by ``stop()``.
    private let files: [String]
    private var descriptors: [Int32]
    /// Writebacks started, counted by the thread: what tests read.
    private(set) var writebacksStarted = 0
    /// The writer's connection whose WAL hook calls this one.
    private var writer: OpaquePointer?

    /// Opens a second connection to the store at `path` (which must be in
    /// WAL mode) and starts its thread; `limitPages` is the WAL's size at
    /// which a commit waits for a whole checkpoint. Nil when the system
    /// gives no thread: the store then leaves the checkpoints to SQLite.
    init?(path: String, limitPages: Int) throws(StoreError) {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&changed, nil)
        self.limitPages = limitPages
        passPages = max(1, limitPages / Self.passesPerLimit)
        files = [path, path + "-wal"]
        descriptors = files.map { _ in -1 }
        connection = try SQLiteConnection(path: path)
        sqlite3_busy_timeout(connection.handle, 5_000)
        try connection.execute("PRAGMA synchronous=NORMAL", "setting the checkpointer's synchronous")
        // Reads the header, so that the connection knows the store is in WAL mode.
        _ = try connection.strings("PRAGMA schema_version", column: 0, "opening the checkpointer's connection")
        // The thread holds the checkpointer until ``stop()``.
        do { worker = try Worker { self.run() } } catch { return nil }
    }

    deinit {
        pthread_cond_destroy(&changed)
        pthread_mutex_destroy(&mutex)
    }

    /// Makes `writer` call this checkpointer after each commit, in place of
    /// SQLite's automatic checkpoint.
    func install(on writer: SQLiteConnection) {
        self.writer = writer.handle
        sqlite3_wal_hook(
            writer.handle,
            { context, _, _, pages in
                Unmanaged<SQLiteCheckpointer>.fromOpaque(context!).takeUnretainedValue().committed(walPages: Int(pages))
                return SQLITE_OK
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Ends the thread (after the pass under way) and closes its connection.
    /// The writer's connection must close after it, so that its close, the
    /// last, copies what is left and removes the WAL.
    func stop() {
        guard let worker else { return }
        if let writer { sqlite3_wal_hook(writer, nil, nil) }
        pthread_mutex_lock(&mutex)
        stopping = true
        pthread_cond_broadcast(&changed)
        pthread_mutex_unlock(&mutex)
        worker.join()
        self.worker = nil
        connection.close()
        for descriptor in descriptors where descriptor >= 0 { close(descriptor) }
        descriptors = files.map { _ in -1 }
    }

    /// The writer committed and the WAL holds `walPages` pages: a pass is
    /// started once the WAL has grown by ``passPages``; at the limit the
    /// writer waits for a pass that begins after this commit.
    private func committed(walPages: Int) {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        // A smaller WAL than at the last pass: the writer started it again.
        if walPages < pagesAtLastPass { pagesAtLastPass = 0 }
        if walPages >= limitPages {
            let wanted = begun + 1
            requested = true
            pagesAtLastPass = walPages
            pthread_cond_broadcast(&changed)
            while ended < wanted && !stopping { pthread_cond_wait(&changed, &mutex) }
        } else if walPages - pagesAtLastPass >= passPages && !requested {
            requested = true
            pagesAtLastPass = walPages
            pthread_cond_broadcast(&changed)
        }
    }

    /// The thread: a passive checkpoint each time one is requested, until
    /// ``stop()``.
    private func run() {
        pthread_mutex_lock(&mutex)
        while true {
            while !requested && !stopping { pthread_cond_wait(&changed, &mutex) }
            if !requested { break }
            requested = false
            begun += 1
            pthread_mutex_unlock(&mutex)
            // Errors are left as SQLite's automatic checkpoint leaves them:
            // the frames stay in the WAL, and the next pass copies them.
            sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            startWriteback()
            pthread_mutex_lock(&mutex)
            ended += 1
            pthread_cond_broadcast(&changed)
        }
        pthread_mutex_unlock(&mutex)
    }

    /// Starts writing back the dirty pages of the database file and the
    /// WAL: those the pass copied into the file, those the writer appended
    /// to the WAL since. Two system calls.
    private func startWriteback() {
        for index in files.indices {
            if descriptors[index] < 0 { descriptors[index] = open(files[index], O_RDONLY | O_CLOEXEC) }
            if descriptors[index] >= 0 && sluice_start_writeback(descriptors[index]) == 0 { writebacksStarted += 1 }
        }
    }
}
