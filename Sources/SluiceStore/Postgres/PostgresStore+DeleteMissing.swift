@_spi(Machinery) import SluiceRecords

/// Delete-missing in PostgreSQL: each batch also records its keys in a
/// table of keys the run saw (a real table, so a killed run's keys survive
/// for its resumption); after a complete run one anti-join `DELETE` per
/// entity removes the stored rows within the entity's scope whose keys are
/// not there, and the links from them, in one transaction.
extension PostgresStore {
    /// The table holding the keys a run has seen for `entity`.
    static func seenTable(_ entity: String) -> String { pgInternalName("_sluice_seen_", entity) }

    /// The table holding the only keys of `entity` a sweep in proportion
    /// may delete (``markRemoved(_:)``).
    static func removedTable(_ entity: String) -> String { pgInternalName("_sluice_removed_", entity) }

    /// Records the keys of `schema`'s entity from now on, in its seen-keys
    /// table, emptied first unless `resuming`.
    package func trackSeenKeys(of schema: TableSchema, resuming: Bool) throws(StoreError) {
        seenTracked.insert(schema.name)
        let seen = pgQuoted(Self.seenTable(schema.name))
        if !resuming {
            let removed = pgQuoted(Self.removedTable(schema.name))
            try connection.execute("DROP TABLE IF EXISTS \(seen), \(removed)", "emptying \(seen)")
        }
        try ensureSeenTable(schema)
    }

    /// Creates the seen-keys table of `schema`'s entity if it is missing,
    /// its columns of the key's types and its primary key the key.
    private func ensureSeenTable(_ schema: TableSchema) throws(StoreError) {
        try withSchemaLock("creating the seen-keys table of \(pgQuoted(schema.name))") { () throws(StoreError) in
            try connection.execute(
                Self.keyTable(Self.seenTable(schema.name), of: schema),
                "creating the seen-keys table of \(pgQuoted(schema.name))")
        }
    }

    /// Gives the key columns of `schema`'s seen-keys and removed-keys tables,
    /// where they exist, the types of the entity's key: a zero-config key is
    /// typed by the first record, after the run made its seen-keys table (a
    /// text column against a `bigint` key fails the sweep's anti-join). A
    /// catalog read per table, and an `ALTER` of a table only when a type
    /// changed (once, while it is empty, at the first record's batch).
    func alignKeyTables(_ schema: TableSchema) throws(StoreError) {
        for name in [Self.seenTable(schema.name), Self.removedTable(schema.name)] {
            let stored = try storedColumnTypes(name)
            for index in schema.keyColumns {
                let column = schema.columns[index]
                let type = PostgresType(column.type)
                guard let current = stored.first(where: { $0.name == column.name }),
                    PostgresType(PostgresType.attributeType(declared: current.type)) != type
                else { continue }
                let quoted = pgQuoted(column.name)
                try connection.execute(
                    "ALTER TABLE \(pgQuoted(name)) ALTER COLUMN \(quoted) TYPE \(type.sql) USING \(quoted)::text::\(type.sql)",
                    "typing the key \(quoted) of \(pgQuoted(name)) as the key of \(pgQuoted(schema.name))")
            }
        }
    }

    /// The statement that creates the table `name` of `schema`'s keys if it
    /// is missing: its columns of the key's types, its primary key the key.
    static func keyTable(_ name: String, of schema: TableSchema) -> String {
        let columns = schema.keyColumns.map { pgQuoted(schema.columns[$0].name) }
        let definitions = schema.keyColumns.map {
            "\(pgQuoted(schema.columns[$0].name)) \(PostgresType(schema.columns[$0].type).sql)"
        }
        return "CREATE TABLE IF NOT EXISTS \(pgQuoted(name)) (\(definitions.joined(separator: ", ")), "
            + "PRIMARY KEY (\(columns.joined(separator: ", "))))"
    }

    /// The table of the keys `schema`'s sweep may delete, when the run
    /// sweeps it in proportion (``markRemoved(_:)``); nil otherwise.
    private func removedKeys(_ schema: TableSchema) throws(StoreError) -> String? {
        let removed = pgQuoted(Self.removedTable(schema.name))
        let exists = try connection.strings(
            "SELECT to_regclass($1) IS NOT NULL", "looking for the keys of records gone from the input", [removed])
        return exists.first == "t" ? removed : nil
    }

    /// Records the staged rows' keys as seen (or in the table `into`), in
    /// key order.
    func markSeen(_ stage: String, _ table: Table, into: String? = nil) throws(StoreError) {
        let schema = table.schema
        let columns = schema.keyColumns.map { pgQuoted(schema.columns[$0].name) }
        try connection.execute(
            "INSERT INTO \(into ?? pgQuoted(Self.seenTable(schema.name))) (\(columns.joined(separator: ", "))) "
                + "SELECT \(stagedKey(table).joined(separator: ", ")) FROM \(stage) s WHERE s._group <> \(Self.deletionGroup) "
                + "ORDER BY \(columns.indices.map { "\($0 + 1)" }.joined(separator: ", ")) ON CONFLICT DO NOTHING",
            "recording seen keys of \(pgQuoted(schema.name))")
    }

    package func hasSeenKeys(_ schema: TableSchema) throws(StoreError) -> Bool {
        if try removedKeys(schema) != nil { return true }
        let seen = pgQuoted(Self.seenTable(schema.name))
        let exists = try connection.strings(
            "SELECT to_regclass($1) IS NOT NULL", "looking for the seen keys of \(pgQuoted(schema.name))", [seen])
        guard exists.first == "t" else { return false }
        return try connection.strings(
            "SELECT EXISTS (SELECT 1 FROM \(seen))", "looking for the seen keys of \(pgQuoted(schema.name))"
        ).first == "t"
    }

