import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// The merge of one entity batch: one row per key copied into the staging
/// table with the number of its group (rows that mention the same columns
/// share a statement; -1 for deletions), then one set-based statement per
/// group.
extension PostgresStore {
    /// The group number of a change file's deletions in the staging table.
    static let deletionGroup = -1

    package func merge(_ rows: RowArena, _ order: [Int], into batchSchema: TableSchema) throws(StoreError)
        -> EntityCounts
    {
        let table = try table(for: batchSchema)
        let schema = table.schema
        let mode = schema.mode
        var masks: [ColumnMask] = []
        var groupOf: [ColumnMask: Int] = [:]
        var groups: [Int] = []
        var sizes: [Int] = []
        var deletions = 0
        for row in order {
            if rows.isDeletion(row) {
                groups.append(Self.deletionGroup)
                deletions += 1
                continue
            }
            var mask = ColumnMask()
            for column in 0..<schema.columns.count where rows[row, column] != .absent { mask.insert(column) }
            let group = groupOf[mask] ?? masks.count
            if group == masks.count {
                groupOf[mask] = group
                masks.append(mask)
                sizes.append(0)
            }
            sizes[group] += 1
            groups.append(group)
        }
        if deletions == 0, let counts = try loadDirectly(rows, order, groups, masks, into: table) { return counts }
        // A second batch of the entity in the group reuses its staging
        // table: the first one's stubs go before it is refilled.
        if let earlier = table.unstubbed { try stubStaged(earlier, table) }
        let stage = try stageTable(table)
        try copyRows(rows, order, groups, columns: Array(schema.columns.indices), into: stage, table)
        table.unstubbed = batchSchema
        // The statements that join the staged rows to the table need the
        // staging table's statistics (see ``applyLinks(_:_:entity:mixedKeys:)``); the merge
        // reads it once in order and does not.
        if deletions > 0 || mode == .updateOnly {
            try connection.execute("ANALYZE \(stage)", "analysing the staged rows of \(pgQuoted(table.schema.name))")
        }
        var counts = EntityCounts()
        if deletions > 0 { counts.deleted = try deleteStaged(stage, table) }
        for (group, mask) in masks.enumerated() {
            counts.add(try write(group: group, mask, size: sizes[group], stage, table, mode))
        }
        if seenTracked.contains(schema.name) { try markSeen(stage, table) }
        return counts
    }

    /// Records the keys of `keys` (key columns only) as seen when
    /// `schema`'s entity's keys are tracked: staged as a batch's rows are (one
    /// `COPY` of the key columns), then one insert into the seen-keys table,
    /// in one transaction.
    package func markSeen(_ keys: RowArena, of schema: TableSchema) throws(StoreError) {
        guard seenTracked.contains(schema.name), keys.rowCount > 0 else { return }
        try beginGroup()
        do throws(StoreError) {
            let table = try table(for: schema)
            try markSeen(try stageKeys(keys, table), table)
            try commitGroup()
        } catch {
            rollbackGroup()
            throw error
        }
    }

    /// Records the keys each sweep in proportion may delete
    /// (``ImportStore/markRemoved(_:)``): for each entity, its table of them
    /// made anew and filled from the staged keys (one `COPY`, one insert),
    /// then analysed so that the sweep looks each one up; all in one
    /// transaction under the schema lock.
    package func markRemoved(_ candidates: [(schema: TableSchema, keys: RowArena)]) throws(StoreError) {
        let action = "recording the keys of records gone from the input"
        try withSchemaLock(action) { () throws(StoreError) in
            for (schema, keys) in candidates where seenTracked.contains(schema.name) {
                let table = try table(for: schema)
                let removed = Self.removedTable(schema.name)
                try connection.execute("DROP TABLE IF EXISTS \(pgQuoted(removed))", action)
                try connection.execute(Self.keyTable(removed, of: schema), action)
                if keys.rowCount > 0 { try markSeen(try stageKeys(keys, table), table, into: pgQuoted(removed)) }
                try connection.execute("ANALYZE \(pgQuoted(removed))", action)
            }
        }
    }

