@_spi(Machinery) import SluiceRecords
import SluiceStore

/// The merge of one entity batch, as the SQLite store does it: deletions
/// by key first, then per key insert new,
/// update changed, count unchanged, under the entity's write mode.
extension MemoryStore {
    /// What a batch row is to its table.
    enum RowStatus { case new, changed, unchanged, skipped }

    /// Merges the rows of `rows` at `order` into `schema`'s table (made or
    /// widened first) and returns the counts. A dictionary access per row.
    func merge(_ rows: RowArena, _ order: [Int], into schema: TableSchema) throws(StoreError) -> EntityCounts {
        if schemas[schema.name]?.columns.count != schema.columns.count { try ensureTable(schema) }
        let keys = schema.keyColumns
        let mode = schema.mode
        var order = order
        var counts = EntityCounts()
        guard var table = state.tables[schema.name] else {
            throw failure("writing \"\(schema.name)\"", "no such table")
        }
        let columns = try positions(of: schema, in: table)
        if !rows.deletions.isEmpty {
            // Deletions go first: a key deleted and written again in the
            // batch is then written as new.
            let deletions = order.filter { rows.isDeletion($0) }
            order.removeAll { rows.isDeletion($0) }
            for row in deletions {
                let key = keys.map { table.columns[columns[$0]].affinity.stored(MemoryValue(rows, rows[row, $0])) }
                if table.replace(key, with: nil) != nil { counts.deleted += 1 }
                deleteLinks(from: schema.name, source: key)
            }
            deletedByKey.insert(schema.name)
        }
        for row in order {
            let key = keys.map { table.columns[columns[$0]].affinity.stored(MemoryValue(rows, rows[row, $0])) }
            var status = RowStatus.new
            if !keys.isEmpty, let stored = table.rows[key] {
                let same = mode == .insertOnly || sameValues(rows, row, stored, columns, schema, mode)
                status = same ? .unchanged : .changed
            } else if mode == .updateOnly {
                status = .skipped
            }
            switch status {
            case .new:
                counts.inserted += 1
                try insert(rows, row, into: &table, columns, schema)
            case .changed:
                counts.updated += 1
                update(rows, row, key, in: &table, columns, schema, mode)
            case .unchanged: counts.unchanged += 1
            case .skipped: counts.skipped += 1
            }
        }
        state.tables[schema.name] = table
        if seenTracked.contains(schema.name) {
            for row in order {
                let key = keys.map { MemoryAffinity(schema.columns[$0].type).stored(MemoryValue(rows, rows[row, $0])) }
                state.seenKeys[schema.name, default: []].insert(key)
            }
        }
        return counts
    }

    /// The table column of each of `schema`'s columns.
    func positions(of schema: TableSchema, in table: MemoryTable) throws(StoreError) -> [Int] {
        var positions: [Int] = []
        for column in schema.columns {
            guard let position = table.column(column.name) else {
                throw failure("writing \"\(schema.name)\"", "the table has no column named \(column.name)")
            }
            positions.append(position)
        }
        return positions
    }

    /// Inserts row `row`: its present cells, and when no column has a
    /// default its absent ones as null; the table's other columns take
    /// their default.
    private func insert(
        _ rows: RowArena, _ row: Int, into table: inout MemoryTable, _ columns: [Int], _ schema: TableSchema
    ) throws(StoreError) {
        let insertsAll = !schema.columns.contains { $0.defaultValue != nil }
        var values: [Int: MemoryValue] = [:]
        for (index, position) in columns.enumerated() where rows[row, index] != .absent || insertsAll {
            values[position] = MemoryValue(rows, rows[row, index])
        }
        if case .failure(let error) = table.insert(values, orIgnore: false) {
            throw failure("inserting into \"\(schema.name)\"", error.message)
        }
    }

    /// Updates the stored row of `key`: its present updatable cells, and in
    /// `replace` mode the absent ones back to their default.
    private func update(
        _ rows: RowArena, _ row: Int, _ key: [MemoryValue], in table: inout MemoryTable, _ columns: [Int],
        _ schema: TableSchema, _ mode: WriteMode
    ) {
        guard var stored = table.rows[key] else { return }
        for (index, position) in columns.enumerated() where BatchRows.isUpdatable(index, schema) {
            let cell = rows[row, index]
            if cell != .absent {
                stored[position] = table.columns[position].affinity.stored(MemoryValue(rows, cell))
            } else if mode == .replace {
                let value = MemoryValue(schema.columns[index].defaultValue)
                stored[position] = table.columns[position].affinity.stored(value)
            }
        }
        table.replace(key, with: stored)
    }

    /// Whether every cell an update would write equals the stored value, as
    /// the SQLite store judges it: the present updatable cells, and in
    /// `replace` mode the absent ones, compared with their default.
    private func sameValues(
        _ rows: RowArena, _ row: Int, _ stored: [MemoryValue], _ columns: [Int], _ schema: TableSchema,
        _ mode: WriteMode
    ) -> Bool {
        for (index, position) in columns.enumerated() where BatchRows.isUpdatable(index, schema) {
            let value = stored[position]
            switch rows[row, index] {
            case .absent:
                guard mode == .replace else { continue }
                if value != MemoryValue(schema.columns[index].defaultValue) { return false }
            case .null: if value != .null { return false }
            case .integer(let number):
                switch value {
                case .real(let real): if real != Double(number) { return false }
                case .integer(let integer): if integer != number { return false }
                default: return false
                }
            case .real(let number):
                switch value {
                case .integer(let integer): if Double(integer) != number { return false }
                case .real(let real): if real != number { return false }
                default: return false
                }
            case .text, .spilledText:
                // A numeric column keeps text that reads as a number as that
                // number: the same value when its text reads back the same.
                if case .blob = value { return false }
                guard let text = value.text, text == MemoryValue(rows, rows[row, index]).text else { return false }
            case .blob, .spilledBlob:
                guard case .blob = value, value == MemoryValue(rows, rows[row, index]) else { return false }
            }
        }
        return true
    }

    /// SQLite's order of a batch cell and a stored value (the cell as it
    /// is, without the column's conversion).
    func compare(_ rows: RowArena, _ cell: Cell, _ stored: MemoryValue) -> Int {
        MemoryValue.compare(MemoryValue(rows, cell), stored)
    }
}
