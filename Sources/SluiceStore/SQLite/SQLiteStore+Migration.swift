@_spi(Machinery) import SluiceRecords

/// A mapping that changed since the store's tables were made: a column's
/// type is migrated (the table rebuilt, as sqlite-utils' `transform` does);
/// a key that differs from the table's primary key is refused before
/// anything is written.
extension SQLiteStore {
    /// One stored column: its name, declared type and position in the
    /// primary key (0 when not part of it).
    struct StoredColumn {
        var name: String
        var declared: String
        var primaryKey: Int
    }

    /// The columns of table `name` as stored, in order.
    func storedColumnInfo(_ name: String) throws(StoreError) -> [StoredColumn] {
        let statement = try SQLiteStatement(
            connection, "SELECT name, type, pk FROM pragma_table_info(?1) ORDER BY cid",
            "reading the columns of \(quoted(name))")
        statement.bind(1, name)
        var columns: [StoredColumn] = []
        while try statement.step("reading the columns of \(quoted(name))") {
            columns.append(
                StoredColumn(name: statement.text(0), declared: statement.text(1), primaryKey: Int(statement.int64(2))))
        }
        return columns
    }

    /// Refuses a mapping whose key is not the stored table's primary key (a
    /// table sluice did not make, without one, gets a unique index instead).
    func checkKey(_ schema: TableSchema, _ stored: [StoredColumn]) throws(StoreError) {
        let primaryKey = stored.filter { $0.primaryKey > 0 }.sorted { $0.primaryKey < $1.primaryKey }.map {
            $0.name.lowercased()
        }
        let key = schema.keyColumns.map { schema.columns[$0].name.lowercased() }
        guard !primaryKey.isEmpty, primaryKey != key else { return }
        throw StoreError(
            path: connection.path, action: "checking table \(quoted(schema.name)) against the mapping",
            message: "the table is keyed by (\(primaryKey.joined(separator: ", "))) but the mapping's key is "
                + "(\(key.joined(separator: ", "))); a table's key cannot change: import into a new store, or drop "
                + "table \(quoted(schema.name)) (and its link tables) first",
            code: 0)
    }

    /// Rebuilds the table when a mapped column's stored type reads back as
    /// another attribute type than the mapping's (`integer` changed to
    /// `string`, say): a new table with the mapping's types, the rows
    /// copied (SQLite's type affinity converts what converts without loss,
    /// and keeps the rest as it is), the old table dropped, its indexes made
    /// again. Returns a line saying what changed, or nil. O(rows), once.
    func migrateTypes(_ schema: TableSchema, _ stored: [StoredColumn]) throws(StoreError) -> String? {
        var changes: [String] = []
        for column in stored {
            guard let mapped = schema.columns.first(where: { $0.name.lowercased() == column.name.lowercased() }),
                Self.affinityType(declared: column.declared) != Self.affinityType(declared: mapped.type.sqlType)
            else { continue }
            changes.append(
                "\(column.name) \(column.declared.isEmpty ? "(no type)" : column.declared) → \(mapped.type.sqlType)")
        }
        guard !changes.isEmpty else { return nil }
        // The copy fires no trigger: the kept counts are counted again.
        try forgetDanglingCounts()
        let table = quoted(schema.name)
        let action = "migrating the column types of \(table)"
        let indexes = try connection.strings(
            "SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = \(literal(schema.name)) AND sql IS NOT NULL",
            column: 0, action)
        let keyNames = schema.keyColumns.map { quoted(schema.columns[$0].name) }
        var definitions = stored.map { column -> String in
            guard let index = schema.columns.firstIndex(where: { $0.name.lowercased() == column.name.lowercased() })
            else {
                return "\(quoted(column.name)) \(column.declared)"
            }
            return columnDefinition(
                schema.columns[index], key: schema.keyColumns.contains(index) ? schema.keyColumns.count : 0)
        }
        if schema.keyColumns.count > 1 { definitions.append("PRIMARY KEY (\(keyNames.joined(separator: ", ")))") }
        let names = stored.map { quoted($0.name) }.joined(separator: ", ")
        let rebuilt = quoted("_sluice_rebuilt_" + schema.name)
        try connection.execute("CREATE TABLE \(rebuilt) (\(definitions.joined(separator: ", ")))", action)
        try connection.execute("INSERT INTO \(rebuilt) (\(names)) SELECT \(names) FROM \(table)", action)
        try connection.execute("DROP TABLE \(table)", action)
        try connection.execute("ALTER TABLE \(rebuilt) RENAME TO \(table)", action)
        for index in indexes { try connection.execute(index, action) }
        return
            "\(schema.name): the mapping changed column types (\(changes.joined(separator: ", "))); the table was rebuilt with them"
    }
}
