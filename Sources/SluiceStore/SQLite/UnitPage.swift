import SluiceBatching
import SluiceRecords

/// The units of one row of `_sluice_unit_pages` or `_sluice_unit_changes`
/// (``SQLiteStore``'s record digests), packed in digest order: per unit its
/// 16 digest bytes, a flag byte (``Flag``), its keys' length (4 bytes,
/// little-endian) and its keys. Packing
/// ``capacity`` units a row makes SQLite's cost per unit that of a few bytes
/// of a blob rather than a B-tree insert (measured in docs/record-digests.md).
enum UnitPage {
    /// The most units a page is written with.
    static let capacity = 32

    /// The most bytes of entries a page is written with in a store of
    /// `pageSize`-byte pages, so that its row stays whole on a B-tree page:
    /// SQLite keeps at most ((U − 12) × 64 / 255) − 23 bytes of a row of a
    /// `WITHOUT ROWID` table on its page and puts the rest on an overflow
    /// page of its own (the file format's index B-tree cells), less 32 bytes
    /// for the row's record header, first digest and count. 970 at 4 KiB,
    /// 4,054 at 16 KiB. Rows of 32 units of the events workload (1,632
    /// bytes) each took an overflow page at 4 KiB: the 2,000,000-event set
    /// filled 71,543 pages (279 MB) against 7,080 at 16 KiB (110 MB).
    static func rowBytes(pageSize: Int) -> Int { max(64, (pageSize - 12) * 64 / 255 - 23 - 32) }

    /// An entry's flag byte.
    enum Flag: UInt8 {
        case unit = 0
        case pinned = 1
        /// In `_sluice_unit_changes` only: the digest is no longer in the
        /// set, although `_sluice_unit_pages` holds it. No keys.
        case removal = 2
    }

    /// A unit of a page as read: its digest and the bytes of its whole entry
    /// (digest, pinned byte, length and keys) in the page.
    struct Span {
        var digest: UnitDigest
        var bytes: Range<Int>
        var removal: Bool
    }

    /// A unit of a page being written: one kept as the old page held it (its
    /// entry's bytes there), or one saved by the run.
    enum Piece {
        case kept(Span)
        case saved(StoredUnit)
        case removal(UnitDigest)

        var digest: UnitDigest {
            switch self {
            case .kept(let span): span.digest
            case .saved(let unit): unit.digest
            case .removal(let digest): digest
            }
        }
    }

    /// The units of the page `raw`, in order, as spans of it; nil when it is
    /// malformed. One array a page: decoding each unit with an array of its
    /// keys, only to write it again unchanged, was most of the cost of saving
    /// a next day's set (callgrind, 200,000 events: 3,858 pages rewritten,
    /// 63 M instructions decoding and 44 M freeing the units).
    static func spans(_ raw: UnsafeRawBufferPointer) -> [Span]? {
        var spans: [Span] = []
        spans.reserveCapacity(capacity)
        var position = 0
        while position < raw.count {
            guard raw.count - position >= 21 else { return nil }
            let length = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position + 17, as: UInt32.self))
            guard Int(length) <= raw.count - position - 21 else { return nil }
            let digest = UnitDigest(bytes: UnsafeRawBufferPointer(rebasing: raw[position..<position + 16]))
            spans.append(
                Span(
                    digest: digest, bytes: position..<position + 21 + Int(length),
                    removal: raw[position + 16] == Flag.removal.rawValue))
            position += 21 + Int(length)
        }
        return spans
    }

    /// The unit of `span` in the page `raw`, or nil for a removal.
    static func unit(_ span: Span, in raw: UnsafeRawBufferPointer) -> StoredUnit? {
        guard !span.removal else { return nil }
        return StoredUnit(
            digest: span.digest,
            keys: Array(UnsafeRawBufferPointer(rebasing: raw[span.bytes.lowerBound + 21..<span.bytes.upperBound])),
            pinned: raw[span.bytes.lowerBound + 16] == Flag.pinned.rawValue)
    }

    /// Calls `body` with each unit of the page `raw`, in order; false when
    /// the page is malformed (the units before the fault were handed over).
    /// The units share one array of keys, refilled in place: a unit `body`
    /// keeps is copied when the next is read. Reading a page into an array
    /// and its units into another first cost two allocations more a page in
    /// each scan of the stored set; an array of its own for each unit's
    /// keys, 375 instructions a unit (callgrind, the two scans of the
    /// 200,000-event XML next day, `--threads 1`).
    static func forEach<Failure>(
        _ raw: UnsafeRawBufferPointer, _ body: (StoredUnit) throws(Failure) -> Void
    ) throws(Failure) -> Bool {
        var position = 0
        var unit = StoredUnit(digest: UnitDigest(high: 0, low: 0), keys: [], pinned: false)
        while position < raw.count {
            guard raw.count - position >= 21 else { return false }
            unit.digest = UnitDigest(bytes: UnsafeRawBufferPointer(rebasing: raw[position..<position + 16]))
            unit.pinned = raw[position + 16] != 0
            let length = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position + 17, as: UInt32.self))
            position += 21
            guard Int(length) <= raw.count - position else { return false }
            unit.keys.removeAll(keepingCapacity: true)
            unit.keys.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[position..<position + Int(length)]))
            position += Int(length)
            try body(unit)
        }
        return true
    }

    /// Appends `unit` to the page `bytes`.
    static func append(_ unit: StoredUnit, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: (unit.digest.high.bigEndian, unit.digest.low.bigEndian)) { bytes.append(contentsOf: $0) }
        bytes.append(unit.pinned ? Flag.pinned.rawValue : Flag.unit.rawValue)
        withUnsafeBytes(of: UInt32(unit.keys.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes += unit.keys
    }

    /// Appends the removal of `digest` to the page `bytes`.
    static func appendRemoval(_ digest: UnitDigest, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: (digest.high.bigEndian, digest.low.bigEndian)) { bytes.append(contentsOf: $0) }
        bytes.append(Flag.removal.rawValue)
        withUnsafeBytes(of: UInt32(0).littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// The bytes an entry of `unit` takes in a page.
    static func entryBytes(_ unit: StoredUnit) -> Int { 21 + unit.keys.count }

    /// The bytes `piece`'s entry takes in a page.
    static func entryBytes(_ piece: Piece) -> Int {
        switch piece {
        case .kept(let span): span.bytes.count
        case .saved(let unit): entryBytes(unit)
        case .removal: 21
        }
    }

    /// `kept` (in digest order) with `changes` applied: each change, in
    /// digest order, replaces or adds its unit, or (nil) removes the digest;
    /// of several changes to one digest the last wins.
    static func merge(_ kept: [Span], _ changes: ArraySlice<(digest: UnitDigest, unit: StoredUnit?)>) -> [Piece] {
        var merged: [Piece] = []
        merged.reserveCapacity(kept.count + changes.count)
        var next = kept.startIndex
        var change = changes.startIndex
        while change < changes.endIndex {
            let digest = changes[change].digest
            while next < kept.endIndex && kept[next].digest < digest {
                merged.append(.kept(kept[next]))
                next += 1
            }
            while change + 1 < changes.endIndex && changes[change + 1].digest == digest { change += 1 }
            if let unit = changes[change].unit { merged.append(.saved(unit)) }
            if next < kept.endIndex && kept[next].digest == digest { next += 1 }
            change += 1
        }
        for span in kept[next...] { merged.append(.kept(span)) }
        return merged
    }
}
