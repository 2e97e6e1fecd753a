import CSluiceSQLite3
import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// Relationships in the store: link tables for to-many relationships, key-only
/// stub rows for targets that are missing, and the count of dangling links.
extension SQLiteStore {
    /// Creates a link table: source key columns, target key, position;
    /// keyed by (source, position) when ordered, else (source, target), with
    /// an index on the target for joins from the other side.
    func ensureLinkTable(_ link: LinkSchema) throws(StoreError) {
        linkDeleteStatements[link.name] = nil
        let sourceNames = link.sourceColumns.map { quoted($0.name) }
        let target = quoted(link.targetColumn.name)
        let entity = link.choices.isEmpty ? [] : [quoted(LinkSchema.entityColumnName)]
        let key = linkKeyColumns(link)
        var definitions: [String: String] = [
            target: "\(target) \(link.targetColumn.type.sqlType) NOT NULL",
            "\"position\"": "\"position\" INTEGER NOT NULL",
        ]
        for column in link.sourceColumns {
            definitions[quoted(column.name)] = "\(quoted(column.name)) \(column.type.sqlType) NOT NULL"
        }
        for name in entity { definitions[name] = "\(name) TEXT NOT NULL" }
        // The key's columns come first, in key order: SQLite 3.40.1's
        // integrity_check reports "NULL value in T.c" for every row of a
        // WITHOUT ROWID table whose NOT NULL column c is declared between
        // two key columns (Way_nodes had Node_id between Way_id and
        // position).
        let others = (sourceNames + [target, "\"position\""] + entity).filter { !key.contains($0) }
        let columns =
            (key + others).map { definitions[$0] ?? $0 }
            + link.attributeColumns.map { "\(quoted($0.name)) \($0.type.sqlType)" }
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS \(quoted(link.name)) (\(columns.joined(separator: ", ")), "
                + "PRIMARY KEY (\(key.joined(separator: ", ")))) WITHOUT ROWID",
            "creating the link table \(quoted(link.name))")
        try createTargetIndex(link)
    }

    /// A link table's primary key, its columns quoted: the source's
    /// columns, then the position when the link is ordered, else the
    /// target's entity (when it may name several) and key.
    func linkKeyColumns(_ link: LinkSchema) -> [String] {
        let entity = link.choices.isEmpty ? [] : [quoted(LinkSchema.entityColumnName)]
        return link.sourceColumns.map { quoted($0.name) }
            + (link.ordered ? ["\"position\""] : entity + [quoted(link.targetColumn.name)])
    }

    /// The index on a link table's target, for joins from the target side.
    private func createTargetIndex(_ link: LinkSchema) throws(StoreError) {
        try connection.execute(
            "CREATE INDEX IF NOT EXISTS \(quoted("_sluice_target_" + link.name)) ON \(quoted(link.name)) (\(quoted(link.targetColumn.name)))",
            "indexing the link table \(quoted(link.name))")
    }

    /// Before a bulk load into an empty link table: drops its target index,
    /// which ``endBulkLinks(_:)`` builds again in one sorted pass instead of
    /// one insert per link into scattered pages. Returns whether it did (the
    /// table was empty). A run killed in between gets the index back when
    /// the next run prepares its tables. The link's kept dangling count,
    /// whose triggers probe that index, is let go (counted at the run's end).
    package func beginBulkLinks(_ link: LinkSchema) throws(StoreError) -> Bool {
        let rows = try connection.strings(
            "SELECT count(*) FROM (SELECT 1 FROM \(quoted(link.name)) LIMIT 1)", column: 0, "counting links")
        guard rows.first == "0" else { return false }
        try forgetDanglingCount(of: link)
        try connection.execute(
            "DROP INDEX IF EXISTS \(quoted("_sluice_target_" + link.name))", "dropping the target index")
        return true
    }

