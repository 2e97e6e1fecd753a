import SluiceRecords

/// The units a run read, kept on disk until the run saves them, handed over
/// in digest order — the order of the store's table, which a B-tree takes
/// about six times faster than random order (2,000,000 units into SQLite
/// from Python: 15.5 s sorted, 91.6 s not). Each unit's keys ride with its
/// digest through the ``DigestSorter``, so reading them back is sequential.
///
/// Memory: the sorter's budget, 2 MB by default (8 MB took a first import
/// of 200,000 events from a 58 MB peak to 64 MB; 2,000,000 units then merge
/// about 85 runs, a 64 KiB buffer each, and more units no more than
/// ``DigestSorter/mergeWidth`` runs at once). Disk: about 25 bytes a unit plus
/// its keys (about 45 bytes a unit of the events mapping).
package final class UnitSpill {
    private let sorter: DigestSorter

    /// A spill in `directory`.
    package init(directory: String, memoryBytes: Int = 2 << 20) {
        sorter = DigestSorter(directory: directory, memoryBytes: memoryBytes)
    }

    /// Units added so far.
    package var count: Int { sorter.count }

    /// Adds one unit: its digest, its keys, whether it is pinned.
    package func add(_ unit: StoredUnit) throws(SpillError) {
        try sorter.add(DigestEntry(digest: unit.digest, payload: unit.pinned ? 1 : 0), bytes: unit.keys)
    }

    /// Adds one unit, not pinned, whose `keys` are a slice of a buffer that
    /// holds several units' keys.
    package func add(digest: UnitDigest, keys: ArraySlice<UInt8>) throws(SpillError) {
        try sorter.add(DigestEntry(digest: digest, payload: 0), bytes: keys)
    }

    /// The units in digest order (a digest added twice, once: the same
    /// bytes give the same keys). Ends the spill.
    package func sorted() throws(SpillError) -> SortedUnits { SortedUnits(try sorter.sorted()) }
}

/// A ``UnitSpill``'s units in digest order, each digest once.
package final class SortedUnits {
    private let digests: SortedDigests
    private var last: UnitDigest?

    init(_ digests: SortedDigests) { self.digests = digests }

    /// The next unit, nil after the last.
    package func next() throws(SpillError) -> StoredUnit? {
        while let (entry, keys) = try digests.next() {
            if entry.digest == last { continue }
            last = entry.digest
            return StoredUnit(digest: entry.digest, keys: keys, pinned: entry.payload == 1)
        }
        return nil
    }
}
