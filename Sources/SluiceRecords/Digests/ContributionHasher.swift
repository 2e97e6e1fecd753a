/// Hashes what one unit contributes to one key (docs/record-digests.md):
/// SipHash-2-4 under 128 bits derived from the store's secret, 64 bits out.
///
/// Why SipHash and not the units' SHA-256: a contribution is a row of a few
/// dozen bytes, and SHA-256 spends a whole compression (two with its
/// padding) and a 112-byte state copy on each; SipHash-2-4 spends about two
/// rounds per 8 bytes. It is a pseudorandom function keyed by the secret, so
/// someone who plants a record but never sees the store cannot make its
/// contribution to a key collide with another unit's: each try succeeds with
/// probability 2⁻⁶⁴, the same as the 8 bytes of keyed SHA-256 it replaces.
package struct ContributionHasher {
    private let key0: UInt64
    private let key1: UInt64

    /// A hasher whose key is the first 16 bytes of the units' keyed digest
    /// (``UnitHasher``) of a fixed label: the secret decides it, and no unit's
    /// digest reveals it.
    package init(secret: [UInt8]) {
        var units = UnitHasher(secret: secret)
        let derived = Array("sluice contribution key".utf8).withUnsafeBytes { units.digest($0) }
        key0 = derived.high
        key1 = derived.low
    }

    /// A hasher under the SipHash key (`key0`, `key1`), as the reference
    /// reads its 16 key bytes little-endian.
    package init(key0: UInt64, key1: UInt64) {
        self.key0 = key0
        self.key1 = key1
    }

    /// SipHash-2-4 of `bytes`. O(bytes), no allocation.
    package func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var state = (
            key0 ^ 0x736f_6d65_7073_6575, key1 ^ 0x646f_7261_6e64_6f6d, key0 ^ 0x6c79_6765_6e65_7261,
            key1 ^ 0x7465_6462_7974_6573
        )
        let whole = bytes.count & ~7
        var position = 0
        while position < whole {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            state.3 ^= word
            Self.rounds(2, &state)
            state.0 ^= word
            position += 8
        }
        var last = UInt64(truncatingIfNeeded: bytes.count) << 56
        for index in 0..<(bytes.count - whole) { last |= UInt64(bytes[whole + index]) << (8 * UInt64(index)) }
        state.3 ^= last
        Self.rounds(2, &state)
        state.0 ^= last
        state.2 ^= 0xff
        Self.rounds(4, &state)
        return state.0 ^ state.1 ^ state.2 ^ state.3
    }

    private static func rounds(_ count: Int, _ v: inout (UInt64, UInt64, UInt64, UInt64)) {
        for _ in 0..<count {
            v.0 &+= v.1
            v.1 = v.1.rotated(13) ^ v.0
            v.0 = v.0.rotated(32)
            v.2 &+= v.3
            v.3 = v.3.rotated(16) ^ v.2
            v.0 &+= v.3
            v.3 = v.3.rotated(21) ^ v.0
            v.2 &+= v.1
            v.1 = v.1.rotated(17) ^ v.2
            v.2 = v.2.rotated(32)
        }
    }
}

extension UInt64 {
    fileprivate func rotated(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
