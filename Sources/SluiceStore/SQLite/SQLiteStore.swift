import CSluiceSQLite3
import SluiceBatching
import SluiceInput
@_spi(Machinery) import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The SQLite store: one table per entity, keyed by the entity's key.
///
/// Each batch is applied as a find-or-create merge: several occurrences of
/// a key combined (present fields of later ones win), rows sorted by key, existing rows fetched with
/// one `IN` query, then new keys inserted, changed rows updated and unchanged
/// rows left untouched, in key order. A group of batches and its checkpoint
/// commit in one transaction. WAL journal, `synchronous=NORMAL`: batch
/// commits are synced by the WAL checkpoints; the ledger writes that start
/// and end a run sync everything before them (docs/durability.md).
package final class SQLiteStore: RowStore {
    let connection: SQLiteConnection
    let options: StoreOptions
    /// The store's page size in bytes: ``StoreOptions/pageSize`` for a store
    /// this run creates, an existing store's own otherwise.
    let pageSize: Int
    /// The pages the page cache holds: its bytes over the store's page size,
    /// at least SQLite's floor of 10.
    let cachePages: Int
    var tables: [String: TableState] = [:]
    /// The tables whose keys this run records as seen (see
    /// ``trackSeenKeys(of:resuming:)``).
    var seenTracked: Set<String> = []
    /// How many tables' written keys the run logs by triggers
    /// (``startVoidingWrites(_:)``).
    var loggedTables = 0
    /// The link tables whose written sources the run logs itself, by name:
    /// each with the insert of a source into its temporary table
    /// (``startVoidingWrites(_:)``).
    var writtenSources: [String: SQLiteStatement] = [:]
    /// What ``prepare(_:links:)`` changed in existing tables to follow the
    /// mapping (column types migrated), one line each.
    package private(set) var migrations: [String] = []
    /// The link tables, as ``prepare(_:links:)`` made them.
    var linkSchemas: [LinkSchema] = []
    /// Link rows, stub rows and dropped children this store wrote.
    package internal(set) var sideWrites = SideWrites()
    /// Cached stub inserts, by target table.
    var stubStatements: [String: SQLiteStatement] = [:]
    /// Cached deletes of a source's links, by link table.
    var linkDeleteStatements: [String: LinkDeletes] = [:]
    /// The sources deleted by key whose links wait for their link table's
    /// batches, by link table (``unlinkLater()``).
    var deferredUnlinks: [String: DeferredUnlinks] = [:]
    /// Whether the links of the sources deleted by key wait for the link
    /// batches (the key-ordered apply) rather than go with the row.
    var unlinkingLater = false
    /// Whether this run's digest saves go to the set's pages rather than to
    /// its changes (``startDigests(fingerprint:secret:fresh:)``).
    var unitsToPages = false
    private var checkpointStatement: SQLiteStatement?
    /// Copies the WAL into the database file off the writer's thread (none
    /// in a dry run, or with `walCheckpointPages` 0).
    private var checkpointer: SQLiteCheckpointer?

    /// Asked just before each commit; when it returns true the transaction
    /// is rolled back and ``apply(_:)`` throws (used for cancellation).
    package var shouldAbort: (@Sendable () -> Bool)?

    /// The store's path.
    package var name: String { connection.path }

    /// Interrupts the statement running on another thread, if any; the
    /// transaction then rolls back. Safe to call from any thread.
    package func interrupt() {
        if let handle = connection.handle { sqlite3_interrupt(handle) }
    }

    /// Per-table state: known columns and cached statements.
    final class TableState {
        var schema: TableSchema
        var lookup: SQLiteStatement?
        var lookupColumns = 0
        /// Reads the row with the greatest key (``followsStoredKeys``).
        var greatest: SQLiteStatement?
        var writes: [WriteKey: SQLiteStatement] = [:]
        var seen: SQLiteStatement?
        /// Deletes a row by key (change files; the links from it go by
        /// ``SQLiteStore/linkDeletes(_:)``).
        var deleteByKey: SQLiteStatement?
        /// Whether this run deleted rows of the table by key: its link rows
        /// are then written only for sources still stored.
        var deletedByKey = false
        /// Whether a key is stored (``stores(_:_:_:cells:_:)``).
        var keyExists: SQLiteStatement?
        /// What ``keyExists`` does, for its errors: made once with the
        /// statement, since it runs once a link row.
        var keyCheck = ""

        init(schema: TableSchema) { self.schema = schema }

        func finalize() {
            lookup = nil
            greatest = nil
            writes = [:]
            seen = nil
            deleteByKey = nil
            keyExists = nil
        }
    }

    /// Opens or creates the store at `path` and sets its journal and cache.
    ///
    /// A `dryRun` writes nothing: it holds the write lock in one transaction
    /// that ``close()`` rolls back (readers go on seeing the store as it
    /// was; other writers wait), leaves the journal mode as it is, and for a
    /// `path` that does not exist works in a private temporary database
    /// that SQLite deletes on close, so nothing is created there.
    package init(path: String, options: StoreOptions = StoreOptions(), dryRun: Bool = false) throws(StoreError) {
        connection = try SQLiteConnection(path: path, scratch: dryRun && access(path, F_OK) != 0)
        self.options = options
        // Wait for readers first: switching to WAL needs the file to itself.
        sqlite3_busy_timeout(connection.handle, 5_000)
        // Only a new, empty database takes it; it must come before WAL.
        try connection.execute("PRAGMA page_size=\(options.pageSize)", "setting the page size")
        if !dryRun { try connection.execute("PRAGMA journal_mode=WAL", "switching to WAL") }
        try connection.execute("PRAGMA synchronous=NORMAL", "setting synchronous")
        // The checkpointer, made last, does it instead for a store that commits.
        try connection.execute("PRAGMA wal_autocheckpoint=0", "setting the WAL checkpoint")
        try connection.execute("PRAGMA cache_size=\(-(options.pageCacheBytes / 1024))", "setting the page cache")
        let pageSize = try connection.strings("PRAGMA page_size", column: 0, "reading the page size").first
        self.pageSize = max(512, pageSize.flatMap { Int($0) } ?? options.pageSize)
        cachePages = max(10, options.pageCacheBytes / self.pageSize)
        if dryRun { try connection.beginDryRun("starting the dry run's transaction") }
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS _sluice_checkpoints (
              input TEXT PRIMARY KEY, records INTEGER NOT NULL, bytes INTEGER NOT NULL,
              size INTEGER, modified INTEGER, head_crc INTEGER)
            """, "creating the checkpoint table")
        checkpointStatement = try SQLiteStatement(
            connection,
            "INSERT INTO _sluice_checkpoints (input, records, bytes, size, modified, head_crc) VALUES (?, ?, ?, ?, ?, ?) "
                + "ON CONFLICT(input) DO UPDATE SET records = excluded.records, bytes = excluded.bytes, "
                + "size = excluded.size, modified = excluded.modified, head_crc = excluded.head_crc",
            "preparing the checkpoint statement")
        if !dryRun && options.walCheckpointPages > 0 {
            checkpointer = try SQLiteCheckpointer(path: path, limitPages: options.walCheckpointPages)
            if let checkpointer {
                checkpointer.install(on: connection)
            } else {
                // No thread for it: SQLite's own, on the writer's thread.
                try connection.execute(
                    "PRAGMA wal_autocheckpoint=\(options.walCheckpointPages)", "setting the WAL checkpoint")
            }
        }
    }

    deinit { close() }

    /// Finalises every statement and closes the database.
    package func close() {
        for table in tables.values { table.finalize() }
        tables = [:]
        stubStatements = [:]
        linkDeleteStatements = [:]
        deferredUnlinks = [:]
        checkpointStatement = nil
        checkpointer?.stop()
        checkpointer = nil
        connection.close()
    }

    // MARK: - Checkpoints

    /// The committed checkpoint of `input`, if any.
    package func checkpoint(for input: String) throws(StoreError) -> Checkpoint? {
        let statement = try SQLiteStatement(
            connection, "SELECT records, bytes, size, modified, head_crc FROM _sluice_checkpoints WHERE input = ?",
            "reading the checkpoint")
        statement.bind(1, input)
        guard try statement.step("reading the checkpoint") else { return nil }
        let identity =
            statement.isNull(2)
            ? nil
            : InputIdentity(size: statement.int64(2), modified: statement.int64(3), headChecksum: statement.int64(4))
        return Checkpoint(input: input, records: Int(statement.int64(0)), bytes: statement.int64(1), identity: identity)
    }

    /// Forgets the checkpoints of `inputs`: a run that does not resume starts
    /// them from the beginning.
    package func clearCheckpoints(_ inputs: [String]) throws(StoreError) {
        let statement = try SQLiteStatement(
            connection, "DELETE FROM _sluice_checkpoints WHERE input = ?", "clearing checkpoints")
        for input in inputs {
            statement.reset()
            statement.bind(1, input)
            try statement.run("clearing checkpoints")
        }
    }

    // MARK: - Schema

    package func prepare(_ schemas: [TableSchema], links: [LinkSchema] = []) throws(StoreError) {
        try connection.begin("starting the schema transaction")
        do throws(StoreError) {
            for schema in schemas { try ensureTable(schema) }
            for link in links { try ensureLinkTable(link) }
            try forgetDanglingCountsOfMissingTables()
            try finishLeftUnlinks(links)
            linkSchemas = links
            try connection.commit("committing the schema")
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// The columns of table `name` as stored, their types read back from the
    /// declared types by SQLite's affinity rules; nil when there is no such
    /// table.
    package func storedColumns(of name: String) throws(StoreError) -> [ColumnSchema]? {
        let stored = try storedColumnInfo(name)
        return stored.isEmpty
            ? nil : stored.map { ColumnSchema(name: $0.name, type: Self.attributeType(declared: $0.declared)) }
    }

    /// The attribute type of a column declared `declared`: its
    /// ``affinityType(declared:)``, but `json` for a text column whose
    /// declared type names JSON, as ``AttributeType/sqlType`` declares one.
    static func attributeType(declared: String) -> AttributeType {
        let type = affinityType(declared: declared)
        return type == .string && declared.uppercased().contains("JSON") ? .json : type
    }

    /// The attribute type whose values a column declared `declared` stores
    /// as they are (SQLite's affinity rules: INT, then CHAR/CLOB/TEXT, then
    /// REAL/FLOA/DOUB; BLOB and NUMERIC columns read back as text). Two
    /// columns of one such type store every value alike.
    static func affinityType(declared: String) -> AttributeType {
        let type = declared.uppercased()
        if type.contains("INT") { return .integer }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return .string }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return .double }
        return .string
    }

    /// Creates the table, or adds the columns it lacks. O(columns).
    private func ensureTable(_ schema: TableSchema) throws(StoreError) {
        let action = "creating table \(quoted(schema.name))"
        let existing = try connection.strings("PRAGMA table_info(\(quoted(schema.name)))", column: 1, action)
        let keyNames = schema.keyColumns.map { quoted(schema.columns[$0].name) }
        if existing.isEmpty {
            var definitions = schema.columns.enumerated().map { index, column in
                columnDefinition(column, key: schema.keyColumns.contains(index) ? schema.keyColumns.count : 0)
            }
            if schema.keyColumns.count > 1 { definitions.append("PRIMARY KEY (\(keyNames.joined(separator: ", ")))") }
            try connection.execute(
                "CREATE TABLE \(quoted(schema.name)) (\(definitions.joined(separator: ", ")))", action)
        } else {
            let known = Set(existing.map { $0.lowercased() })
            for index in schema.keyColumns where !known.contains(schema.columns[index].name.lowercased()) {
                throw StoreError(
                    path: connection.path, action: action,
                    message: "the existing table has no column \(quoted(schema.columns[index].name)) for the key",
                    code: 0)
            }
            let stored = try storedColumnInfo(schema.name)
            try checkKey(schema, stored)
            if let migration = try migrateTypes(schema, stored) { migrations.append(migration) }
            for column in schema.columns where !known.contains(column.name.lowercased()) {
                try connection.execute(
                    "ALTER TABLE \(quoted(schema.name)) ADD COLUMN \(columnDefinition(column, key: 0))",
                    "adding column \(quoted(column.name)) to \(quoted(schema.name))")
            }
            let primaryKey = try connection.strings(
                "SELECT name FROM pragma_table_info(\(literal(schema.name))) WHERE pk > 0 ORDER BY pk", column: 0,
                action)
            // A key that is not the table's primary key gets a unique index.
            if !keyNames.isEmpty && primaryKey != schema.keyColumns.map({ schema.columns[$0].name }) {
                try connection.execute(
                    "CREATE UNIQUE INDEX IF NOT EXISTS \(quoted("_sluice_key_" + schema.name)) "
                        + "ON \(quoted(schema.name)) (\(keyNames.joined(separator: ", ")))",
                    "indexing the key of \(quoted(schema.name))")
            }
        }
        let state = tables[schema.name] ?? TableState(schema: schema)
        if state.schema.columns.count != schema.columns.count { state.finalize() }
        state.schema = schema
        tables[schema.name] = state
    }

    /// A column's definition; `key` is the number of key columns when it is
    /// one of them (a lone integer key becomes the rowid), else 0.
    func columnDefinition(_ column: ColumnSchema, key: Int) -> String {
        var text = "\(quoted(column.name)) \(column.type.sqlType)"
        if key == 1 { text += column.type == .integer ? " PRIMARY KEY" : " PRIMARY KEY NOT NULL" }
        if key > 1 { text += " NOT NULL" }
        switch column.defaultValue {
        case .integer(let value): text += " DEFAULT \(value)"
        case .real(let value): text += " DEFAULT \(value)"
        case .text(let value): text += " DEFAULT \(literal(value))"
        case nil: break
        }
        return text
    }

    // MARK: - Applying batches

    package func beginGroup() throws(StoreError) { try connection.begin("starting a batch transaction") }
    package func commitGroup() throws(StoreError) { try connection.commit("committing a batch") }
    package func rollbackGroup() { connection.rollback() }

    private func table(for schema: TableSchema) throws(StoreError) -> TableState {
        if let state = tables[schema.name], state.schema.columns.count == schema.columns.count { return state }
        try ensureTable(schema)
        return tables[schema.name]!
    }

    package func saveCheckpoint(_ checkpoint: Checkpoint) throws(StoreError) {
        guard let statement = checkpointStatement else {
            throw StoreError(
                path: connection.path, action: "saving the checkpoint", message: "the store is closed", code: 0)
        }
        statement.reset()
        statement.bind(1, checkpoint.input)
        statement.bind(2, Int64(checkpoint.records))
        statement.bind(3, checkpoint.bytes)
        statement.bind(4, checkpoint.identity?.size)
        statement.bind(5, checkpoint.identity?.modified)
        statement.bind(6, checkpoint.identity?.headChecksum)
        try statement.run("saving the checkpoint")
    }

    /// The find-or-create merge of one batch: one lookup per
    /// ``StoreOptions/lookupKeys`` keys (none when every key follows the
    /// stored ones) and one write per new or changed row.
    package func merge(_ rows: RowArena, _ order: [Int], into schema: TableSchema) throws(StoreError) -> EntityCounts {
        let table = try table(for: schema)
        let keys = table.schema.keyColumns
        let mode = table.schema.mode
        var order = order
        var counts = EntityCounts()
        if !rows.deletions.isEmpty {
            // Deletions go first: a key deleted and written again in the
            // batch is then written as new.
            let deletions = order.filter { rows.isDeletion($0) }
            let rewritten = unlinkingLater ? Self.rewritten(rows, order, keys) : []
            order.removeAll { rows.isDeletion($0) }
            counts.deleted = try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
                try deleteKeys(rows, deletions, rewritten: rewritten, bytes, table)
            }
        }
        var status = [RowStatus](repeating: .new, count: order.count)
        try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
            if !keys.isEmpty, let first = order.first, !(try followsStoredKeys(rows, first, bytes, table)) {
                try lookUp(rows, order, bytes, table, mode, &status)
            }
            if mode == .updateOnly {
                for position in status.indices where status[position] == .new { status[position] = .skipped }
            }
            try write(rows, order, bytes, table, mode, status)
            if seenTracked.contains(table.schema.name) { try markSeen(rows, order, keys: keys, bytes, table) }
        }
        for state in status {
            switch state {
            case .new: counts.inserted += 1
            case .changed: counts.updated += 1
            case .unchanged: counts.unchanged += 1
            case .skipped: counts.skipped += 1
            }
        }
        return counts
    }

    enum RowStatus { case new, changed, unchanged, skipped }

    /// Which cached INSERT or UPDATE a row needs: the columns it sets from
    /// the batch and (replace mode) the columns it resets to their default;
    /// an insert's `rows`, how many rows one statement inserts.
    struct WriteKey: Hashable {
        var insert: Bool
        var present: ColumnMask
        var defaulted: ColumnMask
        var rows = 1
    }
}
