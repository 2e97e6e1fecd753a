import CSluiceSQLite3
@_spi(Machinery) import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension SQLiteStore {
    /// Fetches the stored rows for the batch's keys, `lookupKeys` keys per
    /// query, and marks each row new, changed or unchanged by walking the
    /// sorted rows and the sorted results side by side.
    func lookUp(
        _ rows: RowArena, _ order: [Int], _ bytes: UnsafeBufferPointer<UInt8>, _ table: TableState, _ mode: WriteMode,
        _ status: inout [RowStatus]
    ) throws(StoreError) {
        let schema = table.schema
        let keys = schema.keyColumns
        let capacity = max(1, min(options.lookupKeys, 32_000 / keys.count))
        if table.lookup == nil || table.lookupColumns != schema.columns.count {
            table.lookup = nil
            let columns = schema.columns.map { quoted($0.name) }.joined(separator: ", ")
            let keyNames = keys.map { quoted(schema.columns[$0].name) }.joined(separator: ", ")
            let condition: String
            if keys.count == 1 {
                condition = "\(keyNames) IN (\(Array(repeating: "?", count: capacity).joined(separator: ",")))"
            } else {
                let tuple = "(" + Array(repeating: "?", count: keys.count).joined(separator: ",") + ")"
                condition =
                    "(\(keyNames)) IN (VALUES \(Array(repeating: tuple, count: capacity).joined(separator: ",")))"
            }
            table.lookup = try SQLiteStatement(
                connection, "SELECT \(columns) FROM \(quoted(schema.name)) WHERE \(condition) ORDER BY \(keyNames)",
                "preparing the lookup of \(quoted(schema.name))")
            table.lookupColumns = schema.columns.count
        }
        guard let lookup = table.lookup else { return }
        let statement = lookup.handle
        let action = "looking up keys in \(quoted(schema.name))"
        var start = 0
        while start < order.count {
            let end = min(start + capacity, order.count)
            lookup.rewind()
            for slot in 0..<capacity {
                // Unused slots repeat the last key: the statement is prepared once.
                let row = order[min(start + slot, end - 1)]
                for (position, column) in keys.enumerated() {
                    bind(statement, Int32(slot * keys.count + position + 1), rows[row, column], bytes)
                }
            }
            var position = start
            while try lookup.step(action) {
                while position < end, compareKeys(rows, order[position], keys, bytes, statement) < 0 {
                    position += 1
                }
                guard position < end else { break }
                let row = order[position]
                if compareKeys(rows, row, keys, bytes, statement) == 0 {
                    let same = mode == .insertOnly || sameValues(rows, row, statement, schema, mode, bytes)
                    status[position] = same ? .unchanged : .changed
                }
            }
            start = end
        }
    }

    /// Whether row `first` (the batch's smallest key) sorts after every key
    /// stored in the table, as in an empty table: then every row of the
    /// batch is new and needs no lookup. The key-ordered apply into a table
    /// this run fills meets it batch after batch (1 GB events benchmark:
    /// 2,000,000 events and 5,000,000 links inserted without reading the
    /// store). One descent of the key's index.
    func followsStoredKeys(
        _ rows: RowArena, _ first: Int, _ bytes: UnsafeBufferPointer<UInt8>, _ table: TableState
    ) throws(StoreError) -> Bool {
        let schema = table.schema
        let greatest: SQLiteStatement
        if let prepared = table.greatest {
            greatest = prepared
        } else {
            let columns = schema.columns.map { quoted($0.name) }.joined(separator: ", ")
            let descending = schema.keyColumns.map { "\(quoted(schema.columns[$0].name)) DESC" }.joined(separator: ", ")
            greatest = try SQLiteStatement(
                connection, "SELECT \(columns) FROM \(quoted(schema.name)) ORDER BY \(descending) LIMIT 1",
                "preparing the greatest key of \(quoted(schema.name))")
            table.greatest = greatest
        }
        defer { greatest.rewind() }
        return try follows(
            rows, first, schema.keyColumns, bytes, greatest: greatest,
            "reading the greatest key of \(quoted(schema.name))")
    }

    /// Steps `greatest` (which selects the stored row with the greatest key,
    /// its key cells at the positions of `keys`) and tells whether row
    /// `first`'s key sorts after it; true when nothing is stored.
    func follows(
        _ rows: RowArena, _ first: Int, _ keys: [Int], _ bytes: UnsafeBufferPointer<UInt8>, greatest: SQLiteStatement,
        _ action: String
    ) throws(StoreError) -> Bool {
        guard try greatest.step(action) else { return true }
        return compareKeys(rows, first, keys, bytes, greatest.handle) > 0
    }

    /// Inserts the new rows and updates the changed ones, in key order.
    /// Consecutive new rows that set the same columns go in by
    /// ``insertRows`` at a time, one multi-row INSERT each (the same rows in
    /// the same order, each firing its triggers, at about half the
    /// statement's cost a row); the rest, and new rows holding a spilled
    /// value, one statement a row.
    func write(
        _ rows: RowArena, _ order: [Int], _ bytes: UnsafeBufferPointer<UInt8>, _ table: TableState, _ mode: WriteMode,
        _ status: [RowStatus]
    ) throws(StoreError) {
        let schema = table.schema
        // Without column defaults an absent cell inserts NULL as the column
        // would: one insert statement for every row, instead of one per set
        // of present columns (a zero-config table of 1,600 sparse members
        // prepared 1,600 inserts of up to 1,600 columns).
        let insertsAll = !schema.columns.contains { $0.defaultValue != nil }
        let (inserting, updating) = ("inserting into \(quoted(schema.name))", "updating \(quoted(schema.name))")
        let together = Self.insertRows(columns: schema.columns.count)
        // Whether any row may hold a spilled value (the arena has a side file).
        let spills = rows.spill != nil
        // New rows waiting for a multi-row insert, all with `waitingKey`.
        var waiting: [Int] = []
        waiting.reserveCapacity(together)
        var waitingKey = WriteKey(insert: true, present: ColumnMask(), defaulted: ColumnMask())
        func flush() throws(StoreError) {
            var start = 0
            if waiting.count == together, together > 1 {
                var key = waitingKey
                key.rows = together
                try writeRows(rows, waiting[...], key, bytes, table, inserting)
                start = together
            }
            for index in start..<waiting.count {
                try writeRows(rows, waiting[index...index], waitingKey, bytes, table, inserting)
            }
            waiting.removeAll(keepingCapacity: true)
        }
        for (position, row) in order.enumerated() where status[position] == .new || status[position] == .changed {
            let isInsert = status[position] == .new
            var key = WriteKey(insert: isInsert, present: ColumnMask(), defaulted: ColumnMask())
            // A row with a spilled value goes in alone: the statement holds
            // every value it binds in memory (32 rows of 3 MiB: 96 MiB).
            var holdsSpilled = false
            for column in 0..<schema.columns.count {
                let cell = rows[row, column]
                let absent = cell == .absent
                if isInsert {
                    if !absent || insertsAll { key.present.insert(column) }
                    if spills, case .spilledText = cell { holdsSpilled = true }
                    if spills, case .spilledBlob = cell { holdsSpilled = true }
                } else if BatchRows.isUpdatable(column, schema) {
                    if !absent { key.present.insert(column) } else if mode == .replace { key.defaulted.insert(column) }
                }
            }
            if isInsert && !holdsSpilled {
                if !waiting.isEmpty && key != waitingKey { try flush() }
                waitingKey = key
                waiting.append(row)
                if waiting.count == together { try flush() }
            } else {
                try flush()
                try writeRows(rows, order[position...position], key, bytes, table, isInsert ? inserting : updating)
            }
        }
        try flush()
    }

    /// How many rows of `columns` cells one multi-row INSERT takes: 32, fewer
    /// when their parameters would pass 32,000 (SQLite's limit is 32,766).
    static func insertRows(columns: Int) -> Int { max(1, min(32, 32_000 / max(1, columns))) }

    /// Runs `key`'s statement (``WriteKey/rows`` rows of an insert, one row
    /// of an update) for `batchRows`, which are that many. O(cells).
    private func writeRows(
        _ rows: RowArena, _ batchRows: ArraySlice<Int>, _ key: WriteKey, _ bytes: UnsafeBufferPointer<UInt8>,
        _ table: TableState, _ action: String
    ) throws(StoreError) {
        let schema = table.schema
        let write = try statementFor(table, key)
        let statement = write.handle
        write.rewind()
        var parameter: Int32 = 1
        // Spilled values read back for this statement only, freed after it.
        var loaded: [UnsafeMutableRawBufferPointer] = []
        defer { for buffer in loaded { buffer.deallocate() } }
        for row in batchRows {
            for column in 0..<schema.columns.count where key.present.contains(column) {
                switch rows[row, column] {
                case .spilledText(let descriptor, let length), .spilledBlob(let descriptor, let length):
                    let buffer = try readSpilled(rows, descriptor, length, action)
                    loaded.append(buffer)
                    if case .spilledText = rows[row, column] {
                        sqlite3_bind_text(statement, parameter, buffer.baseAddress, length, nil)
                    } else {
                        sqlite3_bind_blob(statement, parameter, buffer.baseAddress, length, nil)
                    }
                default: bind(statement, parameter, rows[row, column], bytes)
                }
                parameter += 1
            }
            if !key.insert {
                for column in schema.keyColumns {
                    bind(statement, parameter, rows[row, column], bytes)
                    parameter += 1
                }
            }
        }
        try write.run(action)
    }

    /// The value of a spilled cell read whole from the arena's side file
    /// into a buffer the caller frees: what SQLite binds (its record holds
    /// the row whole anyway). O(value).
    private func readSpilled(
        _ rows: RowArena, _ descriptor: Int32, _ length: Int32, _ action: String
    ) throws(StoreError) -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, Int(length)), alignment: 8)
        let failure =
            rows.spill.map {
                $0.read(
                    from: rows.spilledOffset(descriptor),
                    into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(length)]))
            } ?? "no side file holds it"
        guard let failure else { return buffer }
        buffer.deallocate()
        throw StoreError(
            path: rows.spill?.path ?? "the run's side file of large values", action: action,
            message: "reading a large value back: \(failure)", cause: .io)
    }

    private func statementFor(_ table: TableState, _ key: WriteKey) throws(StoreError) -> SQLiteStatement {
        if let cached = table.writes[key] { return cached }
        let schema = table.schema
        let present = schema.columns.indices.filter { key.present.contains($0) }
        let sql: String
        if key.insert {
            let names = present.map { quoted(schema.columns[$0].name) }
            let parameters = "(" + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
            let values = Array(repeating: parameters, count: key.rows).joined(separator: ", ")
            sql = "INSERT INTO \(quoted(schema.name)) (\(names.joined(separator: ", "))) VALUES \(values)"
        } else {
            var assignments = present.map { "\(quoted(schema.columns[$0].name)) = ?" }
            for column in schema.columns.indices where key.defaulted.contains(column) {
                assignments.append(
                    "\(quoted(schema.columns[column].name)) = \(sqlLiteral(schema.columns[column].defaultValue))")
            }
            let condition = schema.keyColumns.map { "\(quoted(schema.columns[$0].name)) = ?" }.joined(
                separator: " AND ")
            sql = "UPDATE \(quoted(schema.name)) SET \(assignments.joined(separator: ", ")) WHERE \(condition)"
        }
        let statement = try SQLiteStatement(connection, sql, "preparing writes to \(quoted(schema.name))")
        table.writes[key] = statement
        return statement
    }

    /// Compares row `row`'s key with the current result row's, column by column.
    func compareKeys(
        _ rows: RowArena, _ row: Int, _ keys: [Int], _ bytes: UnsafeBufferPointer<UInt8>, _ statement: OpaquePointer?
    ) -> Int {
        for column in keys {
            let order = compareKey(rows[row, column], bytes, statement, Int32(column))
            if order != 0 { return order }
        }
        return 0
    }

    /// Compares a batch key with the key column of the current result row,
    /// in SQLite's order (NULL, numbers, text bytewise).
    func compareKey(
        _ cell: Cell, _ bytes: UnsafeBufferPointer<UInt8>, _ statement: OpaquePointer?, _ column: Int32
    ) -> Int {
        let type = sqlite3_column_type(statement, column)
        switch (cell, type) {
        case (.integer(let value), SQLITE_INTEGER):
            let stored = sqlite3_column_int64(statement, column)
            return value < stored ? -1 : (value > stored ? 1 : 0)
        case (.integer(let value), SQLITE_FLOAT):
            let stored = sqlite3_column_double(statement, column)
            return Double(value) < stored ? -1 : (Double(value) > stored ? 1 : 0)
        case (.real(let value), SQLITE_INTEGER), (.real(let value), SQLITE_FLOAT):
            let stored = sqlite3_column_double(statement, column)
            return value < stored ? -1 : (value > stored ? 1 : 0)
        case (.text(let offset, let length), SQLITE_TEXT):
            let count = Int(sqlite3_column_bytes(statement, column))
            let common = min(count, Int(length))
            if common > 0, let stored = sqlite3_column_text(statement, column), let base = bytes.baseAddress {
                let order = memcmp(base + Int(offset), stored, common)
                if order != 0 { return order < 0 ? -1 : 1 }
            }
            return Int(length) < count ? -1 : (Int(length) > count ? 1 : 0)
        case (.text, _): return type == SQLITE_BLOB ? -1 : 1
        case (.blob, _): return 1
        case (.integer, SQLITE_TEXT), (.real, SQLITE_TEXT), (.integer, SQLITE_BLOB), (.real, SQLITE_BLOB): return -1
        case (.absent, _), (.null, _): return type == SQLITE_NULL ? 0 : -1
        default: return 1
        }
    }

    /// Whether every cell an update would write equals the stored value: the
    /// present updatable cells, and in replace mode the absent ones, compared
    /// with their default.
    private func sameValues(
        _ rows: RowArena, _ row: Int, _ statement: OpaquePointer?, _ schema: TableSchema, _ mode: WriteMode,
        _ bytes: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        for column in 0..<schema.columns.count where BatchRows.isUpdatable(column, schema) {
            let index = Int32(column)
            let type = sqlite3_column_type(statement, index)
            switch rows[row, column] {
            case .absent:
                guard mode == .replace else { continue }
                switch schema.columns[column].defaultValue {
                case nil: if type != SQLITE_NULL { return false }
                case .integer(let value):
                    if type != SQLITE_INTEGER || sqlite3_column_int64(statement, index) != value { return false }
                case .real(let value):
                    if type != SQLITE_FLOAT || sqlite3_column_double(statement, index) != value { return false }
                case .text(let value):
                    guard type == SQLITE_TEXT, let stored = sqlite3_column_text(statement, index) else { return false }
                    if String(cString: stored) != value { return false }
                }
            case .null: if type != SQLITE_NULL { return false }
            case .integer(let value):
                if type == SQLITE_FLOAT {
                    // A REAL column keeps an integer as a real.
                    if sqlite3_column_double(statement, index) != Double(value) { return false }
                } else if type != SQLITE_INTEGER || sqlite3_column_int64(statement, index) != value {
                    return false
                }
            case .real(let value):
                if type == SQLITE_INTEGER {
                    // An INTEGER column keeps a real with no fraction as an integer.
                    if Double(sqlite3_column_int64(statement, index)) != value { return false }
                } else if type != SQLITE_FLOAT || sqlite3_column_double(statement, index) != value {
                    return false
                }
            case .text(let offset, let length), .blob(let offset, let length):
                if case .text = rows[row, column] {
                    // A numeric column keeps text that reads as a number as that
                    // number: the same value when its text reads back the same.
                    guard type == SQLITE_TEXT || type == SQLITE_INTEGER || type == SQLITE_FLOAT else { return false }
                } else {
                    guard type == SQLITE_BLOB else { return false }
                }
                let stored =
                    type == SQLITE_BLOB
                    ? sqlite3_column_blob(statement, index) : UnsafeRawPointer(sqlite3_column_text(statement, index))
                let count = Int(sqlite3_column_bytes(statement, index))
                guard count == Int(length) else { return false }
                if count > 0, let stored, let base = bytes.baseAddress,
                    memcmp(stored, base + Int(offset), count) != 0
                {
                    return false
                }
            case .spilledText(let descriptor, let length), .spilledBlob(let descriptor, let length):
                if case .spilledText = rows[row, column] {
                    guard type == SQLITE_TEXT else { return false }
                } else {
                    guard type == SQLITE_BLOB else { return false }
                }
                let stored =
                    type == SQLITE_BLOB
                    ? sqlite3_column_blob(statement, index) : UnsafeRawPointer(sqlite3_column_text(statement, index))
                guard Int(sqlite3_column_bytes(statement, index)) == Int(length), let stored, let spill = rows.spill
                else { return false }
                // Compared piece by piece from the side file; a value that
                // cannot be read counts as changed (the write then says why).
                var position = 0
                var same = true
                let failure = spill.forEachChunk(from: rows.spilledOffset(descriptor), length: Int(length)) { piece in
                    same = memcmp(stored + position, piece.baseAddress!, piece.count) == 0
                    position += piece.count
                    return same
                }
                if failure != nil || !same { return false }
            }
        }
        return true
    }

    /// Binds a cell; text is bound without a copy (`bytes` outlives the step).
    func bind(_ statement: OpaquePointer?, _ index: Int32, _ cell: Cell, _ bytes: UnsafeBufferPointer<UInt8>) {
        switch cell {
        case .absent, .null: sqlite3_bind_null(statement, index)
        case .integer(let value): sqlite3_bind_int64(statement, index, value)
        case .real(let value): sqlite3_bind_double(statement, index, value)
        case .text(let offset, let length):
            let base = bytes.baseAddress.map { UnsafeRawPointer($0 + Int(offset)) } ?? UnsafeRawPointer(bitPattern: 1)!
            sqlite3_bind_text(statement, index, base.assumingMemoryBound(to: CChar.self), length, nil)
        case .blob(let offset, let length):
            let base = bytes.baseAddress.map { UnsafeRawPointer($0 + Int(offset)) } ?? UnsafeRawPointer(bitPattern: 1)!
            sqlite3_bind_blob(statement, index, base, length, nil)
        // Keys and links are never spilled (RowMapper); ``write`` reads a
        // spilled attribute back and binds it itself.
        case .spilledText, .spilledBlob: sqlite3_bind_null(statement, index)
        }
    }
}
