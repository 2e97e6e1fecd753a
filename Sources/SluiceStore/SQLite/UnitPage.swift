import SluiceBatching
import SluiceRecords

/// The units of one row of `_sluice_unit_pages` (``SQLiteStore``'s record
/// digests), packed in digest order: per unit its 16 digest bytes, a byte
/// saying whether it is pinned, its keys' length (4 bytes, little-endian)
/// and its keys. Packing
/// ``capacity`` units a row makes SQLite's cost per unit that of a few bytes
/// of a blob rather than a B-tree insert (measured in docs/record-digests.md).
enum UnitPage {
    /// The most units a page is written with.
    static let capacity = 32

    /// The units of `bytes`, in order; nil when they are malformed.
    static func decode(_ bytes: [UInt8]) -> [StoredUnit]? {
        var units: [StoredUnit] = []
        let complete = bytes.withUnsafeBytes { raw in
            var position = 0
            while position < raw.count {
                guard raw.count - position >= 21 else { return false }
                let digest = UnitDigest(bytes: UnsafeRawBufferPointer(rebasing: raw[position..<position + 16]))
                let pinned = raw[position + 16] != 0
                let length = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position + 17, as: UInt32.self))
                position += 21
                guard Int(length) <= raw.count - position else { return false }
                units.append(
                    StoredUnit(
                        digest: digest, keys: Array(raw[position..<position + Int(length)]), pinned: pinned))
                position += Int(length)
            }
            return true
        }
        return complete ? units : nil
    }

    /// Appends `unit` to the page `bytes`.
    static func append(_ unit: StoredUnit, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: (unit.digest.high.bigEndian, unit.digest.low.bigEndian)) { bytes.append(contentsOf: $0) }
        bytes.append(unit.pinned ? 1 : 0)
        withUnsafeBytes(of: UInt32(unit.keys.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes += unit.keys
    }

    /// `kept` (in digest order) with `changes` applied: each change, in
    /// digest order, replaces or adds its unit, or (nil) removes the digest;
    /// of several changes to one digest the last wins.
    static func merge(_ kept: [StoredUnit], _ changes: ArraySlice<(digest: UnitDigest, unit: StoredUnit?)>)
        -> [StoredUnit]
    {
        var merged: [StoredUnit] = []
        merged.reserveCapacity(kept.count + changes.count)
        var next = kept.startIndex
        var change = changes.startIndex
        while change < changes.endIndex {
            let digest = changes[change].digest
            while next < kept.endIndex && kept[next].digest < digest {
                merged.append(kept[next])
                next += 1
            }
            while change + 1 < changes.endIndex && changes[change + 1].digest == digest { change += 1 }
            if let unit = changes[change].unit { merged.append(unit) }
            if next < kept.endIndex && kept[next].digest == digest { next += 1 }
            change += 1
        }
        merged += kept[next...]
        return merged
    }
}
