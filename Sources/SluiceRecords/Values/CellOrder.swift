/// SQLite's order of values, for cells of one arena or of two: NULL (and
/// absent), then numbers (integers and reals compared by value), then text,
/// then blobs, text and blobs bytewise. The store's key lookups and the
/// key-ordered apply sort with it, so their order is the order of SQLite's
/// `ORDER BY` on a key column.
extension RowArena {
    /// -1, 0 or 1 as `left` (of `self`) sorts before, with or after `right`
    /// (of `other`). O(length of the shorter text).
    package func compare(_ left: Cell, _ right: Cell, of other: RowArena) -> Int {
        switch (left, right) {
        case (.integer(let a), .integer(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.text, .text), (.blob, .blob):
            return withText(left) { a in
                other.withText(right) { b in
                    let common = min(a.count, b.count)
                    for index in 0..<common where a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
                    return a.count < b.count ? -1 : (a.count > b.count ? 1 : 0)
                }
            }
        case (.real(let a), .real(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.integer(let a), .real(let b)): return Double(a) < b ? -1 : (Double(a) > b ? 1 : 0)
        case (.real(let a), .integer(let b)): return a < Double(b) ? -1 : (a > Double(b) ? 1 : 0)
        default: return Self.rank(left) - Self.rank(right)
        }
    }

    /// -1, 0 or 1 as two cells of this arena sort.
    package func compare(_ left: Cell, _ right: Cell) -> Int { compare(left, right, of: self) }

    /// Compares row `row`'s `columns` with row `otherRow` of `other`, column
    /// by column.
    package func compare(row: Int, _ columns: [Int], with otherRow: Int, of other: RowArena) -> Int {
        for column in columns {
            let order = compare(self[row, column], other[otherRow, column], of: other)
            if order != 0 { return order }
        }
        return 0
    }

    private static func rank(_ cell: Cell) -> Int {
        switch cell {
        case .absent, .null: return 0
        case .integer, .real: return 1
        case .text, .spilledText: return 2
        case .blob, .spilledBlob: return 3
        }
    }
}
