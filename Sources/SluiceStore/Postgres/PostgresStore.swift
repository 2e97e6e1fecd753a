import SluiceBatching
import SluiceInput
@_spi(Machinery) import SluiceRecords

/// The PostgreSQL store: one table per entity keyed by the entity's key,
/// written through libpq with set-based statements.
///
/// Each batch is copied (binary `COPY`) into a temporary staging table, one
/// row per key, then merged by one `INSERT … SELECT … ON CONFLICT (key) DO
/// UPDATE … WHERE (stored) IS DISTINCT FROM (new)` per set of present
/// columns, so unchanged rows get no new row version. A group of batches
/// and its checkpoint commit in one transaction. Rows go in key order and
/// conflicts resolve on the key, so several importers can write one
/// database at once.
package final class PostgresStore: RowStore {
    let connection: PostgresConnection
    /// What libpq was given, for a second connection.
    let conninfo: String
    let options: StoreOptions
    var tables: [String: Table] = [:]
    /// The link tables, as ``prepare(_:links:)`` made them, and their staging.
    var linkSchemas: [LinkSchema] = []
    var linkStages: [String: LinkStage] = [:]
    /// The link tables whose batches are copied straight into them
    /// (``loadLinksDirectly(_:_:_:)``): empty at their first batch, between
    /// ``beginBulkLinks(_:)`` and ``endBulkLinks(_:)``, until a link is
    /// found stored.
    var bulkLinks: Set<String> = []
    /// The tables whose keys this run records as seen.
    var seenTracked: Set<String> = []
    package internal(set) var migrations: [String] = []
    package internal(set) var sideWrites = SideWrites()
    package var shouldAbort: (@Sendable () -> Bool)?
    /// The ledger id of the run this store began
    /// (``beginRun(inputs:options:resumeCommand:)``), nil before (and in a
    /// dry run, which records none): the digests' last save asks the ledger
    /// whether another run overlapped it.
    var runID: Int64?
    /// The tables whose written keys this run logs
    /// (``startVoidingWrites(_:)``), empty when it logs none.
    var voidingTables: [String] = []
    /// Numbers the temporary staging tables this connection made.
    var stagingTables = 0
    /// The staging tables filled in the open transaction: one filled again
    /// is emptied first; the others are empty, since each commit or
    /// rollback empties them (``emptiedAtCommit``).
    var stagedInTransaction: Set<String> = []

    /// How staging tables are made: emptied in place by each commit (one
    /// `TRUNCATE` per batch gave each a new file, 0.7 ms a batch).
    static let emptiedAtCommit = "ON COMMIT DELETE ROWS"

    /// Per entity table: its schema, column types and staging table.
    final class Table {
        var schema: TableSchema
        var types: [PostgresType]
        /// The temporary table batches are copied into, and how many
        /// columns it was made for (a zero-config table grows).
        var stage: String?
        var stageColumns = 0
        /// Whether this run deleted rows of the table by key: its link rows
        /// are then written only for sources still stored.
        var deletedByKey = false
        /// Whether the table's batches are copied straight into it
        /// (``loadDirectly(_:_:_:_:into:)``): it held no row when the run
        /// first met it, and no batch has found a key stored since.
        var loadsDirectly = false
        /// The schema of the batch in the staging table whose stubs are not
        /// made yet (see ``stubReferences(_:_:)``).
        var unstubbed: TableSchema?

        init(schema: TableSchema) {
            self.schema = schema
            types = schema.columns.map { PostgresType($0.type) }
        }
    }

    /// `conninfo` with its password, if any, replaced by `***`: what may be
    /// shown or recorded.
    package static func masked(_ conninfo: String) -> String { PostgresConnection.redacted(conninfo) }

    /// Connects to the database `conninfo` names and makes sluice's own
    /// table of checkpoints if it is missing.
    ///
    /// A `dryRun` writes nothing: the session runs in one transaction that
    /// closing the store rolls back. Until then it holds what a run's
    /// transactions would have held one batch at a time: row locks on every
    /// row it updated or deleted (a concurrent importer writing them
    /// waits), `ACCESS EXCLUSIVE` on tables it created, migrated or whose
    /// link index it rebuilt (their readers wait too), and sluice's schema
    /// lock once it changed the schema; other readers see the database as
    /// it was.
    package init(conninfo: String, options: StoreOptions = StoreOptions(), dryRun: Bool = false) throws(StoreError) {
        // `postgresql:` alone (no `//`) leaves everything to the PG* variables.
        self.conninfo = conninfo == "postgresql:" || conninfo == "postgres:" ? "" : conninfo
        connection = try PostgresConnection(self.conninfo)
        try connection.commitAsynchronously()
        self.options = options
        if dryRun { try connection.beginDryRun("starting the dry run's transaction") }
        try withSchemaLock("creating the checkpoint table") { () throws(StoreError) in
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS _sluice_checkpoints (
                  input text PRIMARY KEY, records bigint NOT NULL, bytes bigint NOT NULL,
                  size bigint, modified bigint, head_crc bigint)
                """, "creating the checkpoint table")
        }
    }

    /// The server and database, for messages.
    package var name: String { connection.name }

    /// Runs `body` in a transaction holding sluice's schema lock: two
    /// importers making the same table at once would otherwise collide in
    /// the catalog.
    func withSchemaLock(_ action: String, _ body: () throws(StoreError) -> Void) throws(StoreError) {
        try connection.begin(action)
        do throws(StoreError) {
            try connection.execute("SELECT pg_advisory_xact_lock(\(Self.schemaLock))", action)
            try body()
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// The advisory lock key of schema changes ("sluice" in ASCII).
    static let schemaLock = 0x736C_7569_6365

    package func interrupt() { connection.cancel() }

    /// The server's buffers are not the importer's to size: batches keep
    /// their size.
    package func pageWrites() -> PageWrites? { nil }
    package func cacheFittedTables(_ names: [String]) throws(StoreError) -> Set<String> { [] }

    // MARK: - Checkpoints

    package func checkpoint(for input: String) throws(StoreError) -> Checkpoint? {
        let result = try connection.execute(
            "SELECT records, bytes, size, modified, head_crc FROM _sluice_checkpoints WHERE input = $1",
            "reading the checkpoint", [input])
        guard result.rowCount > 0 else { return nil }
        let identity =
            result.value(0, 2) == nil
            ? nil
            : InputIdentity(
                size: Int64(result.int(0, 2)), modified: Int64(result.int(0, 3)), headChecksum: Int64(result.int(0, 4)))
        return Checkpoint(input: input, records: result.int(0, 0), bytes: Int64(result.int(0, 1)), identity: identity)
    }

    package func clearCheckpoints(_ inputs: [String]) throws(StoreError) {
        for input in inputs {
            try connection.execute("DELETE FROM _sluice_checkpoints WHERE input = $1", "clearing checkpoints", [input])
        }
    }

    package func saveCheckpoint(_ checkpoint: Checkpoint) throws(StoreError) {
        try connection.execute(
            "INSERT INTO _sluice_checkpoints (input, records, bytes, size, modified, head_crc) VALUES ($1, $2, $3, $4, $5, $6) "
                + "ON CONFLICT (input) DO UPDATE SET records = excluded.records, bytes = excluded.bytes, "
                + "size = excluded.size, modified = excluded.modified, head_crc = excluded.head_crc",
            "saving the checkpoint",
            [
                checkpoint.input, String(checkpoint.records), String(checkpoint.bytes),
                checkpoint.identity.map { String($0.size) },
                checkpoint.identity.map { String($0.modified) }, checkpoint.identity.map { String($0.headChecksum) },
            ])
    }

    // MARK: - Applying batches

    package func beginGroup() throws(StoreError) {
        try connection.begin("starting a batch transaction")
        // A dry run's savepoints commit nothing, so nothing empties the
        // staging tables: they stay marked and are emptied when refilled.
        if !connection.isDryRun { stagedInTransaction = [] }
    }

    package func commitGroup() throws(StoreError) { try connection.commit("committing a batch") }

    /// Rolls back, and forgets the stubs of batches the rollback undid.
    package func rollbackGroup() {
        connection.rollback()
        for table in tables.values { table.unstubbed = nil }
    }

    func table(for schema: TableSchema) throws(StoreError) -> Table {
        if let state = tables[schema.name], state.schema.columns.count == schema.columns.count { return state }
        // A zero-config table grows mid-run, inside the batch's transaction.
        try connection.execute("SELECT pg_advisory_xact_lock(\(Self.schemaLock))", "taking the schema lock")
        try ensureTable(schema)
        guard let state = tables[schema.name] else {
            throw StoreError(
                path: name, action: "preparing table \(pgQuoted(schema.name))", message: "the table was not made",
                code: 0)
        }
        return state
    }

}
