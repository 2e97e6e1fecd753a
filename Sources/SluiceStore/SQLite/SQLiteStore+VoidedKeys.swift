import CSluiceSQLite3
import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// Per-key voiding of the digest set (docs/record-digests.md, "Other
/// writers"): a run under another fingerprint (a change file under its own
/// mapping) logs the key of every row it inserts, updates or deletes into
/// `_sluice_voided_keys(tbl, k0, k1, …)` (one column per key column, the
/// widest key's; narrower keys end in NULLs) through temporary triggers,
/// three per table; at its end the set, valid again, keeps every unit but
/// those that produced a logged key, which the next run that skips parses.
/// A row written costs one more insert (an append), in such runs only; the
/// log is read, and its duplicates dropped, by the next run that skips.
/// The triggers insert `OR FAIL`: under the default `ABORT` every statement
/// that fires one may abort half done, so SQLite copied each page the
/// statement changed into a statement journal to undo it (2.9 GB of
/// temporary-file writes for the 2,000,000-event change file,
/// docs/nightly-sync.md); a run's transaction rolls back whole on any error.
///
/// A link table's key in the log is its source's, and a source's link rows
/// are written together: the store logs the source once, when it deletes
/// or inserts any of its rows (``logWrittenSource(_:_:)``), into a
/// temporary table typed like the link table's source columns (so that a
/// key is stored as the link row stores it), whose distinct keys go into
/// the log at the run's end. A trigger on each link row had cost a frame
/// and an insert per row: the store thread of the 2,000,000-event change
/// file ran 4,071 M instructions then, 3,902 M now (docs/nightly-sync.md).
/// A run stopped before its end leaves the set invalid, whatever its log
/// holds.
extension SQLiteStore {
    /// The temporary triggers of the log, three a table.
    private static func triggerName(_ table: Int, _ kind: String) -> String {
        quoted("_sluice_written_\(table)_\(kind)")
    }

    /// The temporary table of link table `link`'s written sources.
    private static func writtenSourcesTable(_ link: String) -> String {
        "temp." + quoted("_sluice_written_sources_" + link)
    }

    package func startVoidingWrites(_ tables: [WrittenTable]) throws(StoreError) -> Bool {
        let action = "logging the keys the run writes"
        // A rebuilt table changed every row's stored values unlogged.
        guard migrations.isEmpty, try tableExists("_sluice_digest_state") else { return false }
        for table in tables where try !tableExists(table.name) { return false }
        try prepareDigestTables(action)
        let width = max(1, tables.map(\.keyColumns.count).max() ?? 1)
        let columns = try voidedKeyColumns(action)
        let links = linkSchemas.filter { link in tables.contains { $0.name == link.name } }
        let triggered = tables.filter { table in !links.contains { $0.name == table.name } }
        // The tables the set covers stay covered: the key of every row it writes is logged.
        var statements = ["UPDATE _sluice_digest_state SET valid = 0"]
        statements += (max(1, columns)..<max(width, columns)).map {
            "ALTER TABLE _sluice_voided_keys ADD COLUMN k\($0)"
        }
        for link in links {
            let definitions = link.sourceColumns.map { "\(quoted($0.name)) \($0.type.sqlType) NOT NULL" }
            let names = link.sourceColumns.map { quoted($0.name) }.joined(separator: ", ")
            statements += [
                "DROP TABLE IF EXISTS \(Self.writtenSourcesTable(link.name))",
                "CREATE TABLE \(Self.writtenSourcesTable(link.name)) "
                    + "(\(definitions.joined(separator: ", ")), PRIMARY KEY (\(names))) WITHOUT ROWID",
            ]
        }
        for (index, table) in triggered.enumerated() {
            for (kind, row) in [("insert", "NEW"), ("update", "OLD"), ("delete", "OLD")] {
                let values =
                    [literal(table.name)] + table.keyColumns.map { "\(row).\(quoted($0))" }
                    + Array(repeating: "NULL", count: max(width, columns) - table.keyColumns.count)
                statements.append(
                    "CREATE TEMP TRIGGER \(Self.triggerName(index, kind)) AFTER \(kind.uppercased()) ON "
                        + "main.\(quoted(table.name)) BEGIN INSERT OR FAIL INTO _sluice_voided_keys VALUES ("
                        + values.joined(separator: ", ") + "); END")
            }
        }
        // One call: each statement changes the schema, which makes every
        // prepared statement prepare again.
        try connection.execute(statements.joined(separator: ";\n"), action)
        loggedTables = triggered.count
        for link in links {
            let parameters = (1...link.sourceColumns.count).map { "?\($0)" }.joined(separator: ", ")
            writtenSources[link.name] = try SQLiteStatement(
                connection, "INSERT OR IGNORE INTO \(Self.writtenSourcesTable(link.name)) VALUES (\(parameters))",
                action)
        }
        return true
    }

