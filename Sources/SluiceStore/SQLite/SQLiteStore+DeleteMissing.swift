import CSluiceSQLite3
@_spi(Machinery) import SluiceRecords

/// Delete-missing in constant memory: each batch also records its keys in a
/// per-entity table of keys seen by the run; after a complete run, a sweep
/// removes the stored rows (within the entity's scope) whose keys are not
/// there, a chunk of rows per transaction.
///
/// The seen-keys table is kept until every sweep has finished, so that a run
/// killed during a sweep and resumed sweeps again with the keys the killed
/// run saw, and ends where an uninterrupted run would.
extension SQLiteStore {
    /// The table holding the keys a run has seen for `schema`'s entity.
    static func seenTable(_ entity: String) -> String { "_sluice_seen_" + entity }

    /// The table holding the only keys of `entity` a sweep in proportion
    /// may delete (``markRemoved(_:)``).
    static func removedTable(_ entity: String) -> String { "_sluice_removed_" + entity }

    /// Stored rows examined per sweep transaction. 200,000 stored rows, half
    /// of them seen: the sweep took 0.5 s in chunks of 10,000, as in one
    /// transaction, while a reader or a kill waits for at most one chunk.
    static let sweepChunkRows: Int64 = 10_000

    /// Records the keys of `schema`'s entity from now on. A run that does
    /// not resume drops the seen keys of any earlier run; the table is made
    /// when the first keys arrive, typed like the entity's key so that the
    /// sweep's lookups use its primary key.
    package func trackSeenKeys(of schema: TableSchema, resuming: Bool) throws(StoreError) {
        seenTracked.insert(schema.name)
        if !resuming {
            for name in [Self.seenTable(schema.name), Self.removedTable(schema.name)] {
                try connection.execute("DROP TABLE IF EXISTS \(quoted(name))", "emptying \(quoted(name))")
            }
        }
    }

    /// Creates the seen-keys table of `schema`'s entity if it is missing,
    /// its columns of the key's types.
    private func ensureSeenTable(_ schema: TableSchema) throws(StoreError) {
        let columns = schema.keyColumns.map { quoted(schema.columns[$0].name) }
        let definitions = schema.keyColumns.map {
            "\(quoted(schema.columns[$0].name)) \(schema.columns[$0].type.sqlType)"
        }
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS \(quoted(Self.seenTable(schema.name))) (\(definitions.joined(separator: ", ")), "
                + "PRIMARY KEY (\(columns.joined(separator: ", ")))) WITHOUT ROWID",
            "creating the seen-keys table of \(quoted(schema.name))")
    }