    /// Builds the target index ``beginBulkLinks(_:)`` dropped. SQLite sorts
    /// the index with as much memory as its page cache, on top of the cache;
    /// both are cut to a quarter for the build (peak RSS 63 → 53 MiB on
    /// 150,000 events with 525,000 links), and the sort spills the rest to
    /// temporary files. O(links log links).
    package func endBulkLinks(_ link: LinkSchema) throws(StoreError) {
        try connection.execute(
            "PRAGMA cache_size=\(-(options.pageCacheBytes / 4 / 1024))", "shrinking the page cache for an index build")
        let built = Result { () throws(StoreError) in try createTargetIndex(link) }
        try connection.execute("PRAGMA cache_size=\(-(options.pageCacheBytes / 1024))", "restoring the page cache")
        try built.get()
    }

    /// Applies one batch of link rows. Per source key only its last record
    /// counts: under `replace` (or when that record's list is empty or null)
    /// its stored links are compared with the new ones (one read per
    /// ``StoreOptions/lookupKeys`` sources) and, when they differ, deleted and
    /// the new ones inserted; equal lists are left alone, and a source with
    /// none stored just gets its links. Under `union` the new links are added.
    package func applyLinks(
        _ rows: RowArena, _ link: LinkSchema, entity: Int, mixedKeys: MixedKeyLog?
    ) throws(StoreError) {
        let sources = BatchRows.linkSources(rows, link, entity: entity, mixedKeys: mixedKeys)
        let insertSQL =
            "INSERT OR IGNORE INTO \(quoted(link.name)) (\(linkColumnNames(link).joined(separator: ", "))) VALUES "
        let tuple = "(" + Array(repeating: "?", count: link.columnCount).joined(separator: ", ") + ")"
        let together = Self.insertRows(columns: link.columnCount)
        let delete = try linkDeletes(link)
        let width = link.sourceColumns.count
        // The held deleted sources up to the batch's last go first, in its
        // transaction: the link table is walked once, in key order.
        let deferred = unlinkingLater ? deferredUnlinks[link.name] : nil
        if let deferred, let last = sources.last {
            let bound = (0..<width).map { LinkValue(rows, rows[last.row, $0]) }
            sideWrites.linksRemoved[link.name, default: 0] += try deferred.unlink(through: bound, with: delete)
        }
        let dropped = link.rule == .replaceAndDelete ? try linkedTargets(rows, link) : [:]
        var stillLinked: [LinkValue: Set<LinkValue>] = [:]
        let insert = try SQLiteStatement(connection, insertSQL + tuple, "preparing link inserts")
        let insertMany =
            together > 1 && rows.rowCount >= together
            ? try SQLiteStatement(
                connection, insertSQL + Array(repeating: tuple, count: together).joined(separator: ", "),
                "preparing link inserts") : nil
        let linking = "linking \(quoted(link.name))"
        // Each target is stubbed once per batch (tags repeat across sources),
        // by the index of its table in `targets`.
        let targets = link.targets
        var stubbed = [Set<BatchKey>](repeating: [], count: targets.count)
        // Counted here and added to ``sideWrites`` once per batch rather
        // than a dictionary update per link row.
        var added = 0
        var removed = 0
        defer {
            sideWrites.linksAdded[link.name, default: 0] += added
            sideWrites.linksRemoved[link.name, default: 0] += removed
        }
        try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
            // Link rows waiting to go in `together` at a time, one multi-row
            // INSERT each; written before any other statement of the batch.
            var waiting: [Int] = []
            waiting.reserveCapacity(together)
            func flush() throws(StoreError) {
                if let insertMany, waiting.count == together {
                    added += try insertLinks(rows, waiting[...], link, insertMany, bytes, linking)
                } else {
                    for index in waiting.indices {
                        added += try insertLinks(rows, waiting[index...index], link, insert, bytes, linking)
                    }
                }
                waiting.removeAll(keepingCapacity: true)
            }
            let stored = try storedLinks(of: sources, rows, link, bytes)
            for (index, source) in sources.enumerated() {
                if link.rule == .replaceAndDelete {
                    stillLinked[LinkValue.key(rows, source.row, width)] = Set(
                        source.kept.map { LinkValue(rows, rows[$0, width]) })
                }
                if stored[index] == .same { continue }
                // A source deleted later in the run keeps no links.
                if try !sourceStands(rows, source.row, link, bytes) { continue }
                let bindSource = { [self] (statement: OpaquePointer) in
                    for column in 0..<width { bind(statement, Int32(column + 1), rows[source.row, column], bytes) }
                }
                // A source whose rows the deletes took is logged already.
                var logged = false
                if source.unlink && stored[index] != .none {
                    try flush()
                    let gone = try delete.run(bindSource)
                    removed += gone
                    logged = gone > 0
                }
                for row in source.kept {
                    if link.storedTargetsOnly,
                        try !stores(link.targetTable, rows, row, cells: width..<(width + 1), bytes)
                    {
                        continue
                    }
                    if !logged {
                        try logWrittenSource(link.name, bindSource)
                        logged = true
                    }
                    waiting.append(row)
                    if waiting.count == together { try flush() }
                    if link.missing == .stub, let target = target(of: row, rows, link),
                        stubbed[target].insert(BatchKey(rows[row, width], bytes)).inserted
                    {
                        // The link goes in before its stub, as it would alone.
                        try flush()
                        try stub(targets[target].table, targets[target].key, rows[row, width], bytes)
                    }
                }
            }
            try flush()
        }
        if link.rule == .replaceAndDelete { try deleteDropped(dropped, stillLinked, link) }
    }

    /// Inserts link rows `linkRows` with `insert`, an INSERT OR IGNORE of
    /// that many rows; returns the rows it inserted. O(cells).
    private func insertLinks(
        _ rows: RowArena, _ linkRows: ArraySlice<Int>, _ link: LinkSchema, _ insert: SQLiteStatement,
        _ bytes: UnsafeBufferPointer<UInt8>, _ action: String
    ) throws(StoreError) -> Int {
        insert.rewind()
        var parameter: Int32 = 1
        for row in linkRows {
            for column in 0..<link.columnCount {
                bind(insert.handle, parameter, rows[row, column], bytes)
                parameter += 1
            }
        }
        return try insert.run(action)
    }

    /// The columns of a link row, in the order of its cells.
    func linkColumnNames(_ link: LinkSchema) -> [String] {
        link.sourceColumns.map { quoted($0.name) } + [quoted(link.targetColumn.name), "\"position\""]
            + (link.choices.isEmpty ? [] : [quoted(LinkSchema.entityColumnName)])
            + link.attributeColumns.map { quoted($0.name) }
    }

    /// The index in ``LinkSchema/targets`` of link row `row`'s target: the
    /// link's one target, or the choice its entity cell names.
    private func target(of row: Int, _ rows: RowArena, _ link: LinkSchema) -> Int? {
        guard !link.choices.isEmpty else { return 0 }
        let value = rows.withText(rows[row, link.sourceColumns.count + 2]) { String(decoding: $0, as: UTF8.self) }
        return link.choices.firstIndex { $0.value == value }
    }

    /// The targets linked now from each source of the batch, read with one
    /// query for the whole batch.
    private func linkedTargets(_ rows: RowArena, _ link: LinkSchema) throws(StoreError) -> [LinkValue: Set<LinkValue>] {
        let width = link.sourceColumns.count
        guard rows.rowCount > 0 else { return [:] }
        let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ",") + ")"
        let names = link.sourceColumns.map { quoted($0.name) }.joined(separator: ", ")
        let read = try SQLiteStatement(
            connection,
            "SELECT \(names), \(quoted(link.targetColumn.name)) FROM \(quoted(link.name)) WHERE (\(names)) IN (VALUES "
                + Array(repeating: tuple, count: rows.rowCount).joined(separator: ",") + ")",
            "reading the links of \(quoted(link.name))")
        let statement = read.handle
        var linked: [LinkValue: Set<LinkValue>] = [:]
        try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
            for row in 0..<rows.rowCount {
                for column in 0..<width { bind(statement, Int32(row * width + column + 1), rows[row, column], bytes) }
            }
            while try read.step("reading the links of \(quoted(link.name))") {
                let source = LinkValue.composite((0..<width).map { LinkValue(statement, Int32($0)) })
                linked[source, default: []].insert(LinkValue(statement, Int32(width)))
            }
        }
        return linked
    }

    /// Deletes the target rows a replace-and-delete batch unlinked.
    private func deleteDropped(
        _ before: [LinkValue: Set<LinkValue>], _ after: [LinkValue: Set<LinkValue>], _ link: LinkSchema
    ) throws(StoreError) {
        let statement = try SQLiteStatement(
            connection, "DELETE FROM \(quoted(link.targetTable)) WHERE \(quoted(link.targetKey)) = ?",
            "deleting dropped children")
        let action = "deleting dropped children of \(quoted(link.name))"
        for (source, targets) in before {
            guard let now = after[source] else { continue }
            for target in targets.subtracting(now) {
                statement.reset()
                target.bind(statement.handle, 1)
                sideWrites.childrenDeleted[link.targetTable, default: 0] += try statement.run(action)
            }
        }
    }

    /// Creates stub rows for the to-one references of a batch whose
    /// relationship asks for them, one statement per distinct key.
    package func stubReferences(_ rows: RowArena, _ schema: TableSchema) throws(StoreError) {
        let stubbing = schema.references.filter { $0.missing == .stub }
        guard !stubbing.isEmpty else { return }
        try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
            for reference in stubbing {
                var stubbed: Set<BatchKey> = []
                for row in 0..<rows.rowCount where stubbed.insert(BatchKey(rows[row, reference.column], bytes)).inserted
                {
                    try stub(reference.targetTable, reference.targetKey, rows[row, reference.column], bytes)
                }
            }
        }
    }

    /// Inserts a row holding only `key` into `table` unless it exists. The
    /// statement is prepared once per table.
    private func stub(_ table: String, _ keyColumn: String, _ key: Cell, _ bytes: UnsafeBufferPointer<UInt8>)
        throws(StoreError)
    {
        guard key != .absent && key != .null else { return }
        let statement: SQLiteStatement
        if let cached = stubStatements[table] {
            statement = cached
        } else {
            statement = try SQLiteStatement(
                connection, "INSERT OR IGNORE INTO \(quoted(table)) (\(quoted(keyColumn))) VALUES (?)",
                "preparing stubs of \(quoted(table))")
            stubStatements[table] = statement
        }
        statement.reset()
        bind(statement.handle, 1, key, bytes)
        sideWrites.stubs[table, default: 0] += try statement.run("creating a stub in \(quoted(table))")
    }
}

