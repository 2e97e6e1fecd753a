@_spi(Machinery) import SluiceRecords

/// What a run that keeps record digests asks of the batcher after each
/// record: the keys the record produced, with digests of what it
/// contributed to each (``UnitKeys``). Costs nothing in other runs.
extension Batcher {
    /// Marks where the next record's rows begin. O(tables); the arenas are
    /// read in place (iterating them copied each, a dozen retains a table: 1,900
    /// instructions a record of the events mapping).
    package func markRecord() {
        rowMarks.removeAll(keepingCapacity: true)
        for entity in arenas.indices { rowMarks.append(arenas[entity]?.rowCount ?? 0) }
        for link in linkArenas.indices { rowMarks.append(linkArenas[link]?.rowCount ?? 0) }
    }

    /// Appends to `out` an entry (``UnitKeys``) for every row the records
    /// since ``markRecord()`` added: each entity row's key and the digest of
    /// its cells, and per link table each source's key and the digest of
    /// its link rows; in an own table (``UnitKeys/ownTables(_:)``) the key
    /// alone, its contribution being the unit's digest. Keys are encoded in
    /// place in `out`; `scratch` holds the rows' encodings between calls.
    /// O(key cells) per own row, O(cells) and one SipHash per other entry,
    /// no allocation once `out` and `scratch` have grown.
    package func appendRecordKeys(to out: inout [UInt8], hasher: ContributionHasher, scratch: inout [UInt8]) {
        guard rowMarks.count == arenas.count + linkArenas.count else { return }
        // Each arena is moved out and back, not copied: a copy retained its
        // buffers, 17 retains a record of the events mapping.
        for entity in arenas.indices where (arenas[entity]?.rowCount ?? 0) > rowMarks[entity] {
            guard let arena = arenas[entity].take() else { continue }
            appendKeys(of: entity, arena, to: &out, hasher: hasher, scratch: &scratch)
            arenas[entity] = arena
        }
        for link in linkArenas.indices where (linkArenas[link]?.rowCount ?? 0) > rowMarks[arenas.count + link] {
            guard let arena = linkArenas[link].take() else { continue }
            appendKeys(ofLink: link, arena, to: &out, hasher: hasher, scratch: &scratch)
            linkArenas[link] = arena
        }
    }

    /// The entries of `entity`'s rows in `arena` since the mark.
    private func appendKeys(
        of entity: Int, _ arena: RowArena, to out: inout [UInt8], hasher: ContributionHasher,
        scratch: inout [UInt8]
    ) {
        let own = ownTables[entity]
        let holdsSpilled = arena.spill != nil
        arena.bytes.withUnsafeBufferPointer { text in
            for row in rowMarks[entity]..<arena.rowCount {
                UnitKeys.appendKey(table: entity, own: own, to: &out) { key in
                    for column in keyColumns[entity] { RowCoding.appendCell(arena[row, column], text, to: &key) }
                }
                if own { continue }
                scratch.removeAll(keepingCapacity: true)
                if !holdsSpilled || !appendByValue(row: row, of: arena, text, hasher, to: &scratch) {
                    RowCoding.append(row: row, of: arena, ordinal: 0, to: &scratch)
                }
                UnitKeys.appendContribution(contribution(of: scratch, hasher), to: &out)
            }
        }
    }

    /// The entries of link table `link`'s rows in `arena` since the mark: one
    /// per source.
    private func appendKeys(
        ofLink link: Int, _ arena: RowArena, to out: inout [UInt8], hasher: ContributionHasher,
        scratch: inout [UInt8]
    ) {
        let sourceCells = linkShapes[link].sourceColumns
        let own = ownTables[arenas.count + link]
        arena.bytes.withUnsafeBufferPointer { text in
            var row = rowMarks[arenas.count + link]
            while row < arena.rowCount {
                UnitKeys.appendKey(table: arenas.count + link, own: own, to: &out) { key in
                    for column in 0..<sourceCells { RowCoding.appendCell(arena[row, column], text, to: &key) }
                }
                scratch.removeAll(keepingCapacity: true)
                // The source's link rows are consecutive: one record's list.
                var end = row
                while end < arena.rowCount
                    && (end == row
                        || (0..<sourceCells).allSatisfy {
                            RowCoding.encodeAlike(arena[end, $0], arena[row, $0], text)
                        })
                {
                    if !own { RowCoding.append(row: end, of: arena, ordinal: 0, to: &scratch) }
                    end += 1
                }
                if !own { UnitKeys.appendContribution(contribution(of: scratch, hasher), to: &out) }
                row = end
            }
        }
    }

    /// Encodes row `row` of `arena` (its bytes `text`) into `encoded` for
    /// its contribution when it holds a spilled value, and returns true: its
    /// cells as ``RowCoding`` encodes them, but each spilled value by its
    /// length and the SipHash of each ``ValueSpill/chunkBytes`` piece of it
    /// read back, not by its place in this run's side file, so that the
    /// contribution follows the value (the skip plan's probe compares it with
    /// an earlier run's, whose side file placed the value elsewhere). Returns
    /// false, encoding nothing, for a row without one. O(1) for an arena
    /// that holds no spilled cell; else O(columns) and O(spilled bytes) read
    /// through a 64 KiB buffer; a read that fails is the record's error
    /// (``ValueSpill/readBack(from:into:)``).
    private func appendByValue(
        row: Int, of arena: RowArena, _ text: UnsafeBufferPointer<UInt8>, _ hasher: ContributionHasher,
        to encoded: inout [UInt8]
    ) -> Bool {
        guard let spill = arena.spill,
            (0..<arena.columnCount).contains(where: {
                switch arena[row, $0] {
                case .spilledText, .spilledBlob: return true
                default: return false
                }
            })
        else { return false }
        for column in 0..<arena.columnCount {
            let cell = arena[row, column]
            let (offset, length): (Int64, Int)
            switch cell {
            case .spilledText(let descriptor, let count), .spilledBlob(let descriptor, let count):
                (offset, length) = (arena.spilledOffset(descriptor), Int(count))
            default:
                RowCoding.appendCell(cell, text, to: &encoded)
                continue
            }
            if case .spilledText = cell { encoded.append(6) } else { encoded.append(7) }
            RowCoding.appendVarint(UInt64(length), to: &encoded)
            let buffer = UnsafeMutableRawBufferPointer.allocate(
                byteCount: min(length, ValueSpill.chunkBytes), alignment: 8)
            defer { buffer.deallocate() }
            var done = 0
            while done < length {
                let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, length - done)])
                spill.readBack(from: offset + Int64(done), into: piece)
                withUnsafeBytes(of: hasher.hash(UnsafeRawBufferPointer(piece)).littleEndian) {
                    encoded.append(contentsOf: $0)
                }
                done += piece.count
            }
        }
        return true
    }

    private func contribution(of encoded: [UInt8], _ hasher: ContributionHasher) -> UInt64 {
        encoded.withUnsafeBytes { hasher.hash($0) }
    }
}
