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

    /// Later runs (each its own start, as a next day's) write their changes
    /// beside the pages and leave the pages as they were, until the changes
    /// outgrow ``SQLiteStore/changesFoldShare`` of the set: then they are
    /// written into the pages and the changes table is emptied. Removals of
    /// units in the pages, of units only the changes hold, of digests the
    /// set never held, a digest removed and saved again in one save and
    /// units saved again over removed ones leave, after every save, what a
    /// model of the set holds, with its units and bytes in the state row.
    @Test func changesBesideThePagesKeepTheSet() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("d.sqlite").path
        var store = try SQLiteStore(path: path)
        try store.startDigests(fingerprint: "f", secret: Array(repeating: 7, count: 64), fresh: true)
        var model: [UnitDigest: StoredUnit] = [:]
        let first = (1...2_000).map { unit(UInt64($0)) }
        for unit in first { model[unit.digest] = unit }
        try store.saveUnits(first, removing: [], last: true)
        let reader = StoreReader(path)
        func pages() -> [[String?]] { reader.rows("SELECT first, units FROM _sluice_unit_pages ORDER BY first") }
        func changes() -> Int {
            Int(reader.value("SELECT coalesce(sum(count), 0) FROM _sluice_unit_changes") ?? "") ?? -1
        }
        var written = pages()
        #expect(changes() == 0)

        var generator = SplitMix(seed: 28)
        var removedBefore: [UnitDigest] = []
        var folded = false
        for round in 0..<8 {
            store = try SQLiteStore(path: path)
            try store.startDigests(fingerprint: "f", secret: Array(repeating: 7, count: 64), fresh: false)
            let present = model.keys.sorted()
            var removed = (0..<30).map { _ in present[Int(generator.next() % UInt64(present.count))] }
            removed.append(UnitDigest(high: UInt64(round), low: 99))
            var saved = (0..<40).map { unit(UInt64(100_000 * (round + 1) + $0)) }
            let edited = present[Int(generator.next() % UInt64(present.count))]
            removed.append(edited)
            saved.append(StoredUnit(digest: edited, keys: Array("edited \(round)".utf8), pinned: round % 2 == 0))
            saved += removedBefore.prefix(3).map { StoredUnit(digest: $0, keys: Array("back".utf8), pinned: false) }
            for digest in removed { model[digest] = nil }
            for unit in saved { model[unit.digest] = unit }
            removedBefore = removed
            let halves = saved.count / 2
            try store.saveUnits(Array(saved.prefix(halves)), removing: removed, last: false)
            try store.saveUnits(Array(saved.dropFirst(halves)), removing: [], last: true)
            #expect(try units(store) == model.values.sorted { $0.digest < $1.digest }, "round \(round)")
            let sums = try #require(sqliteDigestSums(path))
            #expect(sums.counted == sums.kept, "round \(round)")
            #expect(sums.kept.units == model.count, "round \(round)")
            if changes() == 0 {
                folded = true
                #expect(pages() != written, "round \(round): folded, the pages should hold the changes")
                written = pages()
            } else {
                #expect(pages() == written, "round \(round): a save beside the pages rewrote them")
                #expect(changes() * SQLiteStore.changesFoldShare <= model.count, "round \(round)")
            }
        }
        #expect(folded, "the changes never outgrew their share")
    }

    /// Units with long keys (entries of 141 to 320 bytes, and one of 5,000)
    /// are packed by bytes as well as by count: in stores of 4 and 16 KiB
    /// pages every page but a lone long entry's holds at most
    /// ``UnitPage/rowBytes(pageSize:)`` bytes, so that no row spills onto
    /// an overflow page (SQLite's `dbstat` agrees where the library has it),
    /// the pages are about even, and the set reads back whole, before and
    /// after changes scattered over it.
    @Test(arguments: [4_096, 16_384]) func pagesHoldWholeOnTheirBTreePage(pageSize: Int) throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("d.sqlite").path
        var options = StoreOptions()
        options.pageSize = pageSize
        let store = try SQLiteStore(path: path, options: options)
        try store.startDigests(fingerprint: "f", secret: Array(repeating: 7, count: 64), fresh: true)
        var model: [UnitDigest: StoredUnit] = [:]
        let first = (1...3_000).map { unit(UInt64($0), keys: String(repeating: "x", count: 120 + $0 % 180)) }
            .sorted { $0.digest < $1.digest }
        for unit in first { model[unit.digest] = unit }
        try store.saveUnits(first, removing: [], last: true)
        let long = StoredUnit(
            digest: UnitDigest(high: 1 << 62, low: 5), keys: Array(repeating: 9, count: 4_979), pinned: false)
        let edited = first.enumerated().filter { $0.offset % 97 == 0 }.map {
            StoredUnit(digest: $0.element.digest, keys: Array("edited".utf8), pinned: true)
        }
        for unit in edited + [long] { model[unit.digest] = unit }
        let reopened = try SQLiteStore(path: path, options: options)
        try reopened.startDigests(fingerprint: "f", secret: Array(repeating: 7, count: 64), fresh: false)
        try reopened.saveUnits((edited + [long]).sorted { $0.digest < $1.digest }, removing: [], last: true)
        #expect(try units(reopened) == model.values.sorted { $0.digest < $1.digest })

        let reader = StoreReader(path)
        #expect(reader.value("PRAGMA page_size") == String(pageSize))
        let limit = UnitPage.rowBytes(pageSize: pageSize)
        for table in ["_sluice_unit_pages", "_sluice_unit_changes"] {
            let rows = reader.rows("SELECT count, length(units) FROM \(table)").map {
                ($0[0].flatMap { Int($0) } ?? -1, $0[1].flatMap { Int($0) } ?? -1)
            }
            #expect(
                rows.allSatisfy { $0.0 > 0 && $0.0 <= UnitPage.capacity && ($0.1 <= limit || $0.0 == 1) }, "\(table)")
        }
        let pages = reader.rows("SELECT length(units) FROM _sluice_unit_pages").compactMap { $0[0].flatMap { Int($0) } }
        #expect(pages.count <= 2 * pages.reduce(0, +) / limit + 2, "pages less than half full on average")
        let overflow = reader.value(
            "SELECT count(*) FROM dbstat WHERE name = '_sluice_unit_pages' AND pagetype = 'overflow'")
        // The lone 5,000-byte entry's row takes one or two overflow pages.
        #expect(
            overflow.map { $0.hasPrefix("error: no such table") || (Int($0) ?? 99) <= 2 } == true, "\(overflow ?? "")")
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
