import Foundation
import SluiceBatching
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

    /// A new store keeps no digests; a run's start makes a set that is
    /// invalid until its last save; saved units come back in digest order;
    /// removed ones go; a later run's start leaves them (or drops them when
    /// fresh); voiding marks the set invalid; all of it survives closing and
    /// reopening the store.
    @Test func digestSetLifecycle() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("d.sqlite").path
        var store = try SQLiteStore(path: path)
        #expect(try store.digestSet() == nil)
        try store.forEachUnit { _ in Issue.record("a new store has no units") }
        let secret = (0..<64).map { UInt8($0 * 3 % 256) }
        try store.startDigests(fingerprint: "mapping-1", secret: secret, fresh: true)
        #expect(try store.digestSet() == DigestSet(secret: secret, fingerprint: "mapping-1", valid: false, units: 0))

        let saved = (1...50).map { unit(UInt64($0), pinned: $0 % 10 == 0) }
        try store.saveUnits(Array(saved.prefix(30)), removing: [], last: false)
        #expect(try store.digestSet()?.valid == false)
        try store.saveUnits(Array(saved.dropFirst(30)), removing: [], last: true)
        #expect(try store.digestSet()?.valid == true)
        #expect(try units(store) == saved.sorted { $0.digest < $1.digest })

        try store.startDigests(fingerprint: "mapping-1", secret: secret, fresh: false)
        try store.saveUnits([unit(51)], removing: saved.prefix(20).map(\.digest), last: true)
        let kept = (Array(saved.dropFirst(20)) + [unit(51)]).sorted { $0.digest < $1.digest }
        #expect(try units(store) == kept)

        try store.voidDigests()
        store = try SQLiteStore(path: path)
        #expect(try store.digestSet()?.valid == false)
        #expect(try store.digestSet()?.units == kept.count)
        #expect(try units(store) == kept)

        try store.startDigests(fingerprint: "mapping-2", secret: secret, fresh: true)
        #expect(try store.digestSet() == DigestSet(secret: secret, fingerprint: "mapping-2", valid: false, units: 0))
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