    /// Records the keys each sweep in proportion may delete
    /// (``ImportStore/markRemoved(_:)``), in key order, in one transaction:
    /// one insert per key into a table of the key's types, whose rowids
    /// the sweep walks in chunks as a full one walks the entity's (the keys
    /// come distinct: no primary key to keep).
    package func markRemoved(_ candidates: [(schema: TableSchema, keys: RowArena)]) throws(StoreError) {
        let action = "recording the keys of records gone from the input"
        try connection.begin(action)
        do throws(StoreError) {
            for (schema, keys) in candidates where seenTracked.contains(schema.name) {
                let name = Self.removedTable(schema.name)
                try connection.execute("DROP TABLE IF EXISTS \(quoted(name))", action)
                let definitions = schema.keyColumns.map {
                    "\(quoted(schema.columns[$0].name)) \(schema.columns[$0].type.sqlType)"
                }
                try connection.execute(
                    "CREATE TABLE \(quoted(name)) (\(definitions.joined(separator: ", ")))", action)
                let columns = Array(schema.keyColumns.indices)
                let names = schema.keyColumns.map { quoted(schema.columns[$0].name) }
                let insert = try SQLiteStatement(
                    connection,
                    "INSERT INTO \(quoted(name)) (\(names.joined(separator: ", "))) "
                        + "VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))", action)
                var order = Array(0..<keys.rowCount)
                order.sort { keys.compare(row: $0, columns, with: $1, of: keys) < 0 }
                try keys.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
                    for row in order {
                        insert.rewind()
                        for column in columns { bind(insert.handle, Int32(column + 1), keys[row, column], bytes) }
                        try insert.run(action)
                    }
                }
            }
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// The table of the keys `schema`'s sweep may delete, when the run
    /// sweeps it in proportion (``markRemoved(_:)``); nil otherwise.
    private func removedKeys(_ schema: TableSchema) throws(StoreError) -> String? {
        let name = Self.removedTable(schema.name)
        let exists = try connection.strings(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = \(literal(name))", column: 0,
            "looking for the keys of records gone from the input")
        return exists.first == "1" ? name : nil
    }

    /// Records the keys of the rows of `rows` at `order` as seen, each held
    /// in the arena columns `keys` (one per key column: a batch's
    /// ``TableSchema/keyColumns``, or the key-only rows of
    /// ``markSeen(_:of:)``). One insert per distinct key, in key order.
    func markSeen(
        _ rows: RowArena, _ order: [Int], keys: [Int], _ bytes: UnsafeBufferPointer<UInt8>, _ table: TableState
    ) throws(StoreError) {
        let schema = table.schema
        let seen: SQLiteStatement
        if let prepared = table.seen {
            seen = prepared
        } else {
            try ensureSeenTable(schema)
            let columns = schema.keyColumns.map { quoted(schema.columns[$0].name) }
            let parameters = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            seen = try SQLiteStatement(
                connection,
                "INSERT OR IGNORE INTO \(quoted(Self.seenTable(schema.name))) (\(columns.joined(separator: ", "))) VALUES (\(parameters))",
                "preparing the seen-keys insert of \(quoted(schema.name))")
            table.seen = seen
        }
        let action = "recording seen keys of \(quoted(schema.name))"
        for row in order {
            seen.rewind()
            for (position, column) in keys.enumerated() {
                bind(seen.handle, Int32(position + 1), rows[row, column], bytes)
            }
            try seen.run(action)
        }
    }

    /// Records the keys of `keys` (key columns only) as seen, in one
    /// transaction, when `schema`'s entity's keys are tracked. The keys are
    /// inserted in key order: they come in digest order, and inserted so they rewrote most
    /// pages of the seen-keys table at every transaction (2,000,000 events,
    /// the next day with `--delete-missing`: 5,075 MB written). O(n log n),
    /// one insert per key into the seen-keys table's primary key.
    package func markSeen(_ keys: RowArena, of schema: TableSchema) throws(StoreError) {
        // A table the store does not hold has no rows to sweep.
        guard seenTracked.contains(schema.name), keys.rowCount > 0, let table = tables[schema.name] else { return }
        let action = "recording the keys of skipped records of \(quoted(schema.name)) as seen"
        let columns = Array(schema.keyColumns.indices)
        var order = Array(0..<keys.rowCount)
        order.sort { keys.compare(row: $0, columns, with: $1, of: keys) < 0 }
        try connection.begin(action)
        do throws(StoreError) {
            try keys.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
                try markSeen(keys, order, keys: columns, bytes, table)
            }
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Whether this run (or the interrupted run it resumes) recorded any key
    /// of `schema`'s entity as seen.
    package func hasSeenKeys(_ schema: TableSchema) throws(StoreError) -> Bool {
        if try removedKeys(schema) != nil { return true }
        let exists = try connection.strings(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = \(literal(Self.seenTable(schema.name)))",
            column: 0,
            "looking for the seen keys of \(quoted(schema.name))")
        guard exists.first == "1" else { return false }
        let any = try connection.strings(
            "SELECT EXISTS (SELECT 1 FROM \(quoted(Self.seenTable(schema.name))))", column: 0,
            "looking for the seen keys of \(quoted(schema.name))")
        return any.first == "1"
    }

    /// Deletes the stored rows of `schema`'s entity, within its delete scope,
    /// whose keys the run did not see, and the links from them in `links`.
    /// Call only after every input was read without error, then
    /// ``stopTrackingSeenKeys()``. Returns the number of rows deleted.
    ///
    /// Walks the table in rowid order, ``sweepChunkRows`` rows per
    /// transaction; each row costs one descent of the seen-keys table's
    /// primary key, so the sweep is O(n log n) and holds the write lock for
    /// one chunk at a time. ``shouldAbort`` is asked between chunks. A sweep
    /// in proportion (``markRemoved(_:)``) walks the keys it may delete
    /// instead, ``sweepChunkRows`` a transaction, one lookup of the table
    /// and one of the seen keys each.
    package func deleteMissing(_ schema: TableSchema, links: [LinkSchema] = []) throws(StoreError) -> Int {
        try ensureSeenTable(schema)
        if let parent = schema.deleteScopeParent, let target = tables[parent.targetTable]?.schema {
            try ensureSeenTable(target)
        }
        let removed = try removedKeys(schema)
        let sweep = try SweepStatements(self, schema, links, among: removed)
        var deleted = 0
        var lower = Int64.min
        while true {
            if shouldAbort?() == true {
                throw StoreError(
                    path: connection.path, action: "deleting missing rows of \(quoted(schema.name))",
                    message: "cancelled", sqliteCode: SQLITE_INTERRUPT)
            }
            try connection.begin("starting delete-missing of \(quoted(schema.name))")
            do throws(StoreError) {
                let upper = try sweep.chunkEnd(from: lower)
                deleted += try sweep.deleteChunk(lower, upper, &sideWrites)
                try connection.commit("committing delete-missing of \(quoted(schema.name))")
                guard upper < Int64.max else { return deleted }
                lower = upper + 1
            } catch {
                connection.rollback()
                throw error
            }
        }
    }

    /// How many rows ``deleteMissing(_:links:)`` would delete from
    /// `schema`'s table, and how many it holds; one scan of the table with
    /// a seen-keys probe per row (in proportion: a lookup per key it may
    /// delete, and the count of the table), outside any transaction of its own.
    package func missingRows(_ schema: TableSchema) throws(StoreError) -> MissingRows {
        try ensureSeenTable(schema)
        if let parent = schema.deleteScopeParent, let target = tables[parent.targetTable]?.schema {
            try ensureSeenTable(target)
        }
        let (condition, arguments) = SweepStatements.unseen(schema)
        let table = quoted(schema.name)
        let source = SweepStatements.rows(schema, among: try removedKeys(schema))
        let action = "counting the missing rows of \(table)"
        let count = try SQLiteStatement(
            connection, "SELECT (SELECT count(*) FROM \(source) WHERE \(condition)), (SELECT count(*) FROM \(table))",
            action)
        for (index, argument) in arguments.enumerated() { count.bind(Int32(index + 1), argument) }
        guard try count.step(action) else { return MissingRows(missing: 0, stored: 0) }
        return MissingRows(missing: Int(count.int64(0)), stored: Int(count.int64(1)))
    }

    /// Drops the seen-keys tables once every delete-missing ran, and marks
    /// run `id` swept, in one transaction.
    package func stopTrackingSeenKeys(run id: Int64) throws(StoreError) {
        guard !seenTracked.isEmpty else { return }
        try connection.begin("ending the sweeps")
        do throws(StoreError) {
            for name in seenTracked.sorted() {
                tables[name]?.seen = nil
                for table in [Self.seenTable(name), Self.removedTable(name)] {
                    try connection.execute("DROP TABLE IF EXISTS \(quoted(table))", "dropping \(quoted(table))")
                }
            }
            try markSwept(id)
            try connection.commit("ending the sweeps")
        } catch {
            connection.rollback()
            throw error
        }
        seenTracked = []
    }
}

/// The statements of one entity's sweep: the chunk bounds, the rows of a
/// chunk to delete (gathered in a temporary table of their rowids and keys),
/// their deletion and that of their links.
struct SweepStatements {
    let table: String
    /// The query of a chunk's rows to delete: rowid and key.
    let unseenRows: String
    let chunkEnd: SQLiteStatement
    let gather: SQLiteStatement
    let delete: SQLiteStatement
    let deleteLinks: [SQLiteStatement]
    /// The link table each of ``deleteLinks`` deletes from.
    let linkNames: [String]
    let clear: SQLiteStatement
    let arguments: [String]

    /// `removed` names the table of the only keys the sweep may delete
    /// (a sweep in proportion), nil to consider every row.
    init(_ store: SQLiteStore, _ schema: TableSchema, _ links: [LinkSchema], among removed: String? = nil)
        throws(StoreError)
    {
        let connection = store.connection
        let table = quoted(schema.name)
        self.table = table
        let keys = schema.keyColumns.map { quoted(schema.columns[$0].name) }
        let swept = quoted("_sluice_swept")
        try connection.execute("DROP TABLE IF EXISTS temp.\(swept)", "clearing the swept keys")
        let keyDefinitions = schema.keyColumns.map {
            "\(quoted(schema.columns[$0].name)) \(schema.columns[$0].type.sqlType)"
        }
        try connection.execute(
            "CREATE TEMP TABLE \(swept) (rid INTEGER PRIMARY KEY, \(keyDefinitions.joined(separator: ", ")))",
            "creating the swept keys table")

        let (conditions, arguments) = Self.unseen(schema)
        self.arguments = arguments
        let action = "preparing delete-missing of \(table)"
        chunkEnd = try SQLiteStatement(
            connection,
            "SELECT rowid FROM \(removed.map(quoted) ?? table) WHERE rowid >= ?1 ORDER BY rowid "
                + "LIMIT 1 OFFSET \(SQLiteStore.sweepChunkRows - 1)", action)
        unseenRows =
            "SELECT \(table).rowid, \(keys.map { "\(table).\($0)" }.joined(separator: ", ")) "
            + "FROM \(Self.rows(schema, among: removed)) WHERE \(removed == nil ? table : "r").rowid BETWEEN ?1 AND ?2 "
            + "AND \(conditions)"
        gather = try SQLiteStatement(connection, "INSERT INTO \(swept) " + unseenRows, action)
        delete = try SQLiteStatement(
            connection, "DELETE FROM \(table) WHERE rowid IN (SELECT rid FROM \(swept))", action)
        linkNames = links.filter { $0.sourceTable == schema.name }.map(\.name)
        deleteLinks = try links.filter { $0.sourceTable == schema.name }.map { (link) throws(StoreError) in
            let columns = link.sourceColumns.map { quoted($0.name) }
            let sources = columns.count == 1 ? columns[0] : "(\(columns.joined(separator: ", ")))"
            return try SQLiteStatement(
                connection,
                "DELETE FROM \(quoted(link.name)) WHERE \(sources) IN (SELECT \(keys.joined(separator: ", ")) FROM \(swept))",
                action)
        }
        clear = try SQLiteStatement(connection, "DELETE FROM \(swept)", action)
    }

    /// The rows of `schema`'s table a sweep considers, as a `FROM` clause:
    /// the table, or those of the keys in the table `removed` (one lookup
    /// of the table's key each: `CROSS JOIN` keeps `removed` outside).
    static func rows(_ schema: TableSchema, among removed: String?) -> String {
        let table = quoted(schema.name)
        guard let removed else { return table }
        let match = schema.keyColumns.map {
            "\(table).\(quoted(schema.columns[$0].name)) = r.\(quoted(schema.columns[$0].name))"
        }
        return "\(quoted(removed)) r CROSS JOIN \(table) ON \(match.joined(separator: " AND "))"
    }

    /// The condition on `schema`'s rows that the sweep deletes (key not
    /// seen, within the delete scope), with the values of its `?`
    /// parameters in order.
    static func unseen(_ schema: TableSchema) -> (condition: String, arguments: [String]) {
        let table = quoted(schema.name)
        let seen = quoted(SQLiteStore.seenTable(schema.name))
        let keys = schema.keyColumns.map { quoted(schema.columns[$0].name) }
        let match = keys.map { "s.\($0) = \(table).\($0)" }
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
                conditions.append(
                    "(\(name) IS NULL OR CAST(\(name) AS TEXT) NOT IN (\(values.map { _ in "?" }.joined(separator: ", "))))"
                )
                arguments += values
            }
        }
        if let parent = schema.deleteScopeParent {
            let column = "\(table).\(quoted(schema.columns[parent.column].name))"
            conditions.append(
                "\(column) IN (SELECT \(quoted(parent.targetKey)) FROM \(quoted(SQLiteStore.seenTable(parent.targetTable))))"
            )
        }
        return (conditions.joined(separator: " AND "), arguments)
    }

