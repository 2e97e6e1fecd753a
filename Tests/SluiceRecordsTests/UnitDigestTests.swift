import Testing

@testable import SluiceRecords

/// The record digests of the nightly sync: keyed SHA-256, cut to 16 bytes.
@Suite struct UnitDigestTests {
    private let secret = (0..<64).map { UInt8($0) }

    /// The digest is SHA-256 over the secret and then the unit (the
    /// expected bytes from Python's hashlib), its first 16 bytes.
    @Test func matchesSHA256OfSecretThenUnit() {
        var hasher = UnitHasher(secret: secret)
        let digest = Array(#"{"id": 1}"#.utf8).withUnsafeBytes { hasher.digest($0) }
        #expect(hex(digest.bytes) == "9caf929d2b348a1532f8f4dbfaae72a3")
    }

    /// A short secret is padded with zeros to one block.
    @Test func shortSecretIsPadded() {
        var hasher = UnitHasher(secret: Array(secret.prefix(10)))
        let digest = hasher.digest(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(hex(digest.bytes) == "6b7501522a149d3da64641170bf1c40a")
    }

    /// A unit fed in pieces (a context, then bytes split anywhere) has the
    /// digest of the same bytes fed at once; another secret gives another.
    @Test func piecesAndSecretsDecide() {
        let unit = Array(#"<row Id="7" Body="a &amp; b"/>"#.utf8)
        var hasher = UnitHasher(secret: secret)
        let whole = unit.withUnsafeBytes { hasher.digest($0) }
        for cut in 0...unit.count {
            hasher.begin()
            unit.withUnsafeBytes { bytes in
                hasher.add(UnsafeRawBufferPointer(rebasing: bytes[..<cut]))
                hasher.add(UnsafeRawBufferPointer(rebasing: bytes[cut...]))
            }
            #expect(hasher.end() == whole)
        }
        var other = UnitHasher(secret: secret.map { $0 ^ 1 })
        #expect(unit.withUnsafeBytes { other.digest($0) } != whole)
    }

    /// Digests order as their bytes do, and survive a round trip through them.
    @Test func orderIsByteOrder() {
        var hasher = UnitHasher(secret: secret)
        let digests = (0..<200).map { number in Array("unit \(number)".utf8).withUnsafeBytes { hasher.digest($0) } }
        let byBytes = digests.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
        #expect(digests.sorted() == byBytes)
        for digest in digests {
            #expect(digest.bytes.withUnsafeBytes { UnitDigest(bytes: $0) } == digest)
        }
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
