import CSluiceSQLite3
@_spi(Machinery) import SluiceRecords

extension SQLiteStore {
    /// What the store holds for a source whose links a batch replaces.
    enum StoredLinks {
        /// Not read: the links are only added to (`union`).
        case unread
        /// The source has no links stored.
        case none
        /// Exactly the batch's links: target, position, entity and
        /// attributes all equal, in the same order.
        case same
        /// Something else.
        case different
    }

    /// Reads the stored links of the sources that replace theirs, up to
    /// ``StoreOptions/lookupKeys`` sources per query, in key order, and
    /// compares each source's with the rows it keeps. O(links read); one
    /// index descent when every source follows the stored ones (as when the
    /// key-ordered apply fills the table).
    func storedLinks(
        of sources: [BatchRows.LinkSource], _ rows: RowArena, _ link: LinkSchema, _ bytes: UnsafeBufferPointer<UInt8>
    ) throws(StoreError) -> [StoredLinks] {
        var result = [StoredLinks](repeating: .unread, count: sources.count)
        let candidates = sources.indices.filter { sources[$0].unlink }
        guard !candidates.isEmpty else { return result }
        if try followsStoredSources(sources[candidates[0]].row, rows, link, bytes) {
            for candidate in candidates { result[candidate] = .none }
            return result
        }
        let width = link.sourceColumns.count
        let capacity = max(1, min(options.lookupKeys, 32_000 / width, candidates.count))
        let names = linkColumnNames(link)
        let sourceNames = names[0..<width].joined(separator: ", ")
        let condition: String
        if width == 1 {
            condition = "\(sourceNames) IN (\(Array(repeating: "?", count: capacity).joined(separator: ",")))"
        } else {
            let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ",") + ")"
            condition =
                "(\(sourceNames)) IN (VALUES \(Array(repeating: tuple, count: capacity).joined(separator: ",")))"
        }
        let read = try SQLiteStatement(
            connection,
            "SELECT \(names.joined(separator: ", ")) FROM \(quoted(link.name)) WHERE \(condition) ORDER BY \(sourceNames), \"position\"",
            "preparing the read of \(quoted(link.name))")
        let statement = read.handle
        let action = "reading the links of \(quoted(link.name))"
        let keys = Array(0..<width)
        var start = 0
        while start < candidates.count {
            let end = min(start + capacity, candidates.count)
            read.rewind()
            for slot in 0..<capacity {
                // Unused slots repeat the last source.
                let row = sources[candidates[min(start + slot, end - 1)]].row
                for column in 0..<width { bind(statement, Int32(slot * width + column + 1), rows[row, column], bytes) }
            }
            var position = start
            var count = 0
            var equal = true
            while try read.step(action) {
                while position < end, compareKeys(rows, sources[candidates[position]].row, keys, bytes, statement) < 0 {
                    result[candidates[position]] = verdict(count, equal, sources[candidates[position]].kept.count)
                    (position, count, equal) = (position + 1, 0, true)
                }
                guard position < end else { break }
                guard compareKeys(rows, sources[candidates[position]].row, keys, bytes, statement) == 0 else {
                    continue
                }
                let kept = sources[candidates[position]].kept
                if count < kept.count {
                    for column in width..<link.columnCount
                    where compareKey(rows[kept[count], column], bytes, statement, Int32(column)) != 0 {
                        equal = false
                        break
                    }
                }
                count += 1
            }
            while position < end {
                result[candidates[position]] = verdict(count, equal, sources[candidates[position]].kept.count)
                (position, count, equal) = (position + 1, 0, true)
            }
            start = end
        }
        return result
    }

    /// Whether link row `first`'s source (the batch's smallest) sorts after
    /// every source stored in the link table, whose primary key starts with
    /// the source columns. One descent of that key.
    private func followsStoredSources(
        _ first: Int, _ rows: RowArena, _ link: LinkSchema, _ bytes: UnsafeBufferPointer<UInt8>
    ) throws(StoreError) -> Bool {
        let width = link.sourceColumns.count
        let names = linkColumnNames(link)[0..<width]
        let statement = try SQLiteStatement(
            connection,
            "SELECT \(names.joined(separator: ", ")) FROM \(quoted(link.name)) ORDER BY "
                + names.map { "\($0) DESC" }.joined(separator: ", ") + " LIMIT 1",
            "preparing the greatest source of \(quoted(link.name))")
        return try follows(
            rows, first, Array(0..<width), bytes, greatest: statement,
            "reading the greatest source of \(quoted(link.name))")
    }

    private func verdict(_ stored: Int, _ equal: Bool, _ kept: Int) -> StoredLinks {
        stored == 0 ? .none : (equal && stored == kept ? .same : .different)
    }
}
