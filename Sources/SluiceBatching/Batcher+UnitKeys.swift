@_spi(Machinery) import SluiceRecords

/// What a run that keeps record digests asks of the batcher after each
/// record: the keys the record produced, with digests of what it
/// contributed to each (``UnitKeys``). Costs nothing in other runs.
extension Batcher {
    /// Marks where the next record's rows begin. O(tables).
    package func markRecord() {
        rowMarks.removeAll(keepingCapacity: true)
        for arena in arenas { rowMarks.append(arena?.rowCount ?? 0) }
        for arena in linkArenas { rowMarks.append(arena?.rowCount ?? 0) }
    }

    /// Appends to `out` an entry (``UnitKeys``) for every row the records
    /// since ``markRecord()`` added: each entity row's key and the digest of
    /// its cells, and per link table each source's key and the digest of
    /// its link rows. `scratch` holds encodings between calls. O(cells of
    /// those rows), one SipHash per entry, no allocation once `out` and
    /// `scratch` have grown.
    package func appendRecordKeys(to out: inout [UInt8], hasher: ContributionHasher, scratch: inout [UInt8]) {
        guard rowMarks.count == arenas.count + linkArenas.count else { return }
        for entity in arenas.indices {
            guard let arena = arenas[entity], arena.rowCount > rowMarks[entity] else { continue }
            arena.bytes.withUnsafeBufferPointer { text in
                for row in rowMarks[entity]..<arena.rowCount {
                    scratch.removeAll(keepingCapacity: true)
                    for column in keyColumns[entity] { RowCoding.appendCell(arena[row, column], text, to: &scratch) }
                    UnitKeys.appendKey(table: entity, scratch, to: &out)
                    scratch.removeAll(keepingCapacity: true)
                    RowCoding.append(row: row, of: arena, ordinal: 0, to: &scratch)
                    UnitKeys.appendContribution(contribution(of: scratch, hasher), to: &out)
                }
            }
        }
        for link in linkArenas.indices {
            let mark = rowMarks[arenas.count + link]
            guard let arena = linkArenas[link], arena.rowCount > mark else { continue }
            let sourceCells = linkShapes[link].sourceColumns
            arena.bytes.withUnsafeBufferPointer { text in
                var row = mark
                while row < arena.rowCount {
                    scratch.removeAll(keepingCapacity: true)
                    for column in 0..<sourceCells { RowCoding.appendCell(arena[row, column], text, to: &scratch) }
                    UnitKeys.appendKey(table: arenas.count + link, scratch, to: &out)
                    scratch.removeAll(keepingCapacity: true)
                    // The source's link rows are consecutive: one record's list.
                    var end = row
                    while end < arena.rowCount
                        && (end == row
                            || (0..<sourceCells).allSatisfy {
                                RowCoding.encodeAlike(arena[end, $0], arena[row, $0], text)
                            })
                    {
                        RowCoding.append(row: end, of: arena, ordinal: 0, to: &scratch)
                        end += 1
                    }
                    UnitKeys.appendContribution(contribution(of: scratch, hasher), to: &out)
                    row = end
                }
            }
        }
    }

    private func contribution(of encoded: [UInt8], _ hasher: ContributionHasher) -> UInt64 {
        encoded.withUnsafeBytes { hasher.hash($0) }
    }
}
