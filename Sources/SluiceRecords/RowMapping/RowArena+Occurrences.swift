/// Several occurrences of one key in a batch or a sorted run: a record that
/// comes twice, or a nested object (`friend: {id: 1}`) naming a row that is
/// also a record of its own.
extension RowArena {
    /// One row per key, in key order: `order` is every row sorted by
    /// `keys`, ties in arrival order. A key that occurs once keeps its row.
    /// A key that occurs more often gets, when `combining`, a row appended
    /// to the arena in which each column holds the cell of the last
    /// occurrence that has one (as an update in a later run would leave the
    /// stored row: absent fields keep their value, present ones win), and
    /// otherwise (`replace` mode) its last occurrence. A deletion ends what
    /// came before it: a key whose occurrences include deletions keeps the
    /// last of them, then the row of the occurrences after it, if any (at
    /// most two rows a key, the deletion first). O(rows × columns) for the
    /// rows combined, O(rows) key comparisons.
    /// `disagreeing` is called with the first row of each key whose
    /// occurrences (after its last deletion) are not all alike: the order of
    /// its records decides its row (docs/record-digests.md).
    package mutating func onePerKey(
        _ order: [Int], keys: [Int], combining: Bool, disagreeing: ((Int) -> Void)? = nil
    ) -> [Int] {
        var kept: [Int] = []
        kept.reserveCapacity(order.count)
        var start = 0
        while start < order.count {
            var end = start + 1
            while end < order.count && compare(row: order[start], keys, with: order[end], of: self) == 0 { end += 1 }
            var occurrences = order[start..<end]
            if !deletions.isEmpty, let deletion = occurrences.lastIndex(where: { isDeletion($0) }) {
                kept.append(order[deletion])
                occurrences = order[(deletion + 1)..<end]
            }
            if let disagreeing, occurrences.count > 1, !allAlike(occurrences) { disagreeing(order[start]) }
            if occurrences.count == 1 || (!occurrences.isEmpty && !combining) {
                kept.append(occurrences[occurrences.endIndex - 1])
            } else if !occurrences.isEmpty {
                kept.append(appendCombining(occurrences))
            }
            start = end
        }
        return kept
    }

    /// Whether `rows` hold the same cells, column by column.
    private func allAlike(_ rows: ArraySlice<Int>) -> Bool {
        guard let first = rows.first else { return true }
        return rows.dropFirst().allSatisfy { row in
            (0..<columnCount).allSatisfy { compare(self[first, $0], self[row, $0]) == 0 && sameKind(first, row, $0) }
        }
    }

    private func sameKind(_ left: Int, _ right: Int, _ column: Int) -> Bool {
        switch (self[left, column], self[right, column]) {
        case (.absent, .absent), (.null, .null), (.integer, .integer), (.real, .real), (.text, .text), (.blob, .blob):
            return true
        default: return false
        }
    }

    /// Appends the row combining `rows` (arrival order) and returns its
    /// index; its cells point at the bytes the occurrences' cells do.
    private mutating func appendCombining(_ rows: ArraySlice<Int>) -> Int {
        var combined = [Cell](repeating: .absent, count: columnCount)
        for row in rows {
            for column in 0..<columnCount where self[row, column] != .absent { combined[column] = self[row, column] }
        }
        beginRow(ordinal: ordinals[rows[rows.endIndex - 1]])
        for (column, cell) in combined.enumerated() { set(column, cell) }
        return rowCount - 1
    }
}
