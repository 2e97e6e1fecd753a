import SluiceRecords

/// Tuning of the SQLite store.
public struct StoreOptions: Sendable, Equatable {
    /// SQLite page cache, in bytes (`PRAGMA cache_size`).
    public var pageCacheBytes: Int = 8 << 20
    /// The page size of a store being created (`PRAGMA page_size`, a power of
    /// two from 512 to 65,536); an existing store keeps its own. Measured on
    /// 2,000,000 generated events (1 GB), 16 KiB against SQLite's 4 KiB: new
    /// store 35.4 s against 37.2 s, unchanged re-import 29.7 against 31.0 s,
    /// update file 12.5 against 13.5 s (9% more bytes written), store 782
    /// against 803 MB; the end-of-run dangling-reference scan reads a quarter
    /// as many pages. 4 KiB pages suit a store that mostly takes change files
    /// (2,000,000 events: the change file wrote 1,064 MB against 1,484, the
    /// first import 2,789 against 2,565; docs/nightly-sync.md).
    public var pageSize: Int = 16_384
    /// Keys looked up by one execution of the lookup statement; a batch of up
    /// to this many rows costs one query.
    public var lookupKeys: Int = 10_000
    /// The WAL's pages at which a commit waits until the WAL is copied into
    /// the database, so that the next transaction starts it again; a
    /// thread copies it in passes of a quarter of this meanwhile
    /// (`SQLiteCheckpointer`). 0: no copy before the store closes. SQLite's
    /// automatic checkpoint defaults to 1,000; 10,000 (up to 40 MB of WAL at
    /// 4 KiB pages, 160 MB at 16 KiB) imported 200,000 generated events 4%
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
