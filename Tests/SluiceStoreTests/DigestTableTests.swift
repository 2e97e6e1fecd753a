import CSluiceSQLite3
import Foundation
import SluiceBatching
import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// The record digests a SQLite store and a PostgreSQL database keep: made,
/// read in digest order, changed in proportion, voided and remade.
@Suite struct DigestTableTests {
    /// The stores under test: SQLite, and PostgreSQL when a server started.
    enum Kind: CaseIterable {
        case sqlite, postgres
    }
    static let kinds = PostgresTestServer.enabled ? Kind.allCases : [.sqlite]

    /// A way to open one new store again and again (each call a new
    /// connection to it).
    func opener(_ kind: Kind) throws -> () throws -> any ImportStore {
        switch kind {
        case .sqlite:
            let path = TestPaths.temporaryDirectory().appendingPathComponent("d.sqlite").path
            return { try SQLiteStore(path: path) }
        case .postgres:
            let database = try PostgresTestServer.require().newDatabase()
            return { try PostgresStore(conninfo: database) }
        }
    }

    func unit(_ number: UInt64, pinned: Bool = false) -> StoredUnit {
        StoredUnit(
            digest: UnitDigest(high: number &* 0x9E37_79B9_7F4A_7C15, low: number), keys: Array("k\(number)".utf8),
            pinned: pinned)
    }

    func units(_ store: any ImportStore) throws -> [StoredUnit] {
        var out: [StoredUnit] = []
        try store.forEachUnit { out.append($0) }
        return out
    }

    /// A new store keeps no digests; a run's start makes a set that is
    /// invalid until its last save; saved units come back in digest order;
    /// removed ones go; a later run's start leaves them (or drops them when
    /// fresh); voiding marks the set invalid; all of it survives closing and
    /// reopening the store.
    @Test(arguments: kinds) func digestSetLifecycle(kind: Kind) throws {
        let open = try opener(kind)
        var store = try open()
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
        store = try open()
        #expect(try store.digestSet()?.valid == false)
        #expect(try store.digestSet()?.units == kept.count)
        #expect(try units(store) == kept)

        try store.startDigests(fingerprint: "mapping-2", secret: secret, fresh: true)
        #expect(try store.digestSet() == DigestSet(secret: secret, fingerprint: "mapping-2", valid: false, units: 0))
        #expect(try units(store).isEmpty)
    }

    /// Voiding a store that never kept digests does nothing and makes none.
    @Test(arguments: kinds) func voidingNothingMakesNothing(kind: Kind) throws {
        let store = try opener(kind)()
        try store.voidDigests()
        #expect(try store.digestSet() == nil)
    }

    /// Digests that differ in their first byte above 0x7F and in their last
    /// come back in ``UnitDigest``'s order (as unsigned bytes), a unit saved
    /// twice is kept once with its last keys, and the count follows.
    @Test(arguments: kinds) func unitsComeBackInDigestOrder(kind: Kind) throws {
        let store = try opener(kind)()
        try store.startDigests(fingerprint: "f", secret: [1, 2, 3], fresh: true)
        let digests = [
            UnitDigest(high: 0xFF00_0000_0000_0000, low: 0), UnitDigest(high: 0x7F00_0000_0000_0000, low: 1),
            UnitDigest(high: 0x8000_0000_0000_0000, low: 0), UnitDigest(high: 0, low: 0xFF),
            UnitDigest(high: 0, low: 0x01), UnitDigest(high: 0x7F00_0000_0000_0000, low: 0xFFFF_FFFF_FFFF_FFFF),
        ]
        let saved = digests.enumerated().map { StoredUnit(digest: $1, keys: [UInt8($0)], pinned: $0 == 2) }
        try store.saveUnits(saved, removing: [], last: false)
        try store.saveUnits([StoredUnit(digest: digests[0], keys: [], pinned: true)], removing: [], last: true)
        var expected = saved
        expected[0] = StoredUnit(digest: digests[0], keys: [], pinned: true)
        #expect(try units(store) == expected.sorted { $0.digest < $1.digest })
        #expect(try store.digestSet()?.units == digests.count)
        #expect(try store.digestSet()?.secret.prefix(3) == [1, 2, 3])
    }

    /// A SQLite set keeps its units and bytes in its state row, equal to a
    /// count over its pages after saves, removals in the middle and fresh
    /// starts, so that a run's start and `sluice status` read a few rows:
    /// before, both summed every page (139 MB at 2,000,000 events). A state
    /// row an older sluice made or replaced, without them, is counted, and
    /// gets them at the next start.
    @Test func theSetsSumsAreKeptInItsRow() throws {
        let path = TestPaths.temporaryDirectory().appendingPathComponent("d.sqlite").path
        var store = try SQLiteStore(path: path)
        func expectKept(_ when: String, units: Int) throws {
            let row = StoreReader(path).rows("SELECT units, bytes FROM _sluice_digest_state").first ?? []
            var counted = (units: 0, bytes: Int64(0))
            try store.forEachUnit { unit in
                counted.units += 1
                counted.bytes += Int64(21 + unit.keys.count)
            }
            #expect(row == ["\(counted.units)", "\(counted.bytes)"], "\(when): \(row), counted \(counted)")
            #expect(counted.units == units, "\(when): \(row)")
            let status = try SQLiteStore.digestStatus(store.connection)
            #expect(
                status?.units == units && status?.bytes == counted.bytes, "\(when): \(String(describing: status))")
            #expect(try store.digestSet()?.units == units, "\(when)")
        }
        try store.startDigests(fingerprint: "f", secret: [1], fresh: true)
        try expectKept("a new set", units: 0)
        let saved = (1...50_000).map { unit(UInt64($0)) }
        try store.saveUnits(Array(saved.prefix(30_000)), removing: [], last: false)
        try store.saveUnits(Array(saved.dropFirst(30_000)), removing: [], last: true)
        try expectKept("saved", units: 50_000)
        try store.startDigests(fingerprint: "f", secret: [1], fresh: false)
        let changed = StoredUnit(digest: saved[7].digest, keys: Array("longer keys".utf8), pinned: true)
        let never = UnitDigest(high: 3, low: 3)
        try store.saveUnits(
            [unit(60_001), changed], removing: saved.suffix(1_000).map(\.digest) + [never], last: true)
        try expectKept("changed in the middle", units: 49_001)