    /// The condition on `schema`'s rows (as `t`) that the sweep deletes
    /// (key not seen, within the delete scope, and among the keys of the
    /// table `removed` in a sweep in proportion), with the values of its
    /// `$n` parameters in order.
    private func unseen(_ schema: TableSchema, among removed: String?) -> (condition: String, arguments: [String?]) {
        let keys = schema.keyColumns.map { pgQuoted(schema.columns[$0].name) }
        let seen = pgQuoted(Self.seenTable(schema.name))
        var conditions = [
            "NOT EXISTS (SELECT 1 FROM \(seen) s WHERE \(keys.map { "s.\($0) = t.\($0)" }.joined(separator: " AND ")))"
        ]
        if let removed {
            conditions.append(
                "EXISTS (SELECT 1 FROM \(removed) r WHERE \(keys.map { "r.\($0) = t.\($0)" }.joined(separator: " AND ")))"
            )
        }
        var arguments: [String?] = []
        for (column, test) in schema.deleteScope {
            let value = "t.\(pgQuoted(schema.columns[column].name))"
            // Compared as text, as the mapping wrote the values; booleans as 1 and 0.
            let text = PostgresType(schema.columns[column].type) == .boolean ? "\(value)::int::text" : "\(value)::text"
            switch test {
            case .exists(let present): conditions.append("\(value) IS \(present ? "NOT " : "")NULL")
            case .oneOf(let values):
                conditions.append(
                    "\(text) IN (\(values.indices.map { "$\(arguments.count + $0 + 1)" }.joined(separator: ", ")))")
                arguments += values
            case .noneOf(let values):
                conditions.append(
                    "(\(value) IS NULL OR \(text) NOT IN (\(values.indices.map { "$\(arguments.count + $0 + 1)" }.joined(separator: ", "))))"
                )
                arguments += values
            }
        }
        if let parent = schema.deleteScopeParent {
            conditions.append(
                "t.\(pgQuoted(schema.columns[parent.column].name)) IN (SELECT \(pgQuoted(parent.targetKey)) FROM \(pgQuoted(Self.seenTable(parent.targetTable))))"
            )
        }
        return (conditions.joined(separator: " AND "), arguments)
    }

    /// How many rows ``deleteMissing(_:links:)`` would delete from
    /// `schema`'s table, and how many it holds; one statement, two scans of
    /// the table (the first an anti-join with the seen keys), no locks
    /// beyond a reader's.
    package func missingRows(_ schema: TableSchema) throws(StoreError) -> MissingRows {
        try ensureSeenTable(schema)
        if let parent = schema.deleteScopeParent, let target = tables[parent.targetTable]?.schema {
            try ensureSeenTable(target)
        }
        let table = pgQuoted(schema.name)
        let (condition, arguments) = unseen(schema, among: try removedKeys(schema))
        let result = try connection.execute(
            "SELECT (SELECT count(*) FROM \(table) t WHERE \(condition)), (SELECT count(*) FROM \(table))",
            "counting the missing rows of \(table)", arguments)
        return MissingRows(missing: result.int(0, 0), stored: result.int(0, 1))
    }

    package func deleteMissing(_ schema: TableSchema, links: [LinkSchema]) throws(StoreError) -> Int {
        try ensureSeenTable(schema)
        if let parent = schema.deleteScopeParent, let target = tables[parent.targetTable]?.schema {
            try ensureSeenTable(target)
        }
        let table = pgQuoted(schema.name)
        let keys = schema.keyColumns.map { pgQuoted(schema.columns[$0].name) }
        let (conditions, arguments) = unseen(schema, among: try removedKeys(schema))
        let sourceLinks = links.filter { $0.sourceTable == schema.name }
        var parts = [
            "gone AS (DELETE FROM \(table) t WHERE \(conditions) RETURNING \(keys.map { "t.\($0)" }.joined(separator: ", ")))"
        ]
        for (index, link) in sourceLinks.enumerated() {
            parts.append(goneLinksDeletion(link, index, keys: keys))
        }
        let counts = (["(SELECT count(*) FROM gone)"] + sourceLinks.indices.map { "(SELECT count(*) FROM l\($0))" })
            .joined(separator: ", ")
        let action = "deleting missing rows of \(table)"
        if shouldAbort?() == true {
            throw StoreError(path: name, action: action, message: "cancelled", cause: .interrupted)
        }
        // One statement is one transaction: a kill leaves every row, and
        // the resumed run sweeps again with the same seen keys.
        let result = try connection.execute("WITH \(parts.joined(separator: ", ")) SELECT \(counts)", action, arguments)
        for (index, link) in sourceLinks.enumerated() {
            sideWrites.linksRemoved[link.name, default: 0] += result.int(0, index + 1)
        }
        return result.int(0, 0)
    }

    package func stopTrackingSeenKeys(run id: Int64) throws(StoreError) {
        guard !seenTracked.isEmpty else { return }
        try connection.begin("ending the sweeps")
        do throws(StoreError) {
            for name in seenTracked.sorted() {
                let seen = pgQuoted(Self.seenTable(name))
                let removed = pgQuoted(Self.removedTable(name))
                try connection.execute("DROP TABLE IF EXISTS \(seen), \(removed)", "dropping \(seen)")
            }
            try connection.execute(
                "UPDATE _sluice_runs SET swept = true WHERE id = $1", "recording the sweep", [String(id)])
            try connection.commit("ending the sweeps")
        } catch {
            connection.rollback()
            throw error
        }
        seenTracked = []
    }
}
