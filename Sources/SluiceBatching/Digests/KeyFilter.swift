/// A set of keys (a table and a key's bytes, as ``UnitKeys`` holds them) that
/// answers "no" or "maybe" without allocating: one bit per hash of a key, in
/// an array of about 32 bits per key it is sized for, so that some 3% of the
/// keys never inserted answer "maybe" (never a key inserted "no"). The scan of
/// every kept unit in a run that skips asks it first and makes an entry, its
/// identity and a dictionary lookup only for a "maybe" (``SkipPlan``).
///
/// Memory: 4 to 8 bytes per key sized for. Time: O(key bytes) per question.
/// The hash is not keyed: a planted key that collides costs only the exact
/// lookup the filter saves.
package struct KeyFilter {
    private var bits: [UInt64]
    private let mask: UInt64

    /// An empty filter sized for `count` keys.
    package init(count: Int) {
        var size = 64
        while size < count * 32 { size <<= 1 }
        bits = Array(repeating: 0, count: size / 64)
        mask = UInt64(size - 1)
    }

    /// Adds the key `key` of table `table`.
    package mutating func insert(table: Int, key: UnsafeRawBufferPointer) {
        let bit = Self.hash(table, key) & mask
        bits[Int(bit >> 6)] |= 1 << (bit & 63)
    }

    /// Adds the key of `identity` (``UnitKeys/identity(table:key:)``); false
    /// when it is malformed.
    package mutating func insert(identity: [UInt8]) -> Bool {
        UnitKeys.split(identity) { table, key in insert(table: table, key: key) }
    }

    /// False when `key` of table `table` was never inserted.
    package func mayContain(table: Int, key: UnsafeRawBufferPointer) -> Bool {
        let bit = Self.hash(table, key) & mask
        return bits[Int(bit >> 6)] & (1 << (bit & 63)) != 0
    }

    /// FNV-1a of the table and the key's bytes, then a finalizer that makes
    /// the low bits depend on every byte.
    private static func hash(_ table: Int, _ key: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(truncatingIfNeeded: table)
        for byte in key { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        return hash ^ hash >> 33
    }
}
