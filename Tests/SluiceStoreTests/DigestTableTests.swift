import Foundation
import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// The record digests a SQLite store keeps: made, read in digest order,
/// changed in proportion, voided and remade.
@Suite struct DigestTableTests {
    func unit(_ number: UInt64, pinned: Bool = false) -> StoredUnit {
        StoredUnit(
            digest: UnitDigest(high: number &* 0x9E37_79B9_7F4A_7C15, low: number), keys: Array("k\(number)".utf8),
            pinned: pinned)
    }

    func units(_ store: SQLiteStore) throws -> [StoredUnit] {
        var out: [StoredUnit] = []
        try store.forEachUnit { out.append($0) }
        return out
    }

    /// A new store keeps no digests; a reset makes a valid empty set with
    /// its secret and fingerprint; saved units come back in digest order;
    /// removed ones go; voiding keeps the units but marks the set invalid;
    /// a reset under another fingerprint empties it; all of it survives
    /// closing and reopening the store.
    @Test func digestSetLifecycle() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("d.sqlite").path
        var store = try SQLiteStore(path: path)
        #expect(try store.digestSet() == nil)
        try store.forEachUnit { _ in Issue.record("a new store has no units") }
        let secret = (0..<64).map { UInt8($0 * 3 % 256) }
        try store.resetDigests(fingerprint: "mapping-1", secret: secret)
        #expect(try store.digestSet() == DigestSet(secret: secret, fingerprint: "mapping-1", valid: true, units: 0))

        let saved = (1...50).map { unit(UInt64($0), pinned: $0 % 10 == 0) }
        try store.saveUnits(saved, removing: [])
        #expect(try units(store) == saved.sorted { $0.digest < $1.digest })
        try store.saveUnits([unit(51)], removing: saved.prefix(20).map(\.digest))
        let kept = (Array(saved.dropFirst(20)) + [unit(51)]).sorted { $0.digest < $1.digest }
        #expect(try units(store) == kept)

        try store.voidDigests()
        store = try SQLiteStore(path: path)
        #expect(try store.digestSet()?.valid == false)
        #expect(try store.digestSet()?.units == kept.count)
        #expect(try units(store) == kept)

        try store.resetDigests(fingerprint: "mapping-2", secret: secret)
        #expect(try store.digestSet() == DigestSet(secret: secret, fingerprint: "mapping-2", valid: true, units: 0))
        #expect(try units(store).isEmpty)
    }

    /// Voiding a store that never kept digests does nothing and makes none.
    @Test func voidingNothingMakesNothing() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("d.sqlite").path
        let store = try SQLiteStore(path: path)
        try store.voidDigests()
        #expect(try store.digestSet() == nil)
    }
}