    /// Copies `keys` (rows of `table`'s key columns alone) into its staging
    /// table, which it returns.
    private func stageKeys(_ keys: RowArena, _ table: Table) throws(StoreError) -> String {
        let stage = try stageTable(table)
        let order = Array(0..<keys.rowCount)
        try copyRows(
            keys, order, Array(repeating: 0, count: order.count), columns: table.schema.keyColumns, into: stage, table)
        return stage
    }

    /// The temporary table this connection copies `table`'s batches into:
    /// the group number, then a column per table column, of its staging
    /// type. Made again when the table gained columns.
    private func stageTable(_ table: Table) throws(StoreError) -> String {
        if let stage = table.stage, table.stageColumns == table.schema.columns.count {
            if !stagedInTransaction.insert(stage).inserted {
                try connection.execute(
                    "TRUNCATE \(stage)", "emptying the staging table of \(pgQuoted(table.schema.name))")
            }
            return stage
        }
        if let old = table.stage { try connection.execute("DROP TABLE \(old)", "dropping a staging table") }
        stagingTables += 1
        let stage = pgQuoted("_sluice_stage_\(stagingTables)")
        let columns = table.types.enumerated().map { "c\($0.offset) \($0.element.staging)" }
        try connection.execute(
            "CREATE TEMP TABLE \(stage) (_group bigint NOT NULL\(columns.map { ", " + $0 }.joined())) \(Self.emptiedAtCommit)",
            "making the staging table of \(pgQuoted(table.schema.name))")
        table.stage = stage
        table.stageColumns = table.schema.columns.count
        stagedInTransaction.insert(stage)
        return stage
    }

    /// Copies the rows at `order` with their group numbers, in key order.
    /// Streams a spilled value (text into a text column, bytes into a
    /// bytea one: their binary forms are the raw bytes) from the arena's side
    /// file into the COPY, a piece at a time. O(value).
    private static func copySpilled(
        _ rows: RowArena, _ descriptor: Int32, _ length: Int32, into buffer: inout CopyBuffer, path: String,
        _ action: String
    ) throws(StoreError) {
        let failure =
            rows.spill.map { buffer.field(length: Int(length), at: rows.spilledOffset(descriptor), in: $0) }
            ?? "no side file holds it"
        guard let failure else { return }
        throw StoreError(
            path: rows.spill?.path ?? path, action: action, message: "reading a large value back: \(failure)",
            cause: .io)
    }

