import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// What every store makes of a batch's rows before writing them: one row
/// per key, and per source of a link table the link rows that stand.
package enum BatchRows {
    /// Whether an update may write `column`: not a key column, and listed in
    /// the entity's `overwrite` when it has one.
    package static func isUpdatable(_ column: Int, _ schema: TableSchema) -> Bool {
        !schema.keyColumns.contains(column) && (schema.overwrite?.contains(column) ?? true)
    }

    /// The rows of an entity batch that a merge writes, in key order: one per
    /// key, several occurrences of a key combined as
    /// ``TableSchema/combinesOccurrences`` says
    /// (``RowArena/onePerKey(_:keys:combining:)``, which appends a combined
    /// row and so copies `rows` only when a key repeats); every row, in batch
    /// order, for a table without a key. What every store's merge does first
    /// (``RowStore/apply(_:)``). O(n log n).
    package static func mergeOrder(
        _ rows: inout RowArena, _ schema: TableSchema, entity: Int = 0, mixedKeys: MixedKeyLog? = nil
    ) -> [Int] {
        let keyColumns = schema.keyColumns
        var order = Array(0..<rows.rowCount)
        guard !keyColumns.isEmpty else { return order }
        order.sort { left, right in
            let comparison = rows.compare(row: left, keyColumns, with: right, of: rows)
            return comparison != 0 ? comparison < 0 : left < right
        }
        guard let mixedKeys else {
            return rows.onePerKey(order, keys: keyColumns, combining: schema.combinesOccurrences)
        }
        var disagreed: [Int] = []
        let kept = rows.onePerKey(order, keys: keyColumns, combining: schema.combinesOccurrences) {
            disagreed.append($0)
        }
        for row in disagreed { mixedKeys.add(table: entity, rows, row: row, keys: keyColumns) }
        return kept
    }

    /// One source's link rows in a batch: which of them stand (`kept`, in
    /// position order), whether its stored links go first (`unlink`), and a
    /// row that carries its key.
    package struct LinkSource {
        package var row: Int
        package var kept: [Int]
        package var unlink: Bool
    }

    /// The batch's sources in key order, with the rows that stand: the
    /// last record's under `replace`; under `union`, those after the last
    /// empty or null list. O(n log n). With `mixedKeys`, a source whose
    /// records give different lists (a record that comes twice, its tags
    /// changed) is logged there as a key of `entity`, the source's entity:
    /// the order of those records decides its links, so the units that
    /// produce the source's key are always parsed (docs/record-digests.md).
    /// The comparison costs only sources that several records list.
    package static func linkSources(
        _ rows: RowArena, _ link: LinkSchema, entity: Int = 0, mixedKeys: MixedKeyLog? = nil
    ) -> [LinkSource] {
        let width = link.sourceColumns.count
        let position = width + 1
        var indices = Array(0..<rows.rowCount)
        indices.sort { left, right in
            for column in 0..<width {
                let comparison = rows.compare(rows[left, column], rows[right, column])
                if comparison != 0 { return comparison < 0 }
            }
            if rows.ordinals[left] != rows.ordinals[right] { return rows.ordinals[left] < rows.ordinals[right] }
            return rows.compare(rows[left, position], rows[right, position]) < 0
        }
        var sources: [LinkSource] = []
        var start = 0
        while start < indices.count {
            var end = start + 1
            while end < indices.count,
                (0..<width).allSatisfy({ rows.compare(rows[indices[start], $0], rows[indices[end], $0]) == 0 })
            {
                end += 1
            }
            let group = indices[start..<end]
            let last = rows.ordinals[group.last!]
            if let mixedKeys, rows.ordinals[group.first!] != last, !listsAlike(rows, group, width: width) {
                mixedKeys.add(table: entity, rows, row: group.first!, keys: Array(0..<width))
            }
            if link.rule != .union {
                sources.append(
                    LinkSource(
                        row: group.first!,
                        kept: group.filter { rows.ordinals[$0] == last && rows[$0, width] != .absent }, unlink: true))
            } else {
                let cut = group.filter { rows[$0, width] == .absent }.map { rows.ordinals[$0] }.max()
                sources.append(
                    LinkSource(
                        row: group.first!,
                        kept: group.filter { rows[$0, width] != .absent && rows.ordinals[$0] > (cut ?? 0) },
                        unlink: cut != nil))
            }
            start = end
        }
        return sources
    }

    /// Whether every record of one source's `group` (its rows sorted by
    /// record, then position) lists the same links: the same cells after the
    /// source's `width` columns, in the same order. O(rows of the group).
    private static func listsAlike(_ rows: RowArena, _ group: ArraySlice<Int>, width: Int) -> Bool {
        let first = rows.ordinals[group.first!]
        let list = group.prefix { rows.ordinals[$0] == first }
        var at = group.startIndex + list.count
        while at < group.endIndex {
            let ordinal = rows.ordinals[group[at]]
            let other = group[at...].prefix { rows.ordinals[$0] == ordinal }
            guard other.count == list.count,
                zip(list, other).allSatisfy({ left, right in
                    (width..<rows.columnCount).allSatisfy { column in
                        rows.compare(rows[left, column], rows[right, column]) == 0
                            && (rows[left, column] == .absent) == (rows[right, column] == .absent)
                    }
                })
            else { return false }
            at += other.count
        }
        return true
    }
}
