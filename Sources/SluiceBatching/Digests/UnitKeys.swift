@_spi(Machinery) import SluiceRecords

/// The keys one unit of input produced, as a store keeps them beside its
/// digest (docs/record-digests.md): one entry per row the unit's records
/// gave an entity (entity index, key) or a link table (entity count + link
/// index, source key), each with the digest of what the unit contributed
/// there — the row's cells, or the source's link rows — so that a later run
/// can tell whether the contributions to a key agree without parsing.
///
/// An entry: `varint(table << 1 | own) varint(key bytes) key bytes
/// [contribution]`, the key as its cells in ``RowCoding``'s encoding. The
/// contribution of a row of a table that only records themselves write (a
/// record path's entity that no relationship reaches, and its link tables:
/// `own`) is the unit's digest, implied and not stored: equal digests mean
/// equal bytes and so equal rows, and a key such a table shares between two
/// units is rare (two units then disagree unless their bytes are equal, and
/// are parsed). Any other contribution is 8 little-endian bytes of a keyed
/// digest of the row (``ContributionHasher``). About 12 bytes per own row and
/// 20 per other row for an integer key.
package enum UnitKeys {
    /// One entry, as ``forEach(_:digest:_:)`` gives it.
    package struct Entry: Equatable {
        package var table: Int
        package var key: [UInt8]
        /// The contribution's digest: the one stored, or for a row of an own
        /// table ``ownContribution(_:)`` of the unit's digest.
        package var contribution: UInt64

        package init(table: Int, key: [UInt8], contribution: UInt64) {
            self.table = table
            self.key = key
            self.contribution = contribution
        }
    }

    /// The contribution of a row of an own table: the first half of the
    /// digest of the unit that wrote it.
    package static func ownContribution(_ digest: UnitDigest) -> UInt64 { digest.high }

    /// An entry's table and key as one value: what two units' entries for
    /// the same row share.
    package static func identity(_ entry: Entry) -> [UInt8] { identity(table: entry.table, key: entry.key) }

    /// The identity of `key` (its cells encoded) in table `table`.
    package static func identity(table: Int, key: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        RowCoding.appendVarint(UInt64(table), to: &bytes)
        return bytes + key
    }

    /// Makes `bytes` the identity of `key` in table `table`, in its room: no
    /// allocation once it is large enough (a scan that looks up every kept
    /// unit's keys by identity reuses one array).
    package static func identity(table: Int, key: UnsafeRawBufferPointer, into bytes: inout [UInt8]) {
        bytes.removeAll(keepingCapacity: true)
        RowCoding.appendVarint(UInt64(table), to: &bytes)
        bytes.append(contentsOf: key)
    }

    /// The encoding of the key of row `row` of `rows`, its cells in
    /// `columns`, as an entry holds it (``Entry/key``).
    package static func key(of rows: RowArena, row: Int, columns: [Int]) -> [UInt8] {
        var key: [UInt8] = []
        rows.bytes.withUnsafeBufferPointer { text in
            for column in columns { RowCoding.appendCell(rows[row, column], text, to: &key) }
        }
        return key
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

    /// Each entity's and then each link table's: whether it is own, its rows
    /// written only by records of their own (an entity a record path maps
    /// that no relationship reaches, and the link tables of such an entity),
    /// so that a key of it is rarely shared by two units.
    package static func ownTables(_ compiled: CompiledMapping) -> [Bool] {
        let records = Set(compiled.routes.flatMap(\.entities))
        let reached = Set(compiled.relations.flatMap { $0.map(\.target) })
        let entities = compiled.mappers.indices.map { records.contains($0) && !reached.contains($0) }
        var links = Array(repeating: false, count: compiled.links.count)
        for (source, relations) in compiled.relations.enumerated() {
            for relation in relations { if let link = relation.link { links[link] = entities[source] } }
        }
        return entities + links
    }

    /// Appends the start of an entry to `out`: its table and key, which
    /// ``appendContribution(_:to:)`` then completes unless the table is
    /// `own` (its contribution is the unit's digest). `encodeKey` appends the
    /// key's cells to `out` itself, after a one-byte length that is then
    /// filled in (a key of 128 bytes or more moves to make room for a longer
    /// one): no copy of the key through a scratch buffer (13 M instructions
    /// of a 20,000-event first import).
    @inline(__always)
    static func appendKey(table: Int, own: Bool, to out: inout [UInt8], _ encodeKey: (inout [UInt8]) -> Void) {
        RowCoding.appendVarint(UInt64(table) << 1 | (own ? 1 : 0), to: &out)
        let lengthAt = out.count
        out.append(0)
        encodeKey(&out)
        let length = out.count - lengthAt - 1
        if length < 0x80 {
            out[lengthAt] = UInt8(length)
            return
        }
        var varint: [UInt8] = []
        RowCoding.appendVarint(UInt64(length), to: &varint)
        out.replaceSubrange(lengthAt..<lengthAt + 1, with: varint)
    }

    /// Ends the entry ``appendKey(table:own:to:_:)`` began: its contribution.
    static func appendContribution(_ contribution: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: contribution.littleEndian) { out.append(contentsOf: $0) }
    }

    /// The entries of `bytes`, the keys of the unit whose digest is
    /// `digest`, in order; false when they are malformed (a store written by
    /// something else), after the entries before.
    package static func forEach(
        _ bytes: [UInt8], digest: UnitDigest, _ body: (Entry) throws -> Void
    ) rethrows -> Bool {
        try forEachKey(bytes, digest: digest) { table, key, contribution in
            try body(Entry(table: table, key: Array(key), contribution: contribution))
        }
    }

    /// ``forEach(_:digest:_:)`` without an entry: each key's table, its
    /// bytes in place (valid during the call) and its contribution. No
    /// allocation: what a scan of every kept unit reads first.
    package static func forEachKey(
        _ bytes: [UInt8], digest: UnitDigest,
        _ body: (_ table: Int, _ key: UnsafeRawBufferPointer, _ contribution: UInt64) throws -> Void
    ) rethrows -> Bool {
        try bytes.withUnsafeBytes { raw in
            var position = 0
            while position < raw.count {
                guard let tag = RowCoding.readVarint(raw, &position),
                    let length = RowCoding.readVarint(raw, &position), length <= raw.count - position
                else { return false }
                let own = tag & 1 == 1
                guard own || position + Int(length) + 8 <= raw.count else { return false }
                let key = UnsafeRawBufferPointer(rebasing: raw[position..<position + Int(length)])
                position += Int(length)
                var contribution = ownContribution(digest)
                if !own {
                    contribution = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: position, as: UInt64.self))
                    position += 8
                }
                try body(Int(tag >> 1), key, contribution)
            }
            return true
        }
    }
}
