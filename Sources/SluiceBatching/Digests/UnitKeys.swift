@_spi(Machinery) import SluiceRecords

/// The keys one unit of input produced, as a store keeps them beside its
/// digest (docs/record-digests.md): one entry per row the unit's records
/// gave an entity (entity index, key) or a link table (entity count + link
/// index, source key), each with the digest of what the unit contributed
/// there — the row's cells, or the source's link rows — so that a later run
/// can tell whether the contributions to a key agree without parsing.
///
/// An entry: `varint(table) varint(key bytes) key bytes contribution`, the
/// key as its cells in ``RowCoding``'s encoding and the contribution as 8
/// little-endian bytes of a keyed digest (``ContributionHasher``). About 20 bytes
/// per row for an integer key.
package enum UnitKeys {
    /// One entry, as ``forEach(_:_:)`` gives it.
    package struct Entry: Equatable {
        package var table: Int
        package var key: [UInt8]
        package var contribution: UInt64
    }

    /// An entry's table and key as one value: what two units' entries for
    /// the same row share.
    package static func identity(_ entry: Entry) -> [UInt8] {
        var bytes: [UInt8] = []
        RowCoding.appendVarint(UInt64(entry.table), to: &bytes)
        return bytes + entry.key
    }

    /// Appends a row to `rows` holding `key` (an entry's key) in `columns`,
    /// one per key column, every other cell absent (``SkippedKeys`` passes an
    /// arena of the key columns alone). False, with
    /// no row added, when the key is malformed. The key is decoded as a row
    /// of the sort's runs is (``RowCoding/decode(_:into:)``): two small
    /// allocations a key, in runs that sweep only.
    package static func appendKeyRow(_ key: [UInt8], columns: [Int], to rows: inout RowArena) -> Bool {
        var body: [UInt8] = []
        RowCoding.appendVarint(0, to: &body)
        RowCoding.appendVarint(UInt64(columns.count) << 1, to: &body)
        body += key
        var cells = RowArena(columnCount: columns.count)
        guard body.withUnsafeBytes({ RowCoding.decode($0, into: &cells) }), cells.rowCount == 1 else { return false }
        rows.beginRow(ordinal: 0)
        for (index, column) in columns.enumerated() { rows.set(column, rows.copy(cells[0, index], from: cells)) }
        return true
    }

    /// Appends the start of an entry to `out`: its table and key, which
    /// ``appendContribution(_:to:)`` then completes.
    static func appendKey(table: Int, _ key: [UInt8], to out: inout [UInt8]) {
        RowCoding.appendVarint(UInt64(table), to: &out)
        RowCoding.appendVarint(UInt64(key.count), to: &out)
        out += key
    }

    /// Ends the entry ``appendKey(table:_:to:)`` began: its contribution.
    static func appendContribution(_ contribution: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: contribution.littleEndian) { out.append(contentsOf: $0) }
    }

    /// The entries of `bytes`, in order; false when they are malformed (a
    /// store written by something else), after the entries before.
    package static func forEach(_ bytes: [UInt8], _ body: (Entry) throws -> Void) rethrows -> Bool {
        try bytes.withUnsafeBytes { raw in
            var position = 0
            while position < raw.count {
                guard let table = RowCoding.readVarint(raw, &position),
                    let length = RowCoding.readVarint(raw, &position), length <= raw.count - position,
                    position + Int(length) + 8 <= raw.count
                else { return false }
                let key = Array(raw[position..<position + Int(length)])
                position += Int(length)
                let contribution = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: position, as: UInt64.self))
                position += 8
                try body(Entry(table: Int(table), key: key, contribution: contribution))
            }
            return true
        }
    }
}
