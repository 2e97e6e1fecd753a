import SluiceBatching
@_spi(Machinery) import SluiceRecords
import SluiceStore

/// A store that keeps its tables in dictionaries, for the tests only: the
/// third store behind ``ImportStore``, a ``RowStore`` whose primitives the
/// conformance tests hold to the SQLite store's results (counts, warnings
/// and every row). One run's view of a ``MemoryDatabase``: each transaction
/// works on a copy of the state and commits it to the database (a dry run
/// never does), so that a failed group leaves nothing, as in SQLite.
final class MemoryStore: RowStore, KeepsNoDigests {
    let database: MemoryDatabase
    let options: StoreOptions
    let dryRun: Bool
    /// The state as this run sees it: the database's, with this run's
    /// uncommitted writes.
    var state: MemoryState
    /// The entity tables' schemas as ``prepare(_:links:)`` and the batches
    /// gave them (a batch with more columns widens its table first).
    var schemas: [String: TableSchema] = [:]
    /// The link tables, as ``prepare(_:links:)`` made them.
    var linkSchemas: [LinkSchema] = []
    /// The tables whose keys this run records as seen.
    var seenTracked: Set<String> = []
    /// The tables this run deleted rows of by key: their link rows are then
    /// written only for sources still stored.
    var deletedByKey: Set<String> = []

    /// The state before the open group's transaction.
    private var groupStart: MemoryState?

    var shouldAbort: (@Sendable () -> Bool)?
    /// What ``prepare(_:links:)`` changed in existing tables, one line each.
    var migrations: [String] = []
    var sideWrites = SideWrites()

    /// What messages call the store.
    var name: String { database.name }

    init(_ database: MemoryDatabase, options: StoreOptions, dryRun: Bool) {
        self.database = database
        self.options = options
        self.dryRun = dryRun
        state = database.state
    }

    /// Runs `body` as one transaction: on success its writes are committed
    /// (kept in this store only, in a dry run), on error undone. O(rows of
    /// the tables it writes) for the copy the first write makes.
    func transaction<Result>(_ body: () throws(StoreError) -> Result) throws(StoreError) -> Result {
        let before = state
        do {
            let result = try body()
            if !dryRun { database.commit(state) }
            return result
        } catch {
            state = before
            throw error
        }
    }

    /// An error of this store doing `action`.
    func failure(_ action: String, _ message: String) -> StoreError {
        StoreError(path: database.name, action: action, message: message, code: 0)
    }

    /// The interruption ``shouldAbort`` asks for.
    func interruption(_ action: String) -> StoreError {
        StoreError(path: database.name, action: action, message: "cancelled", cause: .interrupted)
    }

    /// Nothing runs long enough to need stopping: ``shouldAbort`` is asked
    /// before every commit.
    func interrupt() {}
    /// No page cache: batches keep their size.
    func pageWrites() -> PageWrites? { nil }
    func cacheFittedTables(_ names: [String]) throws(StoreError) -> Set<String> { [] }

    // MARK: - Checkpoints

    func checkpoint(for input: String) throws(StoreError) -> Checkpoint? { state.checkpoints[input] }

    func clearCheckpoints(_ inputs: [String]) throws(StoreError) {
        try transaction { for input in inputs { state.checkpoints[input] = nil } }
    }

    // MARK: - Applying batches

    func beginGroup() throws(StoreError) { groupStart = state }

    func saveCheckpoint(_ checkpoint: Checkpoint) throws(StoreError) {
        state.checkpoints[checkpoint.input] = checkpoint
    }

    func commitGroup() throws(StoreError) {
        if !dryRun { database.commit(state) }
        groupStart = nil
    }

    func rollbackGroup() {
        if let groupStart { state = groupStart }
        groupStart = nil
    }

    /// The memory store keeps no index to drop for a bulk load.
    func beginBulkLinks(_ link: LinkSchema) throws(StoreError) -> Bool { false }
    func endBulkLinks(_ link: LinkSchema) throws(StoreError) {}

    /// Nothing can read the tables while the store thread writes them: the
    /// pipeline counts every dangling reference at the end.
    func makeReferenceCounter() -> (any ReferenceCounter)? { nil }
}
