/// A set of keys (a table and a key's bytes, as ``UnitKeys`` holds them) that
/// answers "no" or "maybe" without allocating: two bits per key, both in one
/// 64-bit word its hash picks, in an array of ``bitsPerKey`` to twice as
/// many bits per key it is sized for, so that 2.3% to 5.4% of the keys never
/// inserted answer "maybe" (never a key inserted "no"; measured with text
/// and integer keys, 10,000 to 2,097,152 of them: twice as many keys as it
/// is sized for let through 7% to 16%). The scan of every kept unit in a run
/// that skips asks it first and makes an entry, its identity and a dictionary
/// lookup only for a "maybe" (``SkipPlan``).
///
/// Memory: 1 to 2 bytes per key sized for. Time: one multiply per 8 bytes
/// of the key and one read of the array per question. The hash is not keyed:
/// a planted key that collides costs only the exact lookup the filter saves.
///
/// Measured, the closure over the kept units of the 200,000-event XML next
/// day (callgrind, `--threads 1`): a byte-by-byte FNV hash into one bit of
/// 32 per key took 71 instructions a question, and at 2,000,000 events the
/// 1 MiB array it made missed the 512 KiB second-level cache (perf: 14% of
/// the plan's time in the question alone). It let through 3% of the keys
/// never inserted; an array a quarter the size, both bits in one word, lets
/// through up to 5%, each costing a lookup that finds nothing.
package struct KeyFilter {
    /// The bits the array has for each key it is sized for.
    package static let bitsPerKey = 8
    private var words: [UInt64]
    private let mask: UInt64

    /// An empty filter sized for `count` keys.
    package init(count: Int) {
        var size = 64
        while size < count * Self.bitsPerKey { size <<= 1 }
        words = Array(repeating: 0, count: size / 64)
        mask = UInt64(size / 64 - 1)
    }

    /// Adds the key `key` of table `table`.
    package mutating func insert(table: Int, key: UnsafeRawBufferPointer) {
        insert(hash: Self.hash(table: table, key: key))
    }

    /// Adds the key whose ``hash(table:key:)`` is `hash`.
    package mutating func insert(hash: UInt64) {
        words[Int(hash >> 12 & mask)] |= Self.bits(hash)
    }

    /// False when `key` of table `table` was never inserted.
    package func mayContain(table: Int, key: UnsafeRawBufferPointer) -> Bool {
        mayContain(hash: Self.hash(table: table, key: key))
    }

    /// False when no key whose ``hash(table:key:)`` is `hash` was inserted.
    package func mayContain(hash: UInt64) -> Bool {
        let bits = Self.bits(hash)
        return words[Int(hash >> 12 & mask)] & bits == bits
    }

    /// The two bits of a key in its word: from the hash's lowest 12 bits.
    private static func bits(_ hash: UInt64) -> UInt64 {
        1 << (hash & 63) | 1 << (hash >> 6 & 63)
    }

    /// The hash of key `key` of table `table`: the key's bytes read 8 at a
    /// time (the last word overlapping the one
    /// before; a key under 8 bytes as two overlapping halves or three bytes),
    /// each word folded in by a multiply, the length with the table first;
    /// then a finalizer that makes every bit depend on every byte.
    /// Callers that look a key up elsewhere after a "maybe" reuse it.
    package static func hash(table: Int, key: UnsafeRawBufferPointer) -> UInt64 {
        let multiplier: UInt64 = 0x9e37_79b9_7f4a_7c15
        let count = key.count
        var hash = (UInt64(truncatingIfNeeded: table) << 32 | UInt64(count)) &* multiplier
        func fold(_ word: UInt64) {
            hash = (hash ^ word) &* multiplier
            hash ^= hash >> 29
        }
        if count >= 8 {
            var offset = 0
            while offset + 8 < count {
                fold(key.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            fold(key.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        } else if count >= 4 {
            let first = key.loadUnaligned(as: UInt32.self)
            let last = key.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            fold(UInt64(first) << 32 | UInt64(last))
        } else if count > 0 {
            fold(UInt64(key[0]) << 16 | UInt64(key[count / 2]) << 8 | UInt64(key[count - 1]))
        }
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        return hash ^ hash >> 33
    }
}
