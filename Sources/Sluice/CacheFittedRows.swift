/// The rows of a table's next batch in the key-ordered apply of a store
/// with a page cache of its own (SQLite), so that the pages the batch's
/// transaction dirties fit that cache.
///
/// Rows applied in key order to a table that holds rows across its whole
/// key range land on scattered pages: on the 2,000,000-event store, a change
/// file's batch of 5,000 events dirtied about 5,400 pages of 16 KiB against a
/// cache of 512, so SQLite spilled dirty pages to the WAL in the middle of
/// the transaction, a spilled page changed again overwrote its frame, and
/// the commit read and wrote again every frame after the first one
/// overwritten: each page written twice and read once more
/// (docs/nightly-sync.md). Each batch's pages written (a spill's included)
/// are measured, and the table's later batches hold as many rows as write
/// half the cache; rows appended to a table's end write a page per tens of
/// rows, so a first import's batches grow back to ``BatchLimits/maxRows``.
struct CacheFittedRows: Sendable, Equatable {
    /// The table the bound was measured on.
    let table: String
    /// Rows its next batch holds at most.
    let rows: Int

    /// Rows of each batch of a table that holds rows when the apply starts
    /// (``ImportStore/cacheFittedTables(_:)``), until one of its batches is
    /// measured (the two after the first are cut while it is applied): 256
    /// scattered rows dirty about 280 pages of a 512-page cache on the
    /// 2,000,000-event store. A table empty at the start appends: its
    /// batches start at ``BatchLimits/maxRows`` and are measured as they go.
    static let firstRows = 256
    /// Rows a batch holds at least, however many pages one row writes (a
    /// record of several MiB writes hundreds of overflow pages; the batch's
    /// byte bound cuts such rows anyway).
    static let leastRows = 16
    /// How much a table's batches may grow from one batch to the next: a
    /// batch of unchanged rows writes nothing, and the next may change
    /// every row it holds.
    static let growth = 4

    /// The bound of `table` after one of its batches of `applied` rows
    /// wrote `pages` pages into a cache of `cachePages`: as many rows as
    /// write half the cache at that batch's pages per row, at most `growth`
    /// times `applied`, between ``leastRows`` and `maxRows`. O(1).
    init(table: String, applied: Int, wrote pages: Int, cachePages: Int, maxRows: Int) {
        self.table = table
        let fitting = max(1, applied) * max(1, cachePages / 2) / max(1, pages)
        rows = max(Self.leastRows, min(fitting, Self.growth * max(1, applied), maxRows))
    }
}
