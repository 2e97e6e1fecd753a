import CSluiceCrypto

/// The digest of one unit of input (docs/record-digests.md): the first 16
/// bytes of SHA-256 over the store's secret, then the unit's context and its
/// bytes. Two words, compared as the bytes they hold (big-endian), so that an
/// ordered table of digests sorts as its bytes do.
package struct UnitDigest: Hashable, Comparable, Sendable {
    package var high: UInt64
    package var low: UInt64

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The digest whose 16 bytes are `bytes` (at least 16 of them).
    package init(bytes: UnsafeRawBufferPointer) {
        high = UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
        low = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// The 16 bytes, as a store keeps them.
    package var bytes: [UInt8] {
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Array($0) }
    }

    package static func < (left: UnitDigest, right: UnitDigest) -> Bool {
        left.high != right.high ? left.high < right.high : left.low < right.low
    }
}

/// Hashes units under one store's secret. The secret is one SHA-256 block
/// (64 bytes), absorbed once: each unit starts from a copy of that state, so
/// the secret costs nothing per unit.
///
/// Why keyed SHA-256: a digest must not let anyone who writes one record of
/// a public dump make a changed record look unchanged. Without the secret
/// nobody can search for two units with one digest, so 128 bits of it are
/// enough; XXH3, ten times faster, is not collision-resistant even seeded.
/// Cost: one core of the project's 2-core machine (SHA-NI) hashes about
/// 1.5 GB/s through OpenSSL.
package struct UnitHasher {
    /// The bytes of a secret.
    package static let secretBytes = 64

    private var keyed = SHA256_CTX()
    private var current = SHA256_CTX()

    /// A hasher under `secret` (``secretBytes`` bytes; a shorter one is
    /// padded with zeros, a longer one cut).
    package init(secret: [UInt8]) {
        var block = Array(secret.prefix(Self.secretBytes))
        block += Array(repeating: 0, count: Self.secretBytes - block.count)
        SHA256_Init(&keyed)
        block.withUnsafeBytes { _ = SHA256_Update(&keyed, $0.baseAddress, $0.count) }
        current = keyed
    }

    /// Starts the next unit.
    package mutating func begin() { current = keyed }

    /// Adds the next bytes of the unit (its context first, then its bytes).
    package mutating func add(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        SHA256_Update(&current, base, bytes.count)
    }

    /// Ends the unit: its digest.
    package mutating func end() -> UnitDigest {
        var full = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &full) { raw in
            _ = SHA256_Final(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), &current)
        }
        return withUnsafeBytes(of: full) { UnitDigest(bytes: $0) }
    }

    /// The digest of one unit given whole.
    package mutating func digest(_ bytes: UnsafeRawBufferPointer) -> UnitDigest {
        begin()
        add(bytes)
        return end()
    }
}
