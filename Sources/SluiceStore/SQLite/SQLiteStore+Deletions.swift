import CSluiceSQLite3
@_spi(Machinery) import SluiceRecords

/// Rows a change file deletes by key (`delete-records`, `delete-when`): the
/// row and every link from it go, in the batch's transaction.
extension SQLiteStore {
    /// Deletes the stored rows with the keys of `rows` at `positions`, and
    /// their links: with the row when the links wait for no link batch or
    /// the key is written again in the batch (`rewritten`), else held for
    /// the link batches (``unlinkLater()``, whether or not a row was
    /// stored, so that a resumed run deletes what a killed one left);
    /// returns how many rows were stored. O(keys × log n).
    func deleteKeys(
        _ rows: RowArena, _ positions: [Int], rewritten: Set<Int>, _ bytes: UnsafeBufferPointer<UInt8>,
        _ table: TableState
    ) throws(StoreError) -> Int {
        let schema = table.schema
        let delete: SQLiteStatement
        if let prepared = table.deleteByKey {
            delete = prepared
        } else {
            let match = schema.keyColumns.enumerated().map {
                "\(quoted(schema.columns[$0.element].name)) = ?\($0.offset + 1)"
            }
            delete = try SQLiteStatement(
                connection, "DELETE FROM \(quoted(schema.name)) WHERE \(match.joined(separator: " AND "))",
                "preparing the deletions of \(quoted(schema.name))")
            table.deleteByKey = delete
        }
        table.deletedByKey = true
        let sourceLinks = linkSchemas.filter { $0.sourceTable == schema.name }
        let linkDeletes = try sourceLinks.map { (link) throws(StoreError) in try self.linkDeletes(link) }
        var removed = [Int](repeating: 0, count: sourceLinks.count)
        // Built once a batch: a quoted name a row cost 3,500 instructions.
        let deleting = "deleting a row of \(quoted(schema.name)) by key"
        var deleted = 0
        for row in positions {
            func bindKey(_ statement: OpaquePointer) {
                for (position, column) in schema.keyColumns.enumerated() {
                    bind(statement, Int32(position + 1), rows[row, column], bytes)
                }
            }
            delete.reset()
            bindKey(delete.handle)
            deleted += try delete.run(deleting)
            if unlinkingLater && !rewritten.contains(row) {
                for link in sourceLinks { try deferredUnlinks[link.name]?.hold(bindKey) }
                continue
            }
            for (index, links) in linkDeletes.enumerated() { removed[index] += try links.run(bindKey) }
        }
        for (link, count) in zip(sourceLinks, removed) { sideWrites.linksRemoved[link.name, default: 0] += count }
        return deleted
    }

    /// Whether the source of link row `row` is still stored, when this run
    /// deleted rows of the link's source table (a record written, then
    /// deleted later in the run, keeps no links). True otherwise, with no
    /// look-up; while the links of deleted sources wait for the link
    /// batches, looked up only for a source held among them (one descent
    /// of a small temporary table for the others, instead of one of the
    /// source table, whose pages the source's batches evicted).
    func sourceStands(_ rows: RowArena, _ row: Int, _ link: LinkSchema, _ bytes: UnsafeBufferPointer<UInt8>)
        throws(StoreError) -> Bool
    {
        guard tables[link.sourceTable]?.deletedByKey == true else { return true }
        let width = link.sourceColumns.count
        if unlinkingLater, let deferred = deferredUnlinks[link.name],
            try !deferred.holds({ statement in
                for column in 0..<width { bind(statement, Int32(column + 1), rows[row, column], bytes) }
            })
        {
            return true
        }
        return try stores(link.sourceTable, rows, row, cells: 0..<width, bytes)
    }

    /// The deletions among `order` (one row per key in key order, a
    /// deletion before the row of its key's later occurrences,
    /// ``RowArena/onePerKey(_:keys:combining:disagreeing:)``) whose key is
    /// written again in the batch. O(rows).
    static func rewritten(_ rows: RowArena, _ order: [Int], _ keys: [Int]) -> Set<Int> {
        var rewritten: Set<Int> = []
        for (index, row) in order.enumerated().dropLast() where rows.isDeletion(row) {
            let next = order[index + 1]
            if !rows.isDeletion(next) && rows.compare(row: row, keys, with: next, of: rows) == 0 {
                rewritten.insert(row)
            }
        }
        return rewritten
    }

    /// Whether table `name` stores the key held by `cells` of row `row` (its
    /// key columns' values, in order). One descent of the key's index.
    func stores(
        _ name: String, _ rows: RowArena, _ row: Int, cells: Range<Int>, _ bytes: UnsafeBufferPointer<UInt8>
    ) throws(StoreError) -> Bool {
        guard let table = tables[name], table.schema.keyColumns.count == cells.count else { return false }
        if table.keyExists == nil {
            let match = table.schema.keyColumns.enumerated().map {
                "\(quoted(table.schema.columns[$0.element].name)) = ?\($0.offset + 1)"
            }
            table.keyExists = try SQLiteStatement(
                connection, "SELECT 1 FROM \(quoted(name)) WHERE \(match.joined(separator: " AND "))",
                "preparing the key check of \(quoted(name))")
            table.keyCheck = "looking for a key in \(quoted(name))"
        }
        guard let statement = table.keyExists else { return false }
        statement.reset()
        // A statement left on its row keeps its table busy: a DROP INDEX on
        // the same connection then fails with SQLITE_LOCKED.
        defer { statement.rewind() }
        for (position, cell) in cells.enumerated() {
            bind(statement.handle, Int32(position + 1), rows[row, cell], bytes)
        }
        return try statement.step(table.keyCheck)
    }
}
