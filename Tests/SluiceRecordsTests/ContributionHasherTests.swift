import Testing

@testable import SluiceRecords

/// The contributions' hash: SipHash-2-4, keyed from the store's secret.
@Suite struct ContributionHasherTests {
    /// Key 00 01 … 0f gives the reference outputs of SipHash-2-4 (the
    /// paper's appendix and its test vectors): the empty message, the
    /// 15-byte message 00 … 0e, and the 8-byte message 00 … 07.
    @Test func matchesTheReferenceVectors() {
        let hasher = ContributionHasher(key0: 0x0706_0504_0302_0100, key1: 0x0f0e_0d0c_0b0a_0908)
        #expect(hasher.hash(UnsafeRawBufferPointer(start: nil, count: 0)) == 0x726f_db47_dd0e_0e31)
        #expect((0..<15).map { UInt8($0) }.withUnsafeBytes { hasher.hash($0) } == 0xa129_ca61_49be_45e5)
        #expect((0..<8).map { UInt8($0) }.withUnsafeBytes { hasher.hash($0) } == 0x93f5_f579_9a93_2462)
    }

    /// The secret decides the hash: another secret, another value; the same
    /// secret, the same value.
    @Test func theSecretDecides() {
        let secret = (0..<64).map { UInt8($0) }
        let row = Array(#"{"id":7,"login":"user7"}"#.utf8)
        let one = row.withUnsafeBytes { ContributionHasher(secret: secret).hash($0) }
        #expect(row.withUnsafeBytes { ContributionHasher(secret: secret).hash($0) } == one)
        #expect(row.withUnsafeBytes { ContributionHasher(secret: secret.map { $0 ^ 1 }).hash($0) } != one)
    }
}