    /// `columns` names the table column each arena column holds (every
    /// column of a batch; the key columns of ``markSeen(_:of:)``'s rows).
    private func copyRows(
        _ rows: RowArena, _ order: [Int], _ groups: [Int], columns: [Int], into stage: String, _ table: Table
    ) throws(StoreError) {
        let names = (["_group"] + columns.map { "c\($0)" }).joined(separator: ", ")
        let action = "copying rows into \(pgQuoted(table.schema.name))"
        try connection.copy("COPY \(stage) (\(names)) FROM STDIN (FORMAT binary)", action) {
            (buffer) throws(StoreError) in
            try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
                for (position, row) in order.enumerated() {
                    buffer.beginRow(fields: columns.count + 1)
                    buffer.int64(Int64(groups[position]))
                    for (cell, column) in columns.enumerated() {
                        try encode(rows, row, cell, as: column, of: table, bytes, into: &buffer, action)
                    }
                }
            }
        }
    }

    /// Writes cell `cell` of row `row` into the COPY as a value of `table`'s
    /// column `column`: a spilled value streamed from the side file, any
    /// other converted by the column's type; a value the type cannot hold
    /// fails naming the record and the column. O(value).
    func encode(
        _ rows: RowArena, _ row: Int, _ cell: Int, as column: Int, of table: Table, _ bytes: UnsafeBufferPointer<UInt8>,
        into buffer: inout CopyBuffer, _ action: String
    ) throws(StoreError) {
        if case .spilledText(let descriptor, let length) = rows[row, cell] {
            try Self.copySpilled(rows, descriptor, length, into: &buffer, path: name, action)
            return
        }
        if case .spilledBlob(let descriptor, let length) = rows[row, cell] {
            try Self.copySpilled(rows, descriptor, length, into: &buffer, path: name, action)
            return
        }
        do throws(CellMismatch) {
            try table.types[column].encode(rows[row, cell], bytes, into: &buffer)
        } catch {
            throw StoreError(
                path: name, action: action,
                message:
                    "record \(KeyOrderSorter.record(ofOrdinal: rows.ordinals[row])): column \(pgQuoted(table.schema.columns[column].name)) is "
                    + "\(table.types[column].sql), and the value \(error.cell) is not one", code: 0)
        }
    }

    /// `s.cN` for the key columns, as values of their types.
    func stagedKey(_ table: Table, _ alias: String = "s") -> [String] {
        table.schema.keyColumns.map { table.types[$0].fromStaging("\(alias).c\($0)") }
    }

    /// `t.k = s.ck AND …` for the key columns.
    func keyMatch(_ table: Table, _ stored: String = "t", _ staged: String = "s") -> String {
        zip(table.schema.keyColumns, stagedKey(table, staged)).map {
            "\(stored).\(pgQuoted(table.schema.columns[$0].name)) = \($1)"
        }
        .joined(separator: " AND ")
    }

    /// Inserts the group's new rows and updates its changed ones; counts
    /// what each row was.
    private func write(
        group: Int, _ mask: ColumnMask, size: Int, _ stage: String, _ table: Table, _ mode: WriteMode
    ) throws(StoreError) -> EntityCounts {
        let schema = table.schema
        let target = pgQuoted(schema.name)
        let present = schema.columns.indices.filter { mask.contains($0) }
        let names = present.map { pgQuoted(schema.columns[$0].name) }.joined(separator: ", ")
        let values = present.map { table.types[$0].fromStaging("s.c\($0)") }.joined(separator: ", ")
        let rows = "SELECT \(values) FROM \(stage) s WHERE s._group = \(group)"
        let action = "writing \(target)"
        var counts = EntityCounts()
        guard !schema.keyColumns.isEmpty else {
            counts.inserted = try connection.execute("INSERT INTO \(target) (\(names)) \(rows)", action).affected
            return counts
        }
        let keyNames = schema.keyColumns.map { pgQuoted(schema.columns[$0].name) }.joined(separator: ", ")
        // The columns an update writes: present ones, and under `replace`
        // the absent ones too (back to their default).
        let updated = schema.columns.indices.filter {
            BatchRows.isUpdatable($0, schema) && (mask.contains($0) || mode == .replace)
        }
        if mode == .updateOnly {
            let assignments = updated.map { column in
                "\(pgQuoted(schema.columns[column].name)) = "
                    + (mask.contains(column)
                        ? table.types[column].fromStaging("s.c\(column)")
                        : Self.literal(schema.columns[column].defaultValue, table.types[column].sql))
            }
            let changedRows: Int
            if updated.isEmpty {
                changedRows = 0
            } else {
                let stored = updated.map { "t.\(pgQuoted(schema.columns[$0].name))" }.joined(separator: ", ")
                let new = updated.map {
                    mask.contains($0)
                        ? table.types[$0].fromStaging("s.c\($0)")
                        : Self.literal(schema.columns[$0].defaultValue, table.types[$0].sql)
                }
                changedRows = try connection.execute(
                    "UPDATE \(target) t SET \(assignments.joined(separator: ", ")) FROM \(stage) s WHERE s._group = \(group) AND \(keyMatch(table)) "
                        + "AND (\(stored)) IS DISTINCT FROM (\(new.joined(separator: ", ")))", action
                ).affected
            }
            let matched = try connection.execute(
                "SELECT count(*) FROM \(stage) s WHERE s._group = \(group) AND EXISTS (SELECT 1 FROM \(target) t WHERE \(keyMatch(table)))",
                action
            ).int(0, 0)
            counts.updated = changedRows
            counts.unchanged = matched - changedRows
            counts.skipped = size - matched
            return counts
        }
        let conflict: String
        var candidates = rows
        if mode == .insertOnly || updated.isEmpty {
            conflict = "DO NOTHING"
        } else {
            let columns = updated.map { pgQuoted(schema.columns[$0].name) }
            conflict =
                "DO UPDATE SET \(columns.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")) "
                + "WHERE (\(columns.map { "t.\($0)" }.joined(separator: ", "))) IS DISTINCT FROM (\(columns.map { "excluded.\($0)" }.joined(separator: ", ")))"
            // Rows equal to the stored ones are left out before the upsert:
            // ON CONFLICT DO UPDATE locks a conflicting row even when its
            // WHERE is false, which dirties the page and writes WAL for
            // every unchanged row (200,000 events again: 12 MB of WAL
            // against 600 kB without those locks).
            let new = updated.map {
                mask.contains($0)
                    ? table.types[$0].fromStaging("s.c\($0)")
                    : Self.literal(schema.columns[$0].defaultValue, table.types[$0].sql)
            }
            candidates +=
                " AND NOT EXISTS (SELECT 1 FROM \(target) u WHERE \(keyMatch(table, "u")) "
                + "AND (\(columns.map { "u.\($0)" }.joined(separator: ", "))) IS NOT DISTINCT FROM (\(new.joined(separator: ", "))))"
        }
        let result = try connection.execute(
            "WITH w AS (INSERT INTO \(target) AS t (\(names)) \(candidates) ORDER BY \(stagedKey(table).joined(separator: ", ")) "
                + "ON CONFLICT (\(keyNames)) \(conflict) RETURNING (xmax = 0) AS new) "
                + "SELECT count(*) FILTER (WHERE new), count(*) FILTER (WHERE NOT new) FROM w", action)
        counts.inserted = result.int(0, 0)
        counts.updated = result.int(0, 1)
        counts.unchanged = size - counts.inserted - counts.updated
        return counts
    }

    /// Deletes the stored rows whose keys the batch deletes, and every link
    /// from them, in one statement; returns how many rows were stored.
    private func deleteStaged(_ stage: String, _ table: Table) throws(StoreError) -> Int {
        let schema = table.schema
        let keys = schema.keyColumns.map { pgQuoted(schema.columns[$0].name) }
        let sourceLinks = linkSchemas.filter { $0.sourceTable == schema.name }
        var parts = [
            "gone AS (DELETE FROM \(pgQuoted(schema.name)) t USING \(stage) s WHERE s._group = \(Self.deletionGroup) "
                + "AND \(keyMatch(table)) RETURNING \(keys.map { "t.\($0)" }.joined(separator: ", ")))"
        ]
        for (index, link) in sourceLinks.enumerated() {
            parts.append(goneLinksDeletion(link, index, keys: keys))
        }
        let counts = (["(SELECT count(*) FROM gone)"] + sourceLinks.indices.map { "(SELECT count(*) FROM l\($0))" })
            .joined(separator: ", ")
        let result = try connection.execute(
            "WITH \(parts.joined(separator: ", ")) SELECT \(counts)", "deleting rows of \(pgQuoted(schema.name)) by key"
        )
        table.deletedByKey = true
        for (index, link) in sourceLinks.enumerated() {
            sideWrites.linksRemoved[link.name, default: 0] += result.int(0, index + 1)
        }
        return result.int(0, 0)
    }

    /// Creates the stubs of the batch merged last into `schema`'s table,
    /// from its staging table, unless a refill made them already.
    package func stubReferences(_ rows: RowArena, _ schema: TableSchema) throws(StoreError) {
        guard let table = tables[schema.name], let staged = table.unstubbed else { return }
        try stubStaged(staged, table)
    }

    /// Creates stub rows for the staged batch's to-one references whose
    /// relationship asks for them: one statement per reference.
    private func stubStaged(_ schema: TableSchema, _ table: Table) throws(StoreError) {
        table.unstubbed = nil
        guard let stage = table.stage else { return }
        for reference in schema.references where reference.missing == .stub {
            let value = table.types[reference.column].fromStaging("s.c\(reference.column)")
            let created = try connection.execute(
                "INSERT INTO \(pgQuoted(reference.targetTable)) (\(pgQuoted(reference.targetKey))) "
                    + "SELECT DISTINCT \(value) FROM \(stage) s WHERE s._group <> \(Self.deletionGroup) AND s.c\(reference.column) IS NOT NULL "
                    + "ORDER BY 1 ON CONFLICT DO NOTHING",
                "creating stubs in \(pgQuoted(reference.targetTable))"
            ).affected
            sideWrites.stubs[reference.targetTable, default: 0] += created
        }
    }
}
