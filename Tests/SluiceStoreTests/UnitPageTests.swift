import Foundation
import SluiceBatching
import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// The record digests packed in pages of ``UnitPage/capacity`` units: a
/// first save writes full pages, changes anywhere in the set rewrite the
/// pages they fall in, and the set read back is the set a model keeps.
@Suite struct UnitPageTests {
    func unit(_ number: UInt64, keys: String = "", pinned: Bool = false) -> StoredUnit {
        StoredUnit(
            digest: UnitDigest(high: number &* 0x9E37_79B9_7F4A_7C15, low: number),
            keys: Array("k\(number)\(keys)".utf8), pinned: pinned)
    }

    func units(_ store: SQLiteStore) throws -> [StoredUnit] {
        var out: [StoredUnit] = []
        try store.forEachUnit { out.append($0) }
        return out
    }

    func pageCounts(_ path: String) -> [Int] {
        StoreReader(path).rows("SELECT count FROM _sluice_unit_pages ORDER BY first").map { Int($0[0] ?? "") ?? -1 }
    }

    /// 1,000 units saved in two calls fill pages of more than half and at
    /// most ``UnitPage/capacity`` units (the second call's units merged into
    /// the last page of the first, so about 33 pages); then removals, replacements
    /// and additions scattered over the set, in several calls, leave exactly
    /// what a model of the set holds, in digest order, with every page at
    /// most full and none empty; the count the set reports follows.
    @Test func scatteredChangesKeepTheSet() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("d.sqlite").path
        let store = try SQLiteStore(path: path)
        try store.startDigests(fingerprint: "f", secret: Array(repeating: 7, count: 64), fresh: true)
        var model: [UnitDigest: StoredUnit] = [:]
        let first = (1...1_000).map { unit(UInt64($0)) }.sorted { $0.digest < $1.digest }
        for unit in first { model[unit.digest] = unit }
        try store.saveUnits(Array(first.prefix(600)), removing: [], last: false)
        try store.saveUnits(Array(first.dropFirst(600)), removing: [], last: true)
        #expect(try units(store) == first)
        let counts = pageCounts(path)
        #expect(counts.reduce(0, +) == 1_000 && counts.count <= 1_000 / UnitPage.capacity + 2)
        #expect(counts.allSatisfy { $0 > UnitPage.capacity / 2 && $0 <= UnitPage.capacity })

        var generator = SplitMix(seed: 27)
        for round in 0..<4 {
            let present = model.keys.sorted()
            let removed = (0..<40).map { _ in present[Int(generator.next() % UInt64(present.count))] }
            var saved: [StoredUnit] = []
            for _ in 0..<30 {
                let digest = present[Int(generator.next() % UInt64(present.count))]
                saved.append(StoredUnit(digest: digest, keys: Array("round \(round)".utf8), pinned: true))
            }
            saved += (0..<50).map { unit(UInt64(10_000 * (round + 1) + $0)) }
            for digest in removed { model[digest] = nil }
            for unit in saved { model[unit.digest] = unit }
            try store.saveUnits(saved, removing: removed, last: true)
            #expect(try units(store) == model.values.sorted { $0.digest < $1.digest })
            #expect(pageCounts(path).allSatisfy { $0 > 0 && $0 <= UnitPage.capacity })
            #expect(try store.digestSet()?.units == model.count)
        }
    }

    /// A store whose digests were kept one unit a row (digest version 1)
    /// loses that table when a run starts, and reports no units before.
    @Test func theOldLayoutIsDropped() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("d.sqlite").path
        let secret = Array(repeating: UInt8(3), count: 64)
        do {
            let store = try SQLiteStore(path: path)
            try store.startDigests(fingerprint: "1 old", secret: secret, fresh: true)
        }
        let reader = StoreReader(path, writable: true)
        _ = reader.rows("DROP TABLE _sluice_unit_pages")
        _ = reader.rows(
            "CREATE TABLE _sluice_units (digest BLOB PRIMARY KEY, keys BLOB NOT NULL, pinned INTEGER NOT NULL "
                + "DEFAULT 0) WITHOUT ROWID")
        _ = reader.rows("INSERT INTO _sluice_units VALUES (x'00112233445566778899aabbccddeeff', x'01', 0)")
        _ = reader.rows("UPDATE _sluice_digest_state SET valid = 1")
        let store = try SQLiteStore(path: path)
        #expect(try store.digestSet() == DigestSet(secret: secret, fingerprint: "1 old", valid: true, units: 0))
        #expect(try units(store).isEmpty)
        try store.startDigests(fingerprint: "2 new", secret: secret, fresh: true)
        #expect(reader.rows("SELECT name FROM sqlite_master WHERE name = '_sluice_units'").isEmpty)
    }
}
