import CSluiceSQLite3
import SluiceRecords

/// Delete-missing in constant memory: each batch also records its keys in a
/// per-entity table of keys seen by the run; after a complete run, one DELETE
/// removes the stored rows (within the entity's scope) whose keys are not
/// there.
extension SQLiteStore {
    /// The table holding the keys a run has seen for `schema`'s entity.
    static func seenTable(_ entity: String) -> String { "_sluice_seen_" + entity }

    /// Prepares key tracking for every entity with delete-missing, and for
    /// the parents its delete scope names: creates the seen-keys tables,
    /// emptied unless the run resumes an earlier one.
    public func startTrackingSeenKeys(_ schemas: [TableSchema], resuming: Bool) throws(StoreError) {
        let deleting = schemas.filter { ($0.deleteMissing ?? options.deleteMissing) && !$0.keyColumns.isEmpty }
        let parents = Set(deleting.compactMap { $0.deleteScopeParent?.targetTable })
        for schema in schemas where !schema.keyColumns.isEmpty && (deleting.contains { $0.name == schema.name } || parents.contains(schema.name)) {
            seenTracked.insert(schema.name)
            let table = quoted(Self.seenTable(schema.name))
            let columns = schema.keyColumns.map { quoted(schema.columns[$0].name) }
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS \(table) (\(columns.joined(separator: ", ")), "
                    + "PRIMARY KEY (\(columns.joined(separator: ", ")))) WITHOUT ROWID",
                "creating the seen-keys table of \(quoted(schema.name))")
            if !resuming { try connection.execute("DELETE FROM \(table)", "emptying \(table)") }
        }
    }

    /// Records the batch's keys as seen. One insert per distinct key, in key
    /// order.
    func markSeen(
        _ rows: RowArena, _ order: [Int], _ bytes: UnsafeBufferPointer<UInt8>, _ table: TableState
    ) throws(StoreError) {
        let schema = table.schema
        if table.seen == nil {
            let columns = schema.keyColumns.map { quoted(schema.columns[$0].name) }
            let parameters = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            table.seen = try connection.prepare(
                "INSERT OR IGNORE INTO \(quoted(Self.seenTable(schema.name))) (\(columns.joined(separator: ", "))) VALUES (\(parameters))",
                "preparing the seen-keys insert of \(quoted(schema.name))")
        }
        for row in order {
            sqlite3_reset(table.seen)
            for (position, column) in schema.keyColumns.enumerated() {
                bind(table.seen, Int32(position + 1), rows[row, column], bytes)
            }
            let code = sqlite3_step(table.seen)
            if code != SQLITE_DONE { throw connection.error("recording seen keys of \(quoted(schema.name))", code) }
        }
    }

    /// Deletes the stored rows of `schema`'s entity, within its delete scope,
    /// whose keys the run did not see, and the links from them in `links`,
    /// in one transaction. Call only after every input was read without
    /// error, then ``stopTrackingSeenKeys()``. Returns the number of rows
    /// deleted.
    public func deleteMissing(_ schema: TableSchema, links: [LinkSchema] = []) throws(StoreError) -> Int {
        let table = quoted(schema.name)
        let seen = quoted(Self.seenTable(schema.name))
        let match = schema.keyColumns.map { "s.\(quoted(schema.columns[$0].name)) = \(table).\(quoted(schema.columns[$0].name))" }
        var conditions = ["NOT EXISTS (SELECT 1 FROM \(seen) s WHERE \(match.joined(separator: " AND ")))"]
        var arguments: [String] = []
        for (column, test) in schema.deleteScope {
            let name = "\(table).\(quoted(schema.columns[column].name))"
            switch test {
            case .exists(let present): conditions.append("\(name) IS \(present ? "NOT " : "")NULL")
            case .oneOf(let values):
                conditions.append("CAST(\(name) AS TEXT) IN (\(values.map { _ in "?" }.joined(separator: ", ")))")
                arguments += values
            case .noneOf(let values):
                conditions.append("(\(name) IS NULL OR CAST(\(name) AS TEXT) NOT IN (\(values.map { _ in "?" }.joined(separator: ", "))))")
                arguments += values
            }
        }
        if let parent = schema.deleteScopeParent {
            let column = "\(table).\(quoted(schema.columns[parent.column].name))"
            conditions.append("\(column) IN (SELECT \(quoted(parent.targetKey)) FROM \(quoted(Self.seenTable(parent.targetTable))))")
        }
        try connection.execute("BEGIN IMMEDIATE", "starting delete-missing of \(table)")
        do throws(StoreError) {
            let statement = try connection.prepare(
                "DELETE FROM \(table) WHERE \(conditions.joined(separator: " AND "))", "preparing delete-missing of \(table)")
            defer { sqlite3_finalize(statement) }
            for (index, argument) in arguments.enumerated() {
                sqlite3_bind_text(statement, Int32(index + 1), argument, -1, sluice_sqlite_transient())
            }
            let code = sqlite3_step(statement)
            if code != SQLITE_DONE { throw connection.error("deleting missing rows of \(table)", code) }
            let deleted = Int(sqlite3_changes(connection.handle))
            for link in links where link.sourceTable == schema.name && deleted > 0 {
                let match = zip(link.sourceColumns, link.sourceKeys).map { "s.\(quoted($0.1)) = l.\(quoted($0.0.name))" }
                try connection.execute(
                    "DELETE FROM \(quoted(link.name)) AS l WHERE NOT EXISTS (SELECT 1 FROM \(table) s WHERE \(match.joined(separator: " AND ")))",
                    "deleting the links of deleted rows of \(table)")
            }
            try connection.execute("COMMIT", "committing delete-missing of \(table)")
            return deleted
        } catch {
            _ = try? connection.execute("ROLLBACK", "rolling back delete-missing")
            throw error
        }
    }

    /// Drops the seen-keys tables once every delete-missing ran.
    public func stopTrackingSeenKeys() throws(StoreError) {
        for name in seenTracked.sorted() {
            if let state = tables[name] {
                sqlite3_finalize(state.seen)
                state.seen = nil
            }
            let seen = quoted(Self.seenTable(name))
            try connection.execute("DROP TABLE IF EXISTS \(seen)", "dropping \(seen)")
        }
        seenTracked = []
    }
}