        store = try SQLiteStore(path: path)
        var misses: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(store.connection.handle, SQLITE_DBSTATUS_CACHE_MISS, &misses, &highest, 1)
        _ = try store.digestSet()
        _ = try SQLiteStore.digestStatus(store.connection)
        sqlite3_db_status(store.connection.handle, SQLITE_DBSTATUS_CACHE_MISS, &misses, &highest, 0)
        let bytes = StoreReader(path).value("SELECT sum(length(units)) FROM _sluice_unit_pages") ?? "?"
        #expect(misses < 10, "pages read for the set's sums: \(misses), with \(bytes) bytes of units in the pages")

        // An older sluice's set is all in its pages: it keeps no changes.
        let kept = try units(store)
        try store.startDigests(fingerprint: "f", secret: [1], fresh: true)
        try store.saveUnits(kept, removing: [], last: true)
        try store.connection.execute(
            "ALTER TABLE _sluice_digest_state DROP COLUMN units; ALTER TABLE _sluice_digest_state DROP COLUMN bytes",
            "making an older state row")
        #expect(try store.digestSet()?.units == 49_001)
        #expect(try SQLiteStore.digestStatus(store.connection)?.units == 49_001)
        try store.startDigests(fingerprint: "f", secret: [1], fresh: false)
        try expectKept("an older state row, at the next start", units: 49_001)
        // An older sluice that starts digests replaces the row, without the sums.
        try store.connection.execute("UPDATE _sluice_digest_state SET units = NULL, bytes = NULL", "an older start")
        #expect(try store.digestSet()?.units == 49_001)
        try store.startDigests(fingerprint: "f", secret: [1], fresh: false)
        try expectKept("a row an older sluice replaced, at the next start", units: 49_001)
        try store.startDigests(fingerprint: "g", secret: [1], fresh: true)
        try expectKept("a fresh start", units: 0)
    }

    /// A reader of the units that uses the store as it goes (a run that
    /// sweeps records the skipped keys as seen from the join) still meets
    /// every unit, in digest order, across PostgreSQL's reads of
    /// ``PostgresStore/unitsPerRead``: before, the first statement sent
    /// during the one `COPY` made libpq drop the rest of its rows, and a
    /// next day of more than 100,000 kept records skipped only the first
    /// 100,000 and kept stale units whose records the next run then skipped
    /// without writing their rows.
    @Test(arguments: kinds) func aReaderThatUsesTheStoreMeetsEveryUnit(kind: Kind) throws {
        let store = try opener(kind)()
        try store.startDigests(fingerprint: "f", secret: [1], fresh: true)
        let saved = (1...25_001).map { unit(UInt64($0)) }
        try store.saveUnits(saved, removing: [], last: true)
        var met: [StoredUnit] = []
        var counts: [Int?] = []
        try store.forEachUnit { (unit) throws(StoreError) in
            if met.count % 5_000 == 0 { counts.append(try store.digestSet()?.units) }
            met.append(unit)
        }
        let inOrder = met == saved.sorted { $0.digest < $1.digest }
        #expect(met.count == saved.count && inOrder, "\(met.count) units met, in digest order: \(inOrder)")
        #expect(counts == Array(repeating: saved.count, count: 6))
    }

    /// In PostgreSQL another importer's run that overlaps a digest run (it
    /// began after it, or is still running, or ended after it began) keeps
    /// the digest run's last save from marking the set valid: its writes may
    /// have changed rows the units describe.
    @Test(.enabled(if: PostgresTestServer.enabled)) func anOverlappingRunLeavesTheSetInvalid() throws {
        let database = try PostgresTestServer.require().newDatabase()
        let unit = StoredUnit(digest: UnitDigest(high: 1, low: 2), keys: [3], pinned: false)
        for overlap in ["none", "ended during it", "still running"] {
            let (digests, other) = (try PostgresStore(conninfo: database), try PostgresStore(conninfo: database))
            if overlap == "still running" { _ = try other.beginRun(inputs: ["b"], options: "{}", resumeCommand: nil) }
            let run = try digests.beginRun(inputs: ["a"], options: "{}", resumeCommand: nil)
            try digests.startDigests(fingerprint: "f", secret: [1], fresh: true)
            if overlap == "ended during it" {
                let id = try other.beginRun(inputs: ["b"], options: "{}", resumeCommand: nil)
                try other.finishRun(id, status: .completed, records: 0, counts: "{}", error: nil)
            }
            try digests.saveUnits([unit], removing: [], last: true)
            #expect(try digests.digestSet()?.valid == (overlap == "none"), "\(overlap)")
            try digests.finishRun(run, status: .completed, records: 1, counts: "{}", error: nil)
        }
    }
}
