import SluiceBatching

/// The keys the closure over the kept units looks for
/// (``SkipPlan/close(over:kept:store:fallback:)``): the probe's held keys,
/// each with what the probe met of it, and the removed units' keys
/// (``SkipPlan/removedKeys``), one entry a key whatever its roles. Each key
/// of every kept unit is asked about: ``filter`` answers "no" for nearly
/// all, and a "maybe" is looked up in a table open-addressed by the same
/// hash (``KeyFilter/hash(table:key:)``), whose slots hold most of each
/// key's hash beside its index, so that a key's bytes are compared only
/// when the hashes agree.
///
/// Memory: for n keys, their bytes and 40 bytes each, 8 bytes a slot
/// for 1⅓ n to 2⅔ n slots, and the filter (1 to 2 bytes a key): at most
/// about 14 MB, for the most a run holds (``ProbedKeys/maxHeld`` held keys
/// and ``SkipPlan/maxRemovedKeys`` removed ones).
///
/// Measured against a dictionary of the held keys and a set of removed
/// keys by table, asked with an identity (``UnitKeys/identity(_:)``) or an
/// array built for each "maybe": the 200,000-event XML next day (callgrind,
/// `--threads 1`) spent 313 instructions a "maybe" building the identity
/// and 263 finding it, and at 2,000,000 events the dictionary's lookups
/// were 0.41 s of the closure's 1.63 s of CPU (perf), most of it waiting on
/// memory: a key of the dictionary is an array of its own, read to compare.
struct ClosureKeys {
    /// One key: its table, its first 16 bytes inline (zeros past its end)
    /// and where all of them are in ``bytes``, and its roles: what the probe
    /// met of it (``first``, and whether another contribution differed) if
    /// it is held, and whether a removed unit produced it. What a lookup
    /// compares is in the entry, so that it waits on memory for its slot and
    /// its entry, no more, for a key of 16 bytes or fewer.
    struct Entry {
        var first: UInt64 = 0
        var prefix: (UInt64, UInt64)
        var start: Int32
        var count: Int32
        var table: Int32
        var isHeld = false
        var mixedInProbe = false
        var isRemoved = false
    }

    /// The keys' filter, of the same hash as the table.
    private(set) var filter: KeyFilter
    /// The keys, by index.
    private(set) var entries: [Entry] = []
    private var bytes: [UInt8] = []
    /// 0 for an empty slot; else the hash's bits above ``indexBits`` and the
    /// key's index plus one below them.
    private var slots: [UInt64]
    private let mask: Int
    private static let indexBits: UInt64 = 24

    /// The keys `held` (``ProbedKeys/held``) and `removed` (by table), at
    /// most 2^24 - 1 (``ProbedKeys/maxHeld`` and
    /// ``SkipPlan/maxRemovedKeys``: 200,000).
    init(held probed: [ProbedKeys.HeldKey: ProbedKeys.Contribution], removed keys: [Set<[UInt8]>]) {
        let count = probed.count + keys.reduce(0) { $0 + $1.count }
        var size = 16
        while size < count + count / 3 { size <<= 1 }
        slots = Array(repeating: 0, count: size)
        mask = size - 1
        filter = KeyFilter(count: count)
        entries.reserveCapacity(count)
        for (key, seen) in probed {
            let index = key.key.withUnsafeBytes { add(table: key.table, key: $0) }
            entries[index].isHeld = true
            entries[index].first = seen.first
            entries[index].mixedInProbe = seen.mixed
        }
        for (table, tableKeys) in keys.enumerated() {
            for key in tableKeys {
                let index = key.withUnsafeBytes { add(table: table, key: $0) }
                entries[index].isRemoved = true
            }
        }
    }

    /// The number of keys.
    var count: Int { entries.count }

    /// The index of key `key` of table `table`, whose hash is `hash`; nil
    /// when it is not one of the keys. One or two slots read, nearly always.
    func index(of key: UnsafeRawBufferPointer, table: Int, hash: UInt64) -> Int? {
        let tag = hash >> Self.indexBits
        let prefix = Self.prefix(of: key)
        var slot = Int(truncatingIfNeeded: hash >> 32) & mask
        while slots[slot] != 0 {
            if slots[slot] >> Self.indexBits == tag {
                let index = Int(slots[slot] & (1 << Self.indexBits - 1)) - 1
                if matches(entries[index], key, table: table, prefix: prefix) { return index }
            }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// The bytes of key `index`.
    func key(_ index: Int) -> [UInt8] {
        let entry = entries[index]
        return Array(bytes[Int(entry.start)..<Int(entry.start + entry.count)])
    }

    /// A key's first 16 bytes, zeros past its end.
    private static func prefix(of key: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        var prefix: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &prefix) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: key.prefix(16))) }
        return prefix
    }

    private func matches(
        _ entry: Entry, _ key: UnsafeRawBufferPointer, table: Int, prefix: (UInt64, UInt64)
    ) -> Bool {
        guard entry.table == table, Int(entry.count) == key.count, entry.prefix == prefix else { return false }
        guard key.count > 16 else { return true }
        return bytes.withUnsafeBytes { stored in
            let start = Int(entry.start) + 16
            return UnsafeRawBufferPointer(rebasing: stored[start..<Int(entry.start + entry.count)])
                .elementsEqual(UnsafeRawBufferPointer(rebasing: key[16...]))
        }
    }

    /// Adds key `key` of table `table` unless it is one already; returns
    /// its index.
    private mutating func add(table: Int, key: UnsafeRawBufferPointer) -> Int {
        let hash = KeyFilter.hash(table: table, key: key)
        if let index = index(of: key, table: table, hash: hash) { return index }
        let index = entries.count
        entries.append(
            Entry(
                prefix: Self.prefix(of: key), start: Int32(bytes.count), count: Int32(key.count),
                table: Int32(table)))
        bytes.append(contentsOf: key)
        filter.insert(hash: hash)
        var slot = Int(truncatingIfNeeded: hash >> 32) & mask
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = (hash >> Self.indexBits) << Self.indexBits | UInt64(index + 1)
        return index
    }
}
