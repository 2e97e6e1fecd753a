import SluiceRecords

/// Tuning of the SQLite store.
public struct StoreOptions: Sendable, Equatable {
    /// SQLite page cache, in bytes (`PRAGMA cache_size`).
    public var pageCacheBytes: Int = 8 << 20
    /// The page size of a store being created (`PRAGMA page_size`, a power of
    /// two from 512 to 65,536); an existing store keeps its own. SQLite's 4
    /// KiB: a nightly sync rewrites the pages its scattered changes fall on,
    /// and a 4 KiB page is a quarter of a 16 KiB one. `Benchmarks/sync.py`,
    /// 2,000,000 events, 4 against 16 KiB, one build: the next day with
    /// `--delete-missing` wrote 862 MB against 2,026, the change file alone
    /// 1,055 against 1,387 (CPU 3.59 s against 4.02); the first import 2,439
    /// MB against 2,534 at the same CPU (alternating pairs in
    /// docs/nightly-sync.md, "The page size, a third time"), the store 930
    /// MB against 922. (16 KiB was the default until the record digests'
    /// pages were sized to stay whole on a 4 KiB page.)
    public var pageSize: Int = 4_096
    /// Keys looked up by one execution of the lookup statement; a batch of up
    /// to this many rows costs one query.
    public var lookupKeys: Int = 10_000
    /// The WAL's pages at which a commit waits until the WAL is copied into
    /// the database, so that the next transaction starts it again; a
    /// thread copies it in passes of a quarter of this meanwhile
    /// (`SQLiteCheckpointer`). 0: no copy before the store closes. SQLite's
    /// automatic checkpoint defaults to 1,000; 10,000 (up to 40 MB of WAL at
    /// the default 4 KiB pages, 160 MB at 16 KiB) imported 200,000 generated events 4%
    /// faster (5.02–5.18 s against 5.35 s, key order, 4 KiB pages) with the
    /// same bytes written.
    public var walCheckpointPages: Int = 10_000
    /// Runs the ledger keeps: when a run ends, older ones are forgotten, and
    /// with them the checkpoints of inputs no kept run names (a nightly job
    /// reading a dated file each night would otherwise add a checkpoint row
    /// a night forever). 1,000 is nearly three years of nightly runs; a
    /// year of them simulated at 200,000 events (Benchmarks/year.py) is in
    /// docs/nightly-sync.md. At least 1.
    public var ledgerRuns: Int = 1_000
    /// The write mode of entities whose mapping sets none (settled into
    /// each entity's table when the mapping is compiled for a run).
    public var mode: WriteMode = .upsert
    /// Whether entities whose mapping does not say otherwise track the keys a
    /// run sees, so that a run's delete-missing removes the rest (settled
    /// like ``mode``).
    public var deleteMissing = false

    /// The defaults: 8 MiB page cache, lookups of up to 10,000 keys, a WAL
    /// checkpoint every 10,000 pages.
    public init() {}
}
