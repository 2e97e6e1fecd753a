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
/// Memory: for n keys, their bytes and three words each, 8 bytes a slot
/// for 1⅓ n to 2⅔ n slots, and the filter (1 to 2 bytes a key): at most
/// about 8 MB, for the most a run holds (``ProbedKeys/maxHeld`` held keys
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
    /// What the probe met of a held key: the contribution it met first,
    /// and whether another differed.
    typealias Held = ProbedKeys.Contribution

    /// The keys' filter, of the same hash as the table.
    private(set) var filter: KeyFilter
    /// The probe's contributions to each key; nil for a key only removed.
    private(set) var held: [Held?] = []
    /// Whether a removed unit produced each key.
    private(set) var removed: [Bool] = []
    /// Each key's table, and the end of its bytes in ``bytes``.
    private var tables: [Int] = []
    private var ends: [Int] = []
    private var bytes: [UInt8] = []
    /// 0 for an empty slot; else the hash's bits above ``indexBits`` and the
    /// key's index plus one below them.
    private var slots: [UInt64]
    private let mask: Int
    private static let indexBits: UInt64 = 24

    /// The keys `held` (``ProbedKeys/held``) and `removed` (by table).
    init(held probed: [ProbedKeys.HeldKey: Held], removed keys: [Set<[UInt8]>]) {
        let count = probed.count + keys.reduce(0) { $0 + $1.count }
        var size = 16
        while size < count + count / 3 { size <<= 1 }
        slots = Array(repeating: 0, count: size)
        mask = size - 1
        filter = KeyFilter(count: count)
        for (key, seen) in probed {
            let index = key.key.withUnsafeBytes { add(table: key.table, key: $0) }
            held[index] = seen
        }
        for (table, tableKeys) in keys.enumerated() {
            for key in tableKeys {
                let index = key.withUnsafeBytes { add(table: table, key: $0) }
                removed[index] = true
            }
        }
    }

    /// The number of keys.
    var count: Int { tables.count }

    /// The index of key `key` of table `table`, whose hash is `hash`; nil
    /// when it is not one of the keys. One or two slots read, nearly always.
    func index(of key: UnsafeRawBufferPointer, table: Int, hash: UInt64) -> Int? {
        let tag = hash >> Self.indexBits
        var slot = Int(truncatingIfNeeded: hash >> 32) & mask
        while slots[slot] != 0 {
            let index = Int(slots[slot] & (1 << Self.indexBits - 1)) - 1
            if slots[slot] >> Self.indexBits == tag && tables[index] == table && matches(index, key) { return index }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// The bytes of key `index`.
    func key(_ index: Int) -> [UInt8] { Array(bytes[start(index)..<ends[index]]) }

    /// The table of key `index`.
    func table(_ index: Int) -> Int { tables[index] }

    private func start(_ index: Int) -> Int { index == 0 ? 0 : ends[index - 1] }

    private func matches(_ index: Int, _ key: UnsafeRawBufferPointer) -> Bool {
        let start = start(index)
        guard ends[index] - start == key.count else { return false }
        return bytes.withUnsafeBytes { stored in
            UnsafeRawBufferPointer(rebasing: stored[start..<ends[index]]).elementsEqual(key)
        }
    }

    /// Adds key `key` of table `table` unless it is one already; returns
    /// its index.
    private mutating func add(table: Int, key: UnsafeRawBufferPointer) -> Int {
        let hash = KeyFilter.hash(table: table, key: key)
        if let index = index(of: key, table: table, hash: hash) { return index }
        let index = tables.count
        tables.append(table)
        bytes.append(contentsOf: key)
        ends.append(bytes.count)
        held.append(nil)
        removed.append(false)
        filter.insert(hash: hash)
        var slot = Int(truncatingIfNeeded: hash >> 32) & mask
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = (hash >> Self.indexBits) << Self.indexBits | UInt64(index + 1)
        return index
    }
}
