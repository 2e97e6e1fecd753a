import CSluiceSQLite3
import SluiceRecords

/// Rows a change file deletes by key (`delete-records`, `delete-when`): the
/// row and every link from it go, in the batch's transaction.
extension SQLiteStore {
    /// Deletes the stored rows with the keys of `rows` at `positions`, and
    /// their links; returns how many rows were stored. O(keys × log n).
    func deleteKeys(
        _ rows: RowArena, _ positions: [Int], _ bytes: UnsafeBufferPointer<UInt8>, _ table: TableState
    ) throws(StoreError) -> Int {
        let schema = table.schema
        if table.deleteByKey.isEmpty {
            let action = "preparing the deletions of \(quoted(schema.name))"
            let match = schema.keyColumns.enumerated().map { "\(quoted(schema.columns[$0.element].name)) = ?\($0.offset + 1)" }
            table.deleteByKey = [try SQLiteStatement(connection, "DELETE FROM \(quoted(schema.name)) WHERE \(match.joined(separator: " AND "))", action)]
            for link in linkSchemas where link.sourceTable == schema.name {
                let sources = link.sourceColumns.enumerated().map { "\(quoted($0.element.name)) = ?\($0.offset + 1)" }
                table.deleteByKey.append(try SQLiteStatement(
                    connection, "DELETE FROM \(quoted(link.name)) WHERE \(sources.joined(separator: " AND "))", action))
            }
        }
        table.deletedByKey = true
        var deleted = 0
        for row in positions {
            for (index, statement) in table.deleteByKey.enumerated() {
                statement.reset()
                for (position, column) in schema.keyColumns.enumerated() {
                    bind(statement.handle, Int32(position + 1), rows[row, column], bytes)
                }
                let changed = try statement.run("deleting a row of \(quoted(schema.name)) by key")
                if index == 0 { deleted += changed }
            }
        }
        return deleted
    }

    /// Whether the source of link row `row` is still stored, when this run
    /// deleted rows of the link's source table (a record written, then
    /// deleted later in the run, keeps no links). True otherwise, with no
    /// look-up.
    func sourceStands(_ rows: RowArena, _ row: Int, _ link: LinkSchema, _ bytes: UnsafeBufferPointer<UInt8>) throws(StoreError) -> Bool {
        guard let source = tables[link.sourceTable], source.deletedByKey else { return true }
        if source.sourceExists == nil {
            let match = link.sourceKeys.enumerated().map { "\(quoted($0.element)) = ?\($0.offset + 1)" }
            source.sourceExists = try SQLiteStatement(
                connection, "SELECT 1 FROM \(quoted(link.sourceTable)) WHERE \(match.joined(separator: " AND "))",
                "preparing the source check of \(quoted(link.name))")
        }
        guard let statement = source.sourceExists else { return true }
        statement.reset()
        for column in 0..<link.sourceColumns.count { bind(statement.handle, Int32(column + 1), rows[row, column], bytes) }
        return try statement.step("checking the source of \(quoted(link.name))")
    }
}