    /// The last rowid of the chunk starting at `lower`: the rowid
    /// ``SQLiteStore/sweepChunkRows`` rows on, or `Int64.max` for the last chunk.
    func chunkEnd(from lower: Int64) throws(StoreError) -> Int64 {
        chunkEnd.reset()
        chunkEnd.bind(1, lower)
        defer { chunkEnd.rewind() }
        return try chunkEnd.step("finding the next rows of \(table) to sweep") ? chunkEnd.int64(0) : Int64.max
    }

    /// Deletes the unseen rows with rowids in `lower...upper` and their
    /// links; returns how many rows it deleted.
    func deleteChunk(_ lower: Int64, _ upper: Int64, _ writes: inout SideWrites) throws(StoreError) -> Int {
        gather.reset()
        gather.bind(1, lower)
        gather.bind(2, upper)
        for (index, argument) in arguments.enumerated() { gather.bind(Int32(index + 3), argument) }
        let found = try gather.run("finding the missing rows of \(table)")
        guard found > 0 else { return 0 }
        delete.reset()
        let deleted = try delete.run("deleting missing rows of \(table)")
        for (statement, link) in zip(deleteLinks, linkNames) {
            statement.reset()
            writes.linksRemoved[link, default: 0] += try statement.run("deleting the links of deleted rows of \(table)")
        }
        clear.reset()
        try clear.run("clearing the swept keys")
        return deleted
    }
}
