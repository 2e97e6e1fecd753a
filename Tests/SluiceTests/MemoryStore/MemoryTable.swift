import SluiceStore

/// One column of a memory table, as its table was made: name, type and the
/// default an insert that does not name it takes.
struct MemoryColumn {
    var name: String
    var affinity: MemoryAffinity
    var defaultValue: MemoryValue = .null
}

/// A table of the memory store: its columns, its primary key, and its rows
/// by key. Rows of a table without a key are keyed by a row id. A link
/// table's rows are also found by their source (the key's first columns),
/// as SQLite finds them by the primary key's prefix. Every operation is a
/// dictionary access, but ``removeAll(where:)``, which scans the rows.
struct MemoryTable {
    var columns: [MemoryColumn]
    /// The primary key's columns, in key order; empty keys rows by row id.
    var key: [Int]
    private(set) var rows: [[MemoryValue]: [MemoryValue]] = [:]
    /// How many of the key's first columns also index the rows (a link
    /// table's source columns); 0 for none.
    private let prefixLength: Int
    /// The keys of the rows, by their first ``prefixLength`` values.
    private var byPrefix: [ArraySlice<MemoryValue>: Set<[MemoryValue]>] = [:]
    /// The row id the next row of a keyless table gets.
    private var nextRowID: Int64 = 1

    init(columns: [MemoryColumn], key: [Int], prefixLength: Int = 0) {
        self.columns = columns
        self.key = key
        self.prefixLength = prefixLength
    }

    /// Sets (or with nil removes) the row of `key`; returns the row it
    /// replaced.
    @discardableResult
    mutating func replace(_ key: [MemoryValue], with row: [MemoryValue]?) -> [MemoryValue]? {
        let old = row.map { rows.updateValue($0, forKey: key) } ?? rows.removeValue(forKey: key)
        if prefixLength > 0 {
            let prefix = key.prefix(prefixLength)
            if row == nil { byPrefix[prefix]?.remove(key) } else { byPrefix[prefix, default: []].insert(key) }
        }
        return old
    }

    /// Changes every row with `transform`, their keys left as they are.
    mutating func transformRows(_ transform: ([MemoryValue]) -> [MemoryValue]) {
        rows = rows.mapValues(transform)
    }

    /// The rows whose key starts with `prefix` (``prefixLength`` values, as
    /// the columns store them).
    func rows(withPrefix prefix: [MemoryValue]) -> [[MemoryValue]] {
        (byPrefix[prefix[...]] ?? []).compactMap { rows[$0] }
    }

    /// Removes the rows whose key starts with `prefix`; returns how many.
    mutating func removeRows(withPrefix prefix: [MemoryValue]) -> Int {
        let keys = byPrefix.removeValue(forKey: prefix[...]) ?? []
        for key in keys { rows[key] = nil }
        return keys.count
    }

    /// The index of the column named `name` (letter case ignored, as SQLite
    /// does).
    func column(_ name: String) -> Int? {
        let lowered = name.lowercased()
        return columns.firstIndex { $0.name.lowercased() == lowered }
    }

    /// `values` (one per column) converted as the columns store them.
    func stored(_ values: [MemoryValue]) -> [MemoryValue] {
        zip(columns, values).map { $0.affinity.stored($1) }
    }

    /// The key of a stored row.
    func key(of row: [MemoryValue]) -> [MemoryValue] { key.map { row[$0] } }

    /// Inserts a row holding `values` (by column index, converted by their
    /// columns) and every other column's default. A row whose key is
    /// stored already is left out (`INSERT OR IGNORE`), or refused; so is a
    /// key with a null, but for a lone integer key, which takes the next
    /// row id (SQLite's rowid alias). Returns whether the row went in.
    mutating func insert(_ values: [Int: MemoryValue], orIgnore: Bool) -> Result<Bool, MemoryTableError> {
        var row = columns.map { $0.affinity.stored($0.defaultValue) }
        for (column, value) in values { row[column] = columns[column].affinity.stored(value) }
        if key.count == 1, row[key[0]] == .null, columns[key[0]].affinity == .integer {
            let greatest = rows.keys.compactMap { key -> Int64? in
                guard case .integer(let id) = key[0] else { return nil }
                return id
            }.max()
            row[key[0]] = .integer((greatest ?? 0) + 1)
        }
        let rowKey: [MemoryValue]
        if key.isEmpty {
            rowKey = [.integer(nextRowID)]
            nextRowID += 1
        } else {
            rowKey = key(of: row)
            if rowKey.contains(.null) { return orIgnore ? .success(false) : .failure(.nullKey) }
            if rows[rowKey] != nil { return orIgnore ? .success(false) : .failure(.duplicateKey) }
        }
        replace(rowKey, with: row)
        return .success(true)
    }

    /// Removes the rows `matches` accepts; returns how many went. O(rows).
    mutating func removeAll(where matches: ([MemoryValue]) -> Bool) -> Int {
        let keys = rows.filter { matches($0.value) }.keys
        for key in keys { replace(key, with: nil) }
        return keys.count
    }
}

/// Why a memory table refused an insert: SQLite's constraint errors.
enum MemoryTableError: Error {
    case nullKey
    case duplicateKey

    var message: String {
        switch self {
        case .nullKey: return "NOT NULL constraint failed on the key"
        case .duplicateKey: return "UNIQUE constraint failed on the key"
        }
    }
}