/// A key value read from a batch or from the store, comparable across both.
enum LinkValue: Hashable {
    case integer(Int64)
    case real(Double)
    case text([UInt8])
    case null
    indirect case composite([LinkValue])

    init(_ rows: RowArena, _ cell: Cell) {
        switch cell {
        case .integer(let value): self = .integer(value)
        case .real(let value): self = .real(value)
        // Keys are never spilled (RowMapper).
        case .text, .blob, .spilledText, .spilledBlob: self = .text(rows.withText(cell) { Array($0) })
        case .absent, .null: self = .null
        }
    }

    init(_ statement: OpaquePointer?, _ column: Int32) {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: self = .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: self = .real(sqlite3_column_double(statement, column))
        case SQLITE_NULL: self = .null
        default:
            let count = Int(sqlite3_column_bytes(statement, column))
            let bytes = sqlite3_column_blob(statement, column)
            self = .text(bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? [])
        }
    }

    /// The source key of link row `row`: its first `width` cells.
    static func key(_ rows: RowArena, _ row: Int, _ width: Int) -> LinkValue {
        .composite((0..<width).map { LinkValue(rows, rows[row, $0]) })
    }

    func bind(_ statement: OpaquePointer?, _ index: Int32) {
        switch self {
        case .integer(let value): sqlite3_bind_int64(statement, index, value)
        case .real(let value): sqlite3_bind_double(statement, index, value)
        case .text(let bytes):
            bytes.withUnsafeBytes { raw in
                _ = sqlite3_bind_text(
                    statement, index, raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count),
                    sluice_sqlite_transient())
            }
        case .null, .composite: sqlite3_bind_null(statement, index)
        }
    }
}