    /// Logs the source that `bindSource` binds (to parameters 1 to the
    /// source's width) as written in link table `link`, when the run logs
    /// that table's written keys: once a source, however many of its rows
    /// the run deletes or inserts. One insert into a temporary table.
    func logWrittenSource(_ link: String, _ bindSource: (OpaquePointer) -> Void) throws(StoreError) {
        guard let insert = writtenSources[link] else { return }
        try Self.logSource(with: insert, bindSource)
    }

    /// Runs `insert`, one of ``writtenSources``' statements, for the source
    /// that `bindSource` binds.
    static func logSource(with insert: SQLiteStatement, _ bindSource: (OpaquePointer) -> Void) throws(StoreError) {
        insert.rewind()
        bindSource(insert.handle)
        _ = try insert.run("logging the keys the run writes")
    }

    /// The key columns of `_sluice_voided_keys` (after `tbl`).
    private func voidedKeyColumns(_ action: String) throws(StoreError) -> Int {
        try connection.strings("PRAGMA table_info(_sluice_voided_keys)", column: 1, action).count - 1
    }

    /// Moves the written sources of each logged link table into the log,
    /// with the log's width (NULLs after a narrower key). One `INSERT …
    /// SELECT` a link table. The temporary tables stay, as the triggers do:
    /// they go with the connection, and dropping them would make every
    /// statement prepare again.
    private func logWrittenSources(_ action: String) throws(StoreError) {
        let sources = writtenSources.keys.sorted()
        guard !sources.isEmpty else { return }
        let columns = try voidedKeyColumns(action)
        for link in sources {
            guard let schema = linkSchemas.first(where: { $0.name == link }) else { continue }
            let names = schema.sourceColumns.map { quoted($0.name) }
            let padding = Array(repeating: "NULL", count: max(0, columns - names.count))
            try connection.execute(
                "INSERT OR FAIL INTO _sluice_voided_keys SELECT "
                    + ([literal(link)] + names + padding).joined(separator: ", ")
                    + " FROM \(Self.writtenSourcesTable(link))", action)
        }
    }

    package func keepDigests(voidingWritten limit: Int) throws(StoreError) -> Bool {
        let action = "voiding the keys the run wrote"
        let triggers = try connection.strings(
            "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger' AND name LIKE '\\_sluice\\_written\\_%' "
                + "ESCAPE '\\'", column: 0, action)
        // A table rebuilt during the run took its triggers with it. The
        // triggers stay otherwise: they go with the connection, and dropping
        // them would make every statement prepare again.
        let triggered = Int(triggers.first ?? "") == 3 * loggedTables
        if triggered { try logWrittenSources(action) }
        writtenSources = [:]
        let logged = try connection.strings("SELECT count(*) FROM _sluice_voided_keys", column: 0, action)
        guard triggered, let count = Int(logged.first ?? ""), count <= limit
        else {
            let drops = (0..<loggedTables).flatMap { index in
                ["insert", "update", "delete"].map { "DROP TRIGGER IF EXISTS \(Self.triggerName(index, $0))" }
            }
            try connection.execute(drops.joined(separator: ";\n"), action)
            loggedTables = 0
            return false
        }
        try connection.execute("UPDATE _sluice_digest_state SET valid = 1", action)
        loggedTables = 0
        return true
    }

    package func voidedKeys(limit: Int) throws(StoreError) -> [VoidedKey]? {
        let action = "reading the voided keys"
        guard try tableExists("_sluice_voided_keys") else { return [] }
        let keys = try SQLiteStatement(
            connection, "SELECT DISTINCT * FROM _sluice_voided_keys LIMIT \(limit + 1)", action)
        let columns = Int(sqlite3_column_count(keys.handle))
        var cells = RowArena(columnCount: max(1, columns - 1))
        var voided: [VoidedKey] = []
        while try keys.step(action) {
            // A key's cells are never NULL: the NULLs after them pad a narrower key.
            var width = 0
            while width + 1 < columns && !keys.isNull(Int32(width + 1)) { width += 1 }
            cells.removeAll()
            cells.beginRow(ordinal: 0)
            for column in 0..<width { cells.set(column, Self.cell(keys.handle, Int32(column + 1), &cells)) }
            voided.append(
                VoidedKey(table: keys.text(0), key: UnitKeys.key(of: cells, row: 0, columns: Array(0..<width))))
            if voided.count > limit { return nil }
        }
        return voided
    }

    /// The key cell `column` of `statement`'s row, as its storage class
    /// gives it: the cell the mapping bound there (an integer key is stored
    /// as an integer, a text one as text).
    private static func cell(_ statement: OpaquePointer, _ column: Int32, _ cells: inout RowArena) -> Cell {
        let count = Int(sqlite3_column_bytes(statement, column))
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            return cells.text(UnsafeRawBufferPointer(start: sqlite3_column_text(statement, column), count: count))
        case SQLITE_BLOB:
            return cells.blob(UnsafeRawBufferPointer(start: sqlite3_column_blob(statement, column), count: count))
        default: return .absent
        }
    }
}
